"""Where a schema node is, and what a `$ref` points to: the URIs and JSON pointers of the
validator compiler, and the index of every schema resource (`$id`) and anchor of the store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote, urljoin, urlsplit, uses_relative

from .schema_walk import escape_token, unescape_token


class SchemaCompileError(ValueError):
    """A schema the compiler refuses, with the $id of its resource and the pointer of the node."""

    def __init__(self, schema_id: str, pointer: str, problem: str) -> None:
        super().__init__(f"{schema_id}#{pointer}: {problem}")
        self.schema_id = schema_id
        self.pointer = pointer
        self.problem = problem


# Where subschemas sit: needed to find embedded resources ($id) and anchors.
SCHEMA_VALUED: Final = frozenset(
    {
        "additionalProperties",
        "items",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "contentSchema",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)

SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})

_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def defrag(uri: str) -> str:
    return uri.partition("#")[0]


def _join(base: str, ref: str) -> str | None:
    """Resolve ``ref`` against ``base``; None when a relative reference cannot be resolved."""
    if ref.startswith("#"):
        return defrag(base) + ref
    if _SCHEME.match(ref):
        return ref
    parts = urlsplit(base)
    if parts.scheme in uses_relative and parts.scheme:
        return urljoin(base, ref)
    return None


@dataclass(frozen=True, order=True)
class Loc:
    """A schema node's canonical location: its resource's URI and its pointer inside it."""

    base: str
    pointer: str

    def __str__(self) -> str:
        return f"{self.base}#{self.pointer}"

    def fail(self, problem: str) -> SchemaCompileError:
        return SchemaCompileError(self.base, self.pointer, problem)


def is_schema(value: object) -> bool:
    return isinstance(value, bool | Mapping)


class Index:
    """Every schema resource (including embedded ones) and anchor, by absolute URI."""

    def __init__(self, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        self.resources: dict[str, object] = {}
        self.anchors: dict[str, tuple[object, Loc]] = {}
        for key in sorted(schemas):
            document = schemas[key]
            uri = defrag(key)
            declared = document.get("$id") if isinstance(document, Mapping) else None
            base = uri
            if isinstance(declared, str):
                joined = _join(uri, declared)
                if joined is not None:
                    base = defrag(joined)
            self.resources[uri] = document
            self.resources[base] = document
            self._scan(document, base, "", root=True)

    def _scan(self, node: object, base: str, pointer: str, *, root: bool = False) -> None:
        if not isinstance(node, Mapping):
            return
        declared = node.get("$id")
        if isinstance(declared, str) and not root:
            joined = _join(base, declared)
            if joined is not None:
                base, pointer = defrag(joined), ""
                self.resources.setdefault(base, node)
        anchor = node.get("$anchor")
        if isinstance(anchor, str):
            self.anchors.setdefault(f"{base}#{anchor}", (node, Loc(base, pointer)))
        for key, value in node.items():
            here = f"{pointer}/{escape_token(key)}"
            if key in SCHEMA_VALUED:
                self._scan(value, base, here)
            elif key in SCHEMA_MAPS and isinstance(value, Mapping):
                for name, sub in value.items():
                    self._scan(sub, base, f"{here}/{escape_token(name)}")
            elif key in SCHEMA_LISTS and isinstance(value, list | tuple):
                for i, sub in enumerate(value):
                    self._scan(sub, base, f"{here}/{i}")

    def resolve(self, ref: str, at: Loc) -> tuple[object, Loc]:
        target = _join(at.base, ref)
        if target is None:
            raise at.fail(f"$ref {ref!r} is relative to a base URI that is not hierarchical")
        uri, _, fragment = target.partition("#")
        fragment = unquote(fragment)
        document = self.resources.get(uri)
        if document is None:
            raise at.fail(f"$ref {ref!r} does not resolve: no schema has the $id {uri!r}")
        if not fragment:
            return document, Loc(uri, "")
        if fragment.startswith("/"):
            return self._walk(document, uri, fragment, ref, at)
        found = self.anchors.get(f"{uri}#{fragment}")
        if found is None:
            raise at.fail(f"$ref {ref!r} does not resolve: no $anchor {fragment!r} in {uri}")
        return found

    def _walk(
        self, document: object, uri: str, fragment: str, ref: str, at: Loc
    ) -> tuple[object, Loc]:
        node, base, pointer, kind = document, uri, "", "schema"
        for raw in fragment[1:].split("/"):
            segment = unescape_token(raw)
            if isinstance(node, Mapping) and segment in node:
                node = node[segment]
            elif isinstance(node, list | tuple) and segment.isdigit() and int(segment) < len(node):
                node = node[int(segment)]
            else:
                raise at.fail(f"$ref {ref!r} does not resolve: no {segment!r} at {pointer!r}")
            pointer = f"{pointer}/{escape_token(segment)}"
            if kind == "schema":
                kind = (
                    "schema"
                    if segment in SCHEMA_VALUED
                    else "map"
                    if segment in SCHEMA_MAPS
                    else "list"
                    if segment in SCHEMA_LISTS
                    else "data"
                )
            elif kind in ("map", "list"):
                kind = "schema"
            if kind == "schema" and isinstance(node, Mapping) and isinstance(node.get("$id"), str):
                joined = _join(base, node["$id"])
                if joined is not None:
                    base, pointer = defrag(joined), ""
        if not is_schema(node):
            raise at.fail(f"$ref {ref!r} points at {type(node).__name__}, not at a schema")
        return node, Loc(base, pointer)


def child_loc(loc: Loc, node: object, *segments: str | int) -> Loc:
    """The location of a subschema of ``loc``; an embedded ``$id`` starts a new resource."""
    if isinstance(node, Mapping) and isinstance(node.get("$id"), str):
        joined = _join(loc.base, node["$id"])
        if joined is not None:
            return Loc(defrag(joined), "")
    return Loc(loc.base, loc.pointer + "".join(f"/{escape_token(str(s))}" for s in segments))
