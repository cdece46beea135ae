"""The checks of a proposal, each giving one message a problem: the name (syntax, not registered,
not reserved), the specification reference (Specification Required, RFC 8126), the metadata, the
lifecycle place (one of registry/lifecycle.yaml's), the checks and mappings, and the schema of the
event's own fields, before and after the command builds the event schema from it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from keyword import iskeyword
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .check_files import meta_validator
from .load import event_type_of
from .model import URN, VENDORS, EventType, Spec
from .registry_proposal import Proposal
from .registry_yaml import DATE_PATTERN, EVENTS_FILE
from .satisfiable import contradictions
from .schema_walk import iter_nodes, resolve_ref

EVENT_SCHEMA_DIR = "schemas/events"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")
MAX_NAME_LENGTH = 64
NEW_STATUSES = ("provisional", "permanent")
CHECK_KINDS = ("json-text", "unique", "declared-tool", "non-decreasing",
               "echoes-request-metadata")
ENVELOPE_FIELDS = ("v", "seq")
BLOCK_KIND_PATTERN = re.compile(r"[a-z]+(-[a-z]+)*")
REFERENCE_PATTERN = re.compile(
    r"(?:RFC ?\d+|draft-[a-z0-9-]+|[a-z][a-z0-9+.-]*://\S+|urn:\S+)", re.IGNORECASE
)
LIFECYCLE_KEYS = ("place", "block_kind", "per_block", "closes_with", "completes_block",
                  "fragment_of", "expected")
BLOCK_ONLY_KEYS = ("block_kind", "per_block", "closes_with", "completes_block", "fragment_of")
MODEL_ATTRIBUTES = frozenset(name for name in dir(BaseModel) if not name.startswith("_"))
"""What a field of a generated model may not be called (D-FIELD-NAMES)."""
DRAFT_NAMES = (
    "stream.start", "content.delta", "content.stop", "tool.call", "usage", "error", "stream.end",
)
RESERVED_NAMES: Mapping[str, str] = {
    **{name: "an event type of the draft itself (section 9.2)" for name in DRAFT_NAMES},
    "message": "the type WHATWG gives an SSE event without an event: field",
    "done": "the [DONE] sentinel of OpenAI-style streams, which stream.end replaces",
    "ping": "keep-alives are SSE comments in LLM-Stream, not events (Anthropic's ping)",
    "stream.ping": "keep-alives are SSE comments in LLM-Stream, not events",
    "stream.heartbeat": "keep-alives are SSE comments in LLM-Stream, not events",
    "stream.done": "too close to stream.end, the one last event of a stream",
    "stream.stop": "too close to stream.end, the one last event of a stream",
    "stream.error": "too close to error, the one failure event of a stream",
}
"""Names never registered, with the reason; see also RESERVED_PREFIXES."""
RESERVED_PREFIXES: Mapping[str, str] = {
    "vendor.": "private, unregistered event types (as spec/examples' vendor.trace), which parsers "
               "pass through (D-UNKNOWN-TYPE)",
    "x.": "private use and experiments",
    "example.": "documentation and examples, in the manner of RFC 2606",
    "test.": "test suites",
    "response.": "the event names of OpenAI Responses streams, which gateways translate from",
}
"""Name spaces never registered: a registered name in them would be mistaken for private or
vendor events."""


def event_schema_id(name: str) -> str:
    return f"{URN}event:{name}:1.0"


def event_schema_path(name: str) -> str:
    return f"{EVENT_SCHEMA_DIR}/{name}.json"


def reserved_reason(name: str) -> str | None:
    """Why `name` may not be registered, or None."""
    if name in RESERVED_NAMES:
        return RESERVED_NAMES[name]
    for prefix, reason in RESERVED_PREFIXES.items():
        if name.startswith(prefix):
            return f"the name space {prefix}* is reserved for {reason}"
    return None


def has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def probe_event(name: str) -> EventType:
    """An EventType for `name` alone, for the Python names the generator derives from it."""
    entry = {"name": name, "description": "", "schema": "", "reference": "", "status": "",
             "date": "", "change_controller": "", "lifecycle": {"place": "any"}}
    return event_type_of(entry, EVENTS_FILE)


def proposal_problems(proposal: Proposal, spec: Spec, root: Path) -> list[str]:
    """Every problem of the proposal as given, against the registry as it is."""
    name = proposal.name
    problems = _name_problems(name, spec, root)
    problems += _metadata_problems(proposal)
    problems += _reference_problems(proposal.reference, spec)
    problems += _lifecycle_problems(proposal.lifecycle, spec)
    problems += _checks_problems(proposal.checks, proposal.schema, spec)
    problems += _mappings_problems(proposal.mappings)
    if isinstance(name, str) and name:
        problems += _schema_problems(proposal.schema, name, spec)
    return problems


def _name_problems(name: Any, spec: Spec, root: Path) -> list[str]:
    if not has_text(name):
        return ["an event type name is required, e.g. reasoning.delta"]
    registered = spec.event_type(name)
    if registered is not None:
        return [f"event type {name!r} is already registered ({registered.where}, status "
                f"{registered.status})"]
    reason = reserved_reason(name)
    if reason is not None:
        return [f"event type name {name!r} is reserved: {reason}"]
    if len(name) > MAX_NAME_LENGTH or not NAME_PATTERN.fullmatch(name):
        return [f"event type name {name!r} is not valid: new names are at least two lowercase "
                "segments joined by dots, each a letter followed by letters, digits or _, "
                f"at most {MAX_NAME_LENGTH} characters (e.g. reasoning.delta)"]
    problems = []
    candidate = probe_event(name)
    for event in spec.event_types:
        if candidate.identifier == event.identifier or candidate.class_name == event.class_name:
            problems.append(f"event type name {name!r} gives the Python names "
                            f"{candidate.identifier} and {candidate.class_name}, which the "
                            f"registered {event.name!r} already has")
    if (root / event_schema_path(name)).exists():
        problems.append(f"{event_schema_path(name)} already exists; an unregistered schema file "
                        "is in the way (remove it or register under another name)")
    return problems


def _reference_problems(reference: Any, spec: Spec) -> list[str]:
    if not has_text(reference):
        return ["a specification reference is required (Specification Required, RFC 8126; "
                "LS-IANA-1): give '#<section-anchor>', '#decision-<id>', an RFC, an "
                "Internet-Draft name or a URL"]
    if reference.startswith("#"):
        if reference[1:] not in spec.anchors:
            return [f"reference {reference!r} names no section and no decision of "
                    "spec/llm-stream.yaml"]
        return []
    if not REFERENCE_PATTERN.fullmatch(reference.strip()):
        return [f"reference {reference!r} is not a specification reference: give "
                "'#<section-anchor>', '#decision-<id>', an RFC, an Internet-Draft name or a URL"]
    return []


def _metadata_problems(proposal: Proposal) -> list[str]:
    problems = []
    if not has_text(proposal.description):
        problems.append("a description is required: what the event says, for the registry and "
                        "its documentation page")
    if proposal.status not in NEW_STATUSES:
        problems.append(f"status {proposal.status!r} is not one a new registration has: "
                        f"{' or '.join(NEW_STATUSES)} (deprecate with "
                        "`llm-stream registry deprecate`)")
    elif proposal.status == "provisional" and not has_text(proposal.reason):
        problems.append("a provisional registration needs a reason: why it is registered, and "
                        "why provisionally")
    if proposal.date is not None:
        try:
            date.fromisoformat(str(proposal.date))
        except ValueError:
            problems.append(f"date {proposal.date!r} is not a date YYYY-MM-DD")
        else:
            if not DATE_PATTERN.fullmatch(str(proposal.date)):
                problems.append(f"date {proposal.date!r} is not a date YYYY-MM-DD")
    if not has_text(proposal.change_controller):
        problems.append("a change controller is required: who may change the registration")
    for key in ("contact", "reason"):
        value = getattr(proposal, key)
        if value is not None and not has_text(value):
            problems.append(f"{key} is not a non-empty string")
    return problems


def _lifecycle_problems(life: Any, spec: Spec) -> list[str]:
    places = spec.lifecycle.places
    known = ", ".join(places)
    if not isinstance(life, Mapping) or "place" not in life:
        return [f"a lifecycle place is required: one of {known} (registry/lifecycle.yaml)"]
    problems = [f"lifecycle member {key!r} is unknown; a lifecycle has "
                f"{', '.join(LIFECYCLE_KEYS)}" for key in life if key not in LIFECYCLE_KEYS]
    place = life["place"]
    if place not in places:
        return [*problems, f"lifecycle place {place!r} is not one the decoder understands: one "
                           f"of {known} (registry/lifecycle.yaml)"]
    definition = places[place]
    if definition.min == 1 and definition.max == 1:
        holders = [e.name for e in spec.event_types if e.lifecycle.place == place]
        if holders:
            problems.append(f"lifecycle place {place!r} holds exactly one event a stream, and "
                            f"that is {', '.join(holders)}")
    if place == "block":
        kind = life.get("block_kind")
        if kind is None:
            problems.append("lifecycle place 'block' needs a block_kind (e.g. text, tool-call, "
                            "or a kind of its own), the kind of content block it belongs to")
        elif not isinstance(kind, str) or not BLOCK_KIND_PATTERN.fullmatch(kind):
            problems.append(f"block_kind {kind!r} is not lowercase words joined by -")
    else:
        problems += [f"lifecycle member {key!r} applies to place 'block' only"
                     for key in BLOCK_ONLY_KEYS if key in life]
    per_block = life.get("per_block")
    if per_block is not None and (type(per_block) is not int or per_block < 1):
        problems.append(f"per_block {per_block!r} is not an integer from 1")
    closes = life.get("closes_with")
    stop_reasons = spec.value_registries["stop-reasons"].values
    if closes is not None and closes not in stop_reasons:
        problems.append(f"closes_with {closes!r} is not a registered stop reason "
                        f"({', '.join(stop_reasons)})")
    expected = life.get("expected")
    if expected is not None and (
        not isinstance(expected, Mapping) or type(expected.get("min")) is not int
        or expected["min"] < 1 or expected.get("rule") not in spec.rules
    ):
        problems.append("expected is {min: an integer from 1, rule: an existing rule ID}")
    return problems


def _own_properties(own: Any) -> Mapping[str, Any]:
    properties = own.get("properties") if isinstance(own, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def _checks_problems(checks: Any, own: Any, spec: Spec) -> list[str]:
    if checks is None:
        return []
    if not isinstance(checks, list):
        return ["checks is a list of {check, field, rule}"]
    problems = []
    fields = _own_properties(own)
    for item in checks:
        if not isinstance(item, Mapping) or set(item) != {"check", "field", "rule"}:
            problems.append(f"check {item!r} is not {{check, field, rule}}")
            continue
        if item["check"] not in CHECK_KINDS:
            problems.append(f"check {item['check']!r} is unknown: one of {', '.join(CHECK_KINDS)}")
        if item["field"] not in fields:
            problems.append(f"check {item['check']!r} names field {item['field']!r}, which the "
                            "schema does not define")
        if item["rule"] not in spec.rules:
            problems.append(f"check {item['check']!r} names rule {item['rule']!r}, which does "
                            "not exist")
    return problems


def _mappings_problems(mappings: Any) -> list[str]:
    if mappings is None:
        return []
    if not isinstance(mappings, Mapping):
        return [f"mappings is a mapping of vendor format ({', '.join(VENDORS)}) to text"]
    problems = []
    for vendor, text in mappings.items():
        if vendor not in VENDORS:
            problems.append(f"mapping vendor {vendor!r} is unknown: one of {', '.join(VENDORS)}")
        elif not has_text(text):
            problems.append(f"mapping for {vendor} is not a non-empty string")
    return problems


def _type_problem(node: Any, name: str) -> str | None:
    """Whether the proposal's own `properties.type` fixes the type to something else."""
    if not isinstance(node, Mapping):
        return f"the schema's properties.type must be a schema fixing the type to {name!r}"
    if "const" in node and node["const"] != name:
        return (f"the schema sets the event's type to {node['const']!r}, but the event type is "
                f"{name!r}")
    if "enum" in node and list(node["enum"]) != [name]:
        return (f"the schema allows the event's type {node['enum']!r}, but the event type is "
                f"{name!r}")
    if node.get("type", "string") != "string":
        return f"the schema makes the event's type a {node['type']!r}; it is the string {name!r}"
    return None


def _schema_problems(own: Any, name: str, spec: Spec) -> list[str]:
    if own is None:
        return []
    if not isinstance(own, Mapping):
        return ["the schema of the event's own fields must be a JSON Schema object"]
    problems = []
    if own.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
        problems.append(f"the schema must be JSON Schema 2020-12 ($schema {DRAFT_2020_12}), not "
                        f"{own['$schema']!r}")
    if own.get("$id", event_schema_id(name)) != event_schema_id(name):
        problems.append(f"the schema's $id {own['$id']!r} is not {event_schema_id(name)!r} "
                        "(leave it out: the command sets it)")
    if own.get("type", "object") != "object":
        problems.append(f"an event is a JSON object, but the schema's type is {own['type']!r}")
    if "properties" in own and not isinstance(own["properties"], Mapping):
        problems.append("the schema's properties must be an object")
    properties = _own_properties(own)
    if "type" in properties:
        problem = _type_problem(properties["type"], name)
        if problem:
            problems.append(problem)
    problems += [f"the schema redefines the envelope's field {key!r} (schemas/event-envelope.json "
                 "defines v, seq and type for every event)" for key in ENVELOPE_FIELDS
                 if key in properties]
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if own.get(keyword) is False:
            problems.append(f"the schema sets {keyword} false: an event must allow fields it does "
                            "not define (parsers ignore them, LS-ENV-5), and would then refuse "
                            "the envelope's own v and seq")
    required = own.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append("the schema's required must be a list of field names")
    else:
        problems += [f"required field {r!r} is not defined under the schema's properties"
                     for r in required if r not in properties and r not in (*ENVELOPE_FIELDS,
                                                                            "type")]
    if "allOf" in own and not isinstance(own["allOf"], list):
        problems.append("the schema's allOf must be a list")
    problems += _field_name_problems(own)
    anchors = {s.anchor for s in spec.sections}
    section = own.get("x-section")
    if section is not None and section not in anchors:
        problems.append(f"x-section {section!r} is not a section anchor of spec/llm-stream.yaml")
    return problems


def _field_name_problems(own: Mapping[str, Any]) -> list[str]:
    """Field names the generated models cannot carry as they are (D-FIELD-NAMES)."""
    problems = []
    for pointer, node in iter_nodes(own):
        for name in _own_properties(node):
            why = (
                "is not a Python identifier" if not str(name).isidentifier()
                else "is a Python keyword" if iskeyword(name)
                else "starts with _ or model_, which pydantic keeps for itself"
                if name.startswith(("_", "model_"))
                else "is an attribute of pydantic's BaseModel, which every model has"
                if name in MODEL_ATTRIBUTES else None
            )
            if why:
                problems.append(f"field {name!r} ({pointer}/properties/{name}) {why}: the "
                                "generated model cannot carry it under its own name "
                                "(D-FIELD-NAMES); choose another name")
    return problems


def built_schema_problems(document: Mapping[str, Any], spec: Spec) -> list[str]:
    problems = []
    found = meta_validator().iter_errors(document)
    for error in sorted(found, key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path)
        problems.append(f"the schema is not valid JSON Schema 2020-12 at /{where}: "
                        f"{error.message}")
    if problems:
        return problems
    problems += [f"no event satisfies the schema at {pointer or '/'}: {problem}"
                 for pointer, problem in contradictions(document)]
    store = {**spec.schemas, document["$id"]: document}
    for pointer, node in iter_nodes(document):
        ref = node.get("$ref")
        if isinstance(ref, str) and resolve_ref(store, document["$id"], ref) is None:
            problems.append(f"the schema's $ref {ref!r} at {pointer or '/'} does not resolve")
        rule = node.get("x-rule")
        if rule is not None and rule not in spec.rules:
            problems.append(f"the schema's x-rule {rule!r} at {pointer or '/'} names no rule of "
                            "spec/llm-stream.yaml")
    return problems
