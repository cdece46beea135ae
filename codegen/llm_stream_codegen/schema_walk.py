"""Walking JSON Schema documents: every subschema with its pointer, and `$ref` resolution.

Shared by the check (refs resolve, rule IDs exist) and the renderers (field tables), so that all
agree on what counts as a subschema of 2020-12 and on how a ref is looked up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = (
    "items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains",
)


def escape_token(token: str) -> str:
    """A member name as one reference token of a JSON pointer (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """The member name one reference token of a JSON pointer stands for."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer_tokens(pointer: str) -> list[str]:
    """The member names and indexes a JSON pointer ("" or "/a/b") steps through."""
    return [unescape_token(token) for token in pointer.split("/")[1:]]


def iter_nodes(
    schema: Mapping[str, Any], pointer: str = ""
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Yield (JSON pointer, subschema) for `schema` and every object subschema inside it."""
    yield pointer, schema
    for key in _SCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            if isinstance(sub, Mapping):
                yield from iter_nodes(sub, f"{pointer}/{key}/{escape_token(name)}")
    for key in _SCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key) or ()):
            if isinstance(sub, Mapping):
                yield from iter_nodes(sub, f"{pointer}/{key}/{i}")
    for key in _SCHEMA_VALUES:
        sub = schema.get(key)
        if isinstance(sub, Mapping):
            yield from iter_nodes(sub, f"{pointer}/{key}")


def follow_pointer(document: Mapping[str, Any], fragment: str) -> Mapping[str, Any] | None:
    """The node at a JSON pointer fragment ("" or "/$defs/x"), or None."""
    node: Any = document
    for token in pointer_tokens(fragment):
        if not isinstance(node, Mapping) or token not in node:
            return None
        node = node[token]
    return node if isinstance(node, Mapping) else None


def split_ref(base_id: str, ref: str) -> tuple[str, str]:
    """(document $id, fragment) that `ref`, found in the document `base_id`, points to."""
    target, _, fragment = ref.partition("#")
    return (target or base_id), fragment


def resolve_ref(
    schemas: Mapping[str, Any], base_id: str, ref: str
) -> Mapping[str, Any] | None:
    """The subschema `ref` names, or None; `schemas` maps $id to a document or to a SchemaDoc."""
    doc_id, fragment = split_ref(base_id, ref)
    doc = schemas.get(doc_id)
    document = getattr(doc, "document", doc)
    return None if document is None else follow_pointer(document, fragment)


def envelope_constants(envelope: Mapping[str, Any]) -> tuple[object, object]:
    """The version every event carries (the `const` of `v`) and the largest seq (the least
    `maximum` under `seq`) that the envelope schema fixes, None for what it does not fix.

    The decoder's hot path checks these two without the validator, so they are taken from the
    schema rather than written again.
    """
    properties = envelope.get("properties") or {}
    version = (properties.get("v") or {}).get("const")
    maxima = [node["maximum"] for _, node in iter_nodes(properties.get("seq") or {})
              if type(node.get("maximum")) is int]
    return version, min(maxima, default=None)


def integer_members(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The top-level members that a schema types as integers, anywhere under the member's own
    schema (an `allOf` part included), sorted: the members whose integral numbers the decoder
    reads as integers (decision D-INTEGERS)."""
    found = set()
    parts = [schema, *(p for p in schema.get("allOf") or () if isinstance(p, Mapping))]
    for part in parts:
        for name, member in (part.get("properties") or {}).items():
            if isinstance(member, Mapping) and any(
                node.get("type") == "integer"
                or (isinstance(node.get("type"), list) and "integer" in node["type"])
                for _, node in iter_nodes(member)
            ):
                found.add(name)
    return tuple(sorted(found))
