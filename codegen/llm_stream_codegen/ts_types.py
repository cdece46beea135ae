"""TypeScript declarations of every structure, from the spec's schemas.

One declaration per schema document, named as the Python models are (`model_bundle.class_names`):
an interface for each object (its members, optional unless required, and an index signature,
since unknown members are kept), a union of string literals for each value registry, and each
event an interface extending the envelope with its `type` fixed. As in the models, the members a
conditional (`if`/`then`) adds are optional members, and the validators judge the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .model import ENVELOPE_ID, REGISTRY_URN, Spec
from .model_bundle import class_names
from .schema_walk import follow_pointer, split_ref
from .ts_literals import ts_literal, ts_property

__all__ = ["typescript_types"]

_SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
            "null": "null"}
_INDENT = "    "


def _comment(text: object, indent: str) -> list[str]:
    """A one-paragraph JSDoc comment, or nothing."""
    if not isinstance(text, str) or not text:
        return []
    return [f"{indent}/** {' '.join(text.replace('*/', '* /').split())} */"]


class _Declarations:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.names = class_names(spec)

    def _resolve(self, ref: str, base_id: str) -> tuple[str | None, Mapping[str, Any], str]:
        """(the name of a whole document, or None; the node; the $id it sits in)."""
        doc_id, fragment = split_ref(base_id, ref)
        document = self.spec.schemas[doc_id].document
        if not fragment:
            return self.names[doc_id], document, doc_id
        return None, follow_pointer(document, fragment) or {}, doc_id

    def type_of(self, node: object, base_id: str, indent: str) -> str:
        """The TypeScript type of the values a schema node describes."""
        if not isinstance(node, Mapping):
            return "unknown" if node is not False else "never"
        if isinstance(node.get("$ref"), str):
            name, target, doc_id = self._resolve(node["$ref"], base_id)
            return name or self.type_of(target, doc_id, indent)
        if "const" in node and not isinstance(node["const"], dict | list):
            return ts_literal(node["const"])
        if isinstance(node.get("enum"), list) and all(
            not isinstance(value, dict | list) for value in node["enum"]
        ):
            return " | ".join(ts_literal(value) for value in node["enum"])
        types = node.get("type")
        for part in node.get("allOf", ()):
            if types is None and isinstance(part, Mapping):
                types = part.get("type")
        if types is None:
            return self._object(node, base_id, indent) if "properties" in node else "unknown"
        alternatives = []
        for kind in [types] if isinstance(types, str) else types:
            if kind == "object":
                alternatives.append(self._object(node, base_id, indent))
            elif kind == "array":
                item = self.type_of(node.get("items", True), base_id, indent)
                alternatives.append(f"({item})[]" if " " in item and "{" not in item[:1]
                                    else f"{item}[]")
            else:
                alternatives.append(_SCALARS[kind])
        return " | ".join(alternatives)

    def members(
        self, node: Mapping[str, Any], base_id: str, indent: str
    ) -> Iterator[str]:
        """The member lines of an object type: its properties, those a conditional adds
        (optional), and the index signature that keeps unknown members."""
        required = set(node.get("required", ()))
        written: set[str] = set()
        properties = [(node, True)]
        for part in node.get("allOf", ()):
            then = part.get("then") if isinstance(part, Mapping) else None
            if isinstance(then, Mapping):
                branch = then
                if isinstance(then.get("$ref"), str):
                    branch = self._resolve(then["$ref"], base_id)[1]
                properties.append((branch, False))
        for holder, own in properties:
            for name, schema in (holder.get("properties") or {}).items():
                if name in written:
                    continue
                written.add(name)
                optional = "" if own and name in required else "?"
                yield from _comment(schema.get("description") if isinstance(schema, Mapping)
                                    else None, indent)
                kind = self.type_of(schema, base_id, indent)
                yield f"{indent}{ts_property(name)}{optional}: {kind};"
        yield f"{indent}[key: string]: unknown;"

    def _object(self, node: Mapping[str, Any], base_id: str, indent: str) -> str:
        inner = indent + _INDENT
        return "{\n" + "\n".join(self.members(node, base_id, inner)) + f"\n{indent}}}"

    def declaration(self, schema_id: str) -> list[str]:
        document = self.spec.schemas[schema_id].document
        name = self.names[schema_id]
        lines = _comment(document.get("description") or document.get("title"), "")
        if schema_id.startswith(REGISTRY_URN):
            return [*lines, f"export type {name} = {self.type_of(document, schema_id, '')};"]
        bases = [self._resolve(part["$ref"], schema_id)[0] for part in document.get("allOf", ())
                 if isinstance(part, Mapping) and isinstance(part.get("$ref"), str)]
        extends = f" extends {', '.join(b for b in bases if b)}" if any(bases) else ""
        return [*lines, f"export interface {name}{extends} {{",
                *self.members(document, schema_id, _INDENT), "}"]


def typescript_types(spec: Spec) -> str:
    """The declarations of every schema: value registries, the request's structures, the
    envelope and the events in registry order."""
    declarations = _Declarations(spec)
    events = [event.schema_id for event in spec.event_types]
    registries = [registry.schema_id for registry in spec.value_registries.values()]
    others = sorted((i for i in spec.schemas if i not in {*events, *registries, ENVELOPE_ID}),
                    key=lambda i: declarations.names[i])
    blocks = [declarations.declaration(i) for i in [*registries, *others, ENVELOPE_ID, *events]]
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"
