"""Schemas that no instance can satisfy: bounds that cross, a const outside its own type or enum,
a required field whose schema is `false`.

Such a schema is valid JSON Schema, so the meta-schema lets it through; yet an event type
registered with one could never be sent, and the generated validator would refuse every event.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

from .schema_walk import iter_nodes

_BOUNDS = (
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
    ("minContains", "maxContains"),
)


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_type(value: Any, kind: str) -> bool:
    """Whether `value` is of JSON Schema type `kind` (1.0 counts as an integer, as in 2020-12)."""
    if kind == "integer":
        return _number(value) and float(value).is_integer()
    if kind == "number":
        return _number(value)
    if kind == "null":
        return value is None
    types = {"string": str, "boolean": bool, "object": Mapping, "array": list}
    return kind in types and isinstance(value, types[kind])


def _numeric_problems(node: Mapping[str, Any]) -> Iterator[str]:
    low, high = node.get("minimum"), node.get("maximum")
    low_x, high_x = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    if _number(low) and _number(high) and low > high:
        yield f"minimum {low} is above maximum {high}"
    if _number(low_x) and _number(high) and low_x >= high:
        yield f"exclusiveMinimum {low_x} leaves no number up to maximum {high}"
    if _number(low) and _number(high_x) and low >= high_x:
        yield f"minimum {low} leaves no number below exclusiveMaximum {high_x}"
    if _number(low_x) and _number(high_x) and low_x >= high_x:
        yield f"exclusiveMinimum {low_x} leaves no number below exclusiveMaximum {high_x}"


def _node_problems(node: Mapping[str, Any]) -> Iterator[str]:
    yield from _numeric_problems(node)
    for low_key, high_key in _BOUNDS:
        low, high = node.get(low_key), node.get(high_key)
        if _number(low) and _number(high) and low > high:
            yield f"{low_key} {low} is above {high_key} {high}"
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else None
    if "enum" in node and isinstance(node["enum"], list):
        allowed = [v for v in node["enum"] if kinds is None or any(_json_type(v, k) for k in kinds)]
        if not allowed:
            yield "no value of enum is of the schema's type" if node["enum"] else "enum is empty"
    if "const" in node:
        const = node["const"]
        if kinds is not None and not any(_json_type(const, k) for k in kinds):
            yield f"const {const!r} is not of the schema's type {node['type']!r}"
        if isinstance(node.get("enum"), list) and const not in node["enum"]:
            yield f"const {const!r} is not one of enum {node['enum']!r}"
    if node.get("not") in (True, {}):
        yield "not is true: nothing satisfies it"
    if any(sub is False for sub in node.get("allOf") or ()):
        yield "allOf holds the schema false"
    properties = node.get("properties")
    required = node.get("required")
    if isinstance(properties, Mapping) and isinstance(required, list):
        for name in required:
            if properties.get(name) is False:
                yield f"required field {name!r} has the schema false: it can never be present"
    most = node.get("maxProperties")
    if isinstance(required, list) and _number(most) and len(set(required)) > most:
        yield f"{len(set(required))} required fields do not fit in maxProperties {most}"


def contradictions(schema: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(JSON pointer, what cannot be satisfied) for every subschema of `schema`."""
    for pointer, node in iter_nodes(schema):
        for problem in _node_problems(node):
            yield pointer, problem
