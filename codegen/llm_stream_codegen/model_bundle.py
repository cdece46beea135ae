"""One self-contained schema for datamodel-code-generator, built from the resolved spec.

The generator cannot resolve our `urn:` refs, and the models need no conditional logic (the
generated validators judge validity), so the bundle puts every schema under `$defs` by its class
name, rewrites refs to local ones and drops the `if`/`then` branches and `x-` annotations, and
the constraints whose breach is only a warning (an `allOf` member whose x-rule is a SHOULD): the
decoder returns an event with a warning, so its model must take it (seq past 2^53 - 1, LS-SEC-6).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import REGISTRY_URN, URN, Spec
from .schema_walk import follow_pointer, split_ref

_DROPPED = frozenset({"if", "then", "else", "$schema", "$id"})
_REGISTRY_CLASSES = {
    "stop-reasons": "StopReason",
    "error-codes": "ErrorCode",
    "roles": "Role",
    "content-part-types": "ContentPartType",
}


def class_names(spec: Spec) -> dict[str, str]:
    """The model class name of every schema $id."""
    names: dict[str, str] = {}
    events = {event.schema_id: event.class_name for event in spec.event_types}
    for schema_id in spec.schemas:
        if schema_id in events:
            names[schema_id] = events[schema_id]
        elif schema_id.startswith(REGISTRY_URN):
            names[schema_id] = _REGISTRY_CLASSES[schema_id.removeprefix(REGISTRY_URN)]
        else:
            stem = schema_id.removeprefix(URN).rsplit(":", 1)[0]
            names[schema_id] = "".join(part.capitalize() for part in stem.split("-"))
    return names


def bundle(spec: Spec) -> dict[str, Any]:
    names = class_names(spec)

    def warns(part: object) -> bool:
        if not isinstance(part, Mapping) or "$ref" in part:
            return False
        rule = spec.rules.get(part.get("x-rule", ""))
        return rule is not None and rule.severity == "warning"

    def rewrite(node: Any, base_id: str, document: Mapping[str, Any]) -> Any:
        if isinstance(node, list):
            return [rewrite(item, base_id, document) for item in node]
        if not isinstance(node, Mapping):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-") or key in ("$defs", "allOf"):
                continue
            if key == "$ref":
                doc_id, fragment = split_ref(base_id, value)
                out[key] = f"#/$defs/{names[doc_id]}{fragment}"
            else:
                out[key] = rewrite(value, base_id, document)
        for part in node.get("allOf", ()):
            if not warns(part):
                _merge_part(out, rewrite(part, base_id, document), part, base_id, document)
        return out

    defs: dict[str, Any] = {}
    for schema_id in sorted(spec.schemas, key=lambda i: names[i]):
        document = spec.schemas[schema_id].document
        defs[names[schema_id]] = rewrite(document, schema_id, document)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def _merge_part(
    out: dict[str, Any],
    rewritten: Mapping[str, Any],
    part: Mapping[str, Any],
    base_id: str,
    document: Mapping[str, Any],
) -> None:
    """Fold one `allOf` member into its parent for the models.

    A `$ref` member (an event's envelope) stays a `$ref` in `allOf`, which the generator turns
    into a base class; a plain member (a constraint split out only to carry its own x-rule)
    merges its keywords; a conditional member contributes the properties of its `then` branch
    as optional fields, so that the model offers every field a variant may carry.
    """
    if "$ref" in rewritten:
        out.setdefault("allOf", []).append(rewritten)
        return
    then = part.get("then")
    if isinstance(then, Mapping):
        branch = then
        if "$ref" in then:
            branch = follow_pointer(document, split_ref(base_id, then["$ref"])[1]) or {}
        properties = out.setdefault("properties", {})
        for name, schema in (branch.get("properties") or {}).items():
            if name not in properties:
                properties[name] = {k: v for k, v in schema.items() if not k.startswith("x-")}
        return
    for key, value in rewritten.items():
        out.setdefault(key, value)
