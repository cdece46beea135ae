"""The field tables of the documentation: a schema's fields read from its `properties`, joined
with the envelope's through its `allOf` `$ref`, with conditional requirements read from
`if`/`then`, each with its type as text and the rules that bind it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .docs_links import Links, code
from .model import (
    SchemaDoc,
    Spec,
)
from .schema_walk import iter_nodes, resolve_ref


@dataclass(frozen=True)
class FieldRow:
    name: str
    type: str
    required: str
    description: str
    rules: tuple[str, ...]


def node_ids(node: Mapping[str, Any], key: str) -> list[str]:
    value = node.get(key)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _refs_of(node: Mapping[str, Any]) -> list[str]:
    """The rule and decision IDs a schema node carries, its allOf members' included: `x-rule`
    (the rule a breach found by the node's keywords breaks), `x-decision`, and `x-see` (rules
    about the field that no keyword of the schema can check, named for the reader)."""
    ids = node_ids(node, "x-rule") + node_ids(node, "x-see") + node_ids(node, "x-decision")
    for member in node.get("allOf") or ():
        if isinstance(member, Mapping) and "$ref" not in member:
            ids += node_ids(member, "x-rule") + node_ids(member, "x-decision")
    return list(dict.fromkeys(ids))


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "value"


def _bounds(node: Mapping[str, Any]) -> tuple[Any, Any]:
    low, high = node.get("minimum"), node.get("maximum")
    for member in node.get("allOf") or ():
        if isinstance(member, Mapping):
            low = member.get("minimum", low)
            high = member.get("maximum", high)
    return low, high


def _types(node: Mapping[str, Any]) -> list[str]:
    types = node.get("type")
    for member in node.get("allOf") or ():
        if types is None and isinstance(member, Mapping):
            types = member.get("type")
    if types is None:
        return []
    return list(types) if isinstance(types, list) else [str(types)]


def type_text(spec: Spec, links: Links, base_id: str, node: Mapping[str, Any]) -> str:
    """A schema node's type in a few words of markdown, with links to what it refers to."""
    if "const" in node:
        return f"{_json_type(node['const'])} {code(json.dumps(node['const']))}"
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = ref if ref.startswith("urn:") else None
        if target is not None:
            for registry in spec.value_registries.values():
                if registry.schema_id == target:
                    return "string: " + links.registry(
                        registry.name, f"a registered {registry.field or registry.title}"
                    )
            document = spec.schemas.get(target)
            title = document.title if document is not None else target
            return "object: " + links.schema(target, title)
    if "enum" in node:
        return "one of " + ", ".join(code(json.dumps(v)) for v in node["enum"])
    words = []
    for kind in _types(node):
        if kind == "array" and isinstance(node.get("items"), Mapping):
            words.append("array of " + type_text(spec, links, base_id, node["items"]))
        else:
            words.append(kind)
    text = " or ".join(words) or "any"
    low, high = _bounds(node)
    if low is not None and high is not None:
        text += f", {low} to {high}"
    elif low is not None:
        text += f", from {low}"
    elif high is not None:
        text += f", at most {high}"
    if "pattern" in node:
        text += f", matching {code(node['pattern'])}"
    return text


def _condition(schema: Mapping[str, Any]) -> str:
    """An `if` subschema as words: "`role` is `"tool"`"."""
    parts = []
    for name, sub in (schema.get("properties") or {}).items():
        if "const" in sub:
            parts.append(f"{code(name)} is {code(json.dumps(sub['const']))}")
        elif "enum" in sub:
            values = ", ".join(code(json.dumps(v)) for v in sub["enum"])
            parts.append(f"{code(name)} is one of {values}")
        elif "type" in sub:
            kind = code("null") if sub["type"] == "null" else str(sub["type"])
            parts.append(f"{code(name)} is {kind}")
    return " and ".join(parts) or "a condition holds"


def _object_rows(
    spec: Spec, links: Links, base_id: str, node: Mapping[str, Any], prefix: str,
    required_text: str | None = None,
) -> list[FieldRow]:
    rows: list[FieldRow] = []
    required = set(node.get("required") or ())
    for name, sub in (node.get("properties") or {}).items():
        path = prefix + name
        if required_text is not None:
            needed = required_text if name in required else "no"
        else:
            needed = "yes" if name in required else "no"
        rows.append(FieldRow(path, type_text(spec, links, base_id, sub), needed,
                             str(sub.get("description", "")), tuple(_refs_of(sub))))
        if "object" in _types(sub) and sub.get("properties"):
            rows += _object_rows(spec, links, base_id, sub, path + ".")
    return rows


def field_rows(spec: Spec, links: Links, document: SchemaDoc) -> list[FieldRow]:
    """The fields of a structure: envelope fields first (through allOf $ref), then its own,
    then those a conditional (`if`/`then`) requires, each once with its requirement."""
    schema = document.document
    own = _object_rows(spec, links, document.id, schema, "")
    inherited: list[FieldRow] = []
    conditional: dict[str, list[tuple[str, list[str]]]] = {}
    extra: list[FieldRow] = []
    for member in schema.get("allOf") or ():
        if not isinstance(member, Mapping):
            continue
        ref = member.get("$ref")
        if isinstance(ref, str):
            target = resolve_ref(spec.schemas, document.id, ref)
            if target is not None:
                target_id = ref.partition("#")[0] or document.id
                inherited += field_rows(spec, links, SchemaDoc(target_id, None, target))
            continue
        condition, then = member.get("if"), member.get("then")
        if not isinstance(condition, Mapping) or not isinstance(then, Mapping):
            continue
        when = "when " + _condition(condition)
        rule_ids = _refs_of(then)
        then_ref = then.get("$ref")
        if isinstance(then_ref, str):
            resolved = resolve_ref(spec.schemas, document.id, then_ref)
            if resolved is not None:
                then = resolved
                rule_ids += _refs_of(then)
        for name in then.get("required") or ():
            conditional.setdefault(name, []).append((when, rule_ids))
        for row in _object_rows(spec, links, document.id, then, "", required_text=when):
            extra.append(FieldRow(row.name, row.type, row.required, row.description,
                                  tuple(dict.fromkeys((*row.rules, *rule_ids)))))
    rows: dict[str, FieldRow] = {}
    for row in [*inherited, *own]:
        previous = rows.get(row.name)
        if previous is None:
            rows[row.name] = row
            continue
        needed = "yes" if "yes" in (previous.required, row.required) else row.required
        rows[row.name] = FieldRow(row.name, row.type, needed,
                                  row.description or previous.description,
                                  tuple(dict.fromkeys((*previous.rules, *row.rules))))
    for row in extra:
        previous = rows.get(row.name)
        if previous is None:
            rows[row.name] = row
        else:
            rows[row.name] = FieldRow(previous.name, previous.type, previous.required,
                                      previous.description,
                                      tuple(dict.fromkeys((*previous.rules, *row.rules))))
    for name, conditions in conditional.items():
        current = rows.get(name)
        if current is not None and current.required == "no":
            whens = "; ".join(dict.fromkeys(when for when, _ in conditions))
            rule_ids = [r for _, ids in conditions for r in ids]
            rows[name] = FieldRow(current.name, current.type, whens, current.description,
                                  tuple(dict.fromkeys((*current.rules, *rule_ids))))
    return list(rows.values())


def schema_json(document: SchemaDoc) -> str:
    """A schema document as JSON, as the files under schemas/ lay it out."""
    return json.dumps(dict(document.document), indent=2, ensure_ascii=False)


def schema_rule_ids(document: Mapping[str, Any]) -> list[str]:
    """Every x-rule, x-see and x-decision anywhere in a schema document, in document order."""
    found: list[str] = []
    for _, node in iter_nodes(document):
        found += [*node_ids(node, "x-rule"), *node_ids(node, "x-see"),
                  *node_ids(node, "x-decision")]
    return list(dict.fromkeys(found))
