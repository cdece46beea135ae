"""`llm-stream registry add` and `registry deprecate`: change the event type registry in one step.

A registration is judged whole before anything is written: the name (syntax, not registered, not
reserved), the specification reference (Specification Required, RFC 8126), the lifecycle place
(one of registry/lifecycle.yaml's), and the schema of the event's own fields, from which the
command builds the event schema (`$schema`, `$id`, `allOf` the envelope, `type` fixed to the
name). The new entry and schema are then put into a scratch copy of the source and the full spec
check (`check.check`) runs there, so that a registration the check would refuse is refused here,
with every file as it was. Each problem is one message.

Only then are files written, each to a temporary name and renamed (`output.write_atomic`), the
entry appended to registry/event-types.yaml as text so that the file's comments and layout stay,
and everything is regenerated (`generate.generate`), all inside a `journal.Journal`: if
regeneration fails, or the command is interrupted or killed at any instant, every file touched
(the source files and generated/) gets its previous bytes back, at once or by the next command.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from keyword import iskeyword
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import BaseModel

from .check import META, check, schema_store
from .generate import generate
from .journal import Journal
from .load import SOURCE_DIRS, _event_type
from .model import ENVELOPE_ID, URN, VENDORS, EventType, Spec
from .output import GENERATED
from .satisfiable import contradictions
from .schema_walk import iter_nodes, resolve_ref
from .sources import SourceError, line_of, parse_yaml, read_json, read_yaml

EVENTS_FILE = "registry/event-types.yaml"
EVENT_SCHEMA_DIR = "schemas/events"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")
MAX_NAME_LENGTH = 64
NEW_STATUSES = ("provisional", "permanent")
CHECK_KINDS = ("json-text", "unique", "declared-tool", "non-decreasing",
               "echoes-request-metadata")
FIELD_TYPES = ("string", "integer", "number", "boolean", "object", "array")
ENVELOPE_FIELDS = ("v", "seq")
BLOCK_KIND_PATTERN = re.compile(r"[a-z]+(-[a-z]+)*")
RULE_PATTERN = re.compile(r"LS-[A-Z]+-[0-9]+")
REFERENCE_PATTERN = re.compile(
    r"(?:RFC ?\d+|draft-[a-z0-9-]+|[a-z][a-z0-9+.-]*://\S+|urn:\S+)", re.IGNORECASE
)
PROPOSAL_KEYS = (
    "name", "description", "schema", "reference", "status", "date", "change_controller",
    "contact", "reason", "lifecycle", "checks", "mappings",
)
LIFECYCLE_KEYS = ("place", "block_kind", "per_block", "closes_with", "completes_block",
                  "fragment_of", "expected")
BLOCK_ONLY_KEYS = ("block_kind", "per_block", "closes_with", "completes_block", "fragment_of")
LINE_WIDTH = 100
MODEL_ATTRIBUTES = frozenset(name for name in dir(BaseModel) if not name.startswith("_"))
"""What a field of a generated model may not be called (D-FIELD-NAMES)."""
IETF = "IETF"

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


class RegistryError(Exception):
    """A registry change refused; `problems` holds one message per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


# -- proposals ------------------------------------------------------------------------------------


@dataclass
class Proposal:
    """What a maintainer proposes; values are as given, judged by `prepare`."""

    name: Any = None
    description: Any = None
    schema: Any = None
    reference: Any = None
    status: Any = "provisional"
    date: Any = None
    change_controller: Any = None
    contact: Any = None
    reason: Any = None
    lifecycle: Any = field(default_factory=dict)
    checks: Any = field(default_factory=list)
    mappings: Any = field(default_factory=dict)
    source: str = "registry add"
    """Where it comes from, for messages: the proposal file, or "registry add" for flags."""


def proposal_from_data(data: Any, source: str) -> Proposal:
    """A proposal from a parsed YAML document; refuses what is not a mapping of known members."""
    if not isinstance(data, Mapping):
        raise RegistryError([f"{source}: a proposal is a mapping of {', '.join(PROPOSAL_KEYS)}"])
    unknown = [str(key) for key in data if key not in PROPOSAL_KEYS]
    if unknown:
        raise RegistryError([f"{source}: unknown member(s) {', '.join(unknown)}; a proposal has "
                             f"{', '.join(PROPOSAL_KEYS)}"])
    proposal = Proposal(source=source)
    for key, value in data.items():
        setattr(proposal, key, value)
    if proposal.lifecycle is None:
        proposal.lifecycle = {}
    return proposal


def read_proposal(path: Path) -> Proposal:
    try:
        data = read_yaml(path, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError([f"{path}: cannot read the proposal: {exc}"]) from exc
    except SourceError as exc:
        raise RegistryError([str(exc)]) from exc
    return proposal_from_data(data, str(path))


def read_schema_file(path: Path) -> Any:
    """The schema of an event's own fields from a JSON or YAML file."""
    try:
        if path.suffix == ".json":
            return read_json(path, str(path))
        return read_yaml(path, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError([f"{path}: cannot read the schema: {exc}"]) from exc
    except SourceError as exc:
        raise RegistryError([str(exc)]) from exc


def schema_from_fields(specs: Sequence[str]) -> dict[str, Any]:
    """A schema of own fields from `--field PATH:TYPE[:required|optional[:DESCRIPTION]]` flags.

    A dotted path makes nested objects (`delta.text:string:required`); an object created on the
    way is required when anything inside it is, unless a flag of its own says otherwise.
    """
    problems: list[str] = []
    root: dict[str, Any] = {"properties": {}}
    explicit: set[tuple[str, ...]] = set()
    for spec in specs:
        path_text, _, rest = spec.partition(":")
        kind, _, rest = rest.partition(":")
        presence, _, description = rest.partition(":")
        path = tuple(path_text.split("."))
        if not path_text or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) for p in path):
            problems.append(f"--field {spec!r}: the path is dotted field names, e.g. delta.text")
            continue
        if kind not in FIELD_TYPES:
            problems.append(f"--field {spec!r}: the type is one of {', '.join(FIELD_TYPES)}")
            continue
        if presence not in ("", "required", "optional"):
            problems.append(f"--field {spec!r}: after the type comes required or optional")
            continue
        node = root
        for depth, part in enumerate(path[:-1]):
            child = node.setdefault("properties", {}).setdefault(part, {"type": "object"})
            if presence == "required" and path[: depth + 1] not in explicit:
                _require(node, part)
            node = child
        leaf = node.setdefault("properties", {}).setdefault(path[-1], {})
        leaf["type"] = kind
        if description:
            leaf["description"] = description
        explicit.add(path)
        if presence == "required":
            _require(node, path[-1])
        elif path[-1] in node.get("required", []):
            node["required"].remove(path[-1])
    if problems:
        raise RegistryError(problems)
    return root


def _require(node: dict[str, Any], name: str) -> None:
    required = node.setdefault("required", [])
    if name not in required:
        required.append(name)


def mappings_from_flags(specs: Sequence[str]) -> dict[str, str]:
    """`--mapping VENDOR=TEXT` flags as the registry's mappings."""
    result: dict[str, str] = {}
    for spec in specs:
        vendor, sep, text = spec.partition("=")
        if not sep or not text.strip():
            raise RegistryError([f"--mapping {spec!r}: give VENDOR=TEXT, VENDOR one of "
                                 f"{', '.join(VENDORS)}"])
        result[vendor.strip()] = text.strip()
    return result


# -- judging --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Registration:
    """A registration judged sound: what will be written, and where."""

    name: str
    entry: dict[str, Any]
    schema: dict[str, Any]
    schema_path: str
    registry_text: str
    schema_text: str
    entry_line: int
    """The line of registry/event-types.yaml the new entry starts on."""


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


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _name_problems(name: Any, spec: Spec, root: Path) -> list[str]:
    if not _text(name):
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
    candidate = _probe(name)
    for event in spec.event_types:
        if candidate.identifier == event.identifier or candidate.class_name == event.class_name:
            problems.append(f"event type name {name!r} gives the Python names "
                            f"{candidate.identifier} and {candidate.class_name}, which the "
                            f"registered {event.name!r} already has")
    if (root / event_schema_path(name)).exists():
        problems.append(f"{event_schema_path(name)} already exists; an unregistered schema file "
                        "is in the way (remove it or register under another name)")
    return problems


def _probe(name: str) -> EventType:
    """An EventType for `name` alone, for the Python names the generator derives from it."""
    entry = {"name": name, "description": "", "schema": "", "reference": "", "status": "",
             "date": "", "change_controller": "", "lifecycle": {"place": "any"}}
    return _event_type(entry, EVENTS_FILE)


def _reference_problems(reference: Any, spec: Spec) -> list[str]:
    if not _text(reference):
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
        elif not _text(text):
            problems.append(f"mapping for {vendor} is not a non-empty string")
    return problems


def _metadata_problems(proposal: Proposal) -> list[str]:
    problems = []
    if not _text(proposal.description):
        problems.append("a description is required: what the event says, for the registry and "
                        "its documentation page")
    if proposal.status not in NEW_STATUSES:
        problems.append(f"status {proposal.status!r} is not one a new registration has: "
                        f"{' or '.join(NEW_STATUSES)} (deprecate with "
                        "`llm-stream registry deprecate`)")
    elif proposal.status == "provisional" and not _text(proposal.reason):
        problems.append("a provisional registration needs a reason: why it is registered, and "
                        "why provisionally")
    if proposal.date is not None:
        try:
            date.fromisoformat(str(proposal.date))
        except ValueError:
            problems.append(f"date {proposal.date!r} is not a date YYYY-MM-DD")
        else:
            if not _DATE.fullmatch(str(proposal.date)):
                problems.append(f"date {proposal.date!r} is not a date YYYY-MM-DD")
    if not _text(proposal.change_controller):
        problems.append("a change controller is required: who may change the registration")
    for key in ("contact", "reason"):
        value = getattr(proposal, key)
        if value is not None and not _text(value):
            problems.append(f"{key} is not a non-empty string")
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


def build_schema(name: str, description: str, own: Mapping[str, Any] | None) -> dict[str, Any]:
    """The event schema file: the own fields, composed with the envelope, `type` fixed."""
    rest = dict(own or {})
    for key in ("$schema", "$id", "title", "type"):
        rest.pop(key, None)
    document: dict[str, Any] = {
        "$schema": DRAFT_2020_12,
        "$id": event_schema_id(name),
        "title": name,
        "description": rest.pop("description", description),
    }
    for key in ("x-section", "x-rule", "x-decision"):
        if key in rest:
            document[key] = rest.pop(key)
    extra = [m for m in rest.pop("allOf", None) or [] if m != {"$ref": ENVELOPE_ID}]
    document["allOf"] = [{"$ref": ENVELOPE_ID}, *extra]
    document["type"] = "object"
    required = [r for r in rest.pop("required", None) or [] if r != "type"]
    document["required"] = ["type", *required]
    properties = dict(rest.pop("properties", None) or {})
    properties.pop("type", None)
    document["properties"] = {
        "type": {"description": json.dumps(name), "const": name, "x-rule": "LS-ENV-3"},
        **properties,
    }
    document.update(rest)
    return document


def _built_schema_problems(document: Mapping[str, Any], spec: Spec) -> list[str]:
    problems = []
    for error in sorted(META.iter_errors(document), key=lambda e: list(e.absolute_path)):
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


def build_entry(proposal: Proposal, name: str) -> dict[str, Any]:
    """The registry entry, members in the order of registry/event-types.yaml."""
    entry: dict[str, Any] = {
        "name": name,
        "description": " ".join(str(proposal.description).split()),
        "schema": event_schema_path(name),
        "reference": proposal.reference.strip(),
        "status": proposal.status,
        "date": str(proposal.date or date.today().isoformat()),
        "change_controller": proposal.change_controller.strip(),
    }
    for key in ("contact", "reason"):
        value = getattr(proposal, key)
        if value is not None:
            entry[key] = " ".join(str(value).split())
    life = proposal.lifecycle
    entry["lifecycle"] = {key: life[key] for key in LIFECYCLE_KEYS if key in life}
    if proposal.checks:
        entry["checks"] = [dict(check) for check in proposal.checks]
    if proposal.mappings:
        entry["mappings"] = {v: str(proposal.mappings[v]) for v in VENDORS
                             if v in proposal.mappings}
    return entry


# -- YAML text ------------------------------------------------------------------------------------


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _scalar(value: Any) -> str:
    """One YAML scalar as the registry file writes them: plain where that reads back the same."""
    if isinstance(value, bool) or value is None or isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    if _DATE.fullmatch(text):
        return text  # the source's loader keeps dates as strings
    try:
        plain_ok = text == text.strip() and yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        plain_ok = False
    if plain_ok and "\n" not in text and not text.startswith(("{", "[", "&", "*", "!", "|", ">")):
        return text
    return json.dumps(text, ensure_ascii=False)


def _member(key: str, value: Any, indent: int) -> list[str]:
    """The lines of `key: value` at `indent`, long text folded (`>-`) as the file's note is."""
    pad = " " * indent
    if isinstance(value, Mapping):
        lines = [f"{pad}{key}:"]
        for sub_key, sub_value in value.items():
            lines += _member(str(sub_key), sub_value, indent + 2)
        return lines
    if isinstance(value, list):
        lines = [f"{pad}{key}:"]
        for item in value:
            if isinstance(item, Mapping):
                inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in item.items())
                lines.append(f"{pad}  - {{{inner}}}")
            else:
                lines.append(f"{pad}  - {_scalar(item)}")
        return lines
    scalar = _scalar(value)
    line = f"{pad}{key}: {scalar}"
    foldable = isinstance(value, str) and value == " ".join(value.split())
    if len(line) <= LINE_WIDTH or not foldable:
        return [line]
    wrapped = textwrap.wrap(value, width=LINE_WIDTH - indent - 2, break_long_words=False,
                            break_on_hyphens=False)
    return [f"{pad}{key}: >-", *(f"{pad}  {part}" for part in wrapped)]


def entry_text(entry: Mapping[str, Any]) -> str:
    """The entry as a YAML sequence item at the indentation of registry/event-types.yaml."""
    lines = []
    for key, value in entry.items():
        lines += _member(key, value, 4)
    lines[0] = "  - " + lines[0].lstrip()
    return "\n".join(lines) + "\n"


def _appended(text: str, entry: Mapping[str, Any]) -> tuple[str, int]:
    """The registry file's text with the entry appended, and the line the entry starts on."""
    base = text if text.endswith("\n") else text + "\n"
    if not base.endswith("\n\n"):
        base += "\n"
    return base + entry_text(entry), base.count("\n") + 1


def _plain(value: Any) -> Any:
    """Located mappings to plain dicts, for comparing parsed YAML with what was meant."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# -- the scratch check ----------------------------------------------------------------------------


@contextlib.contextmanager
def _scratch_copy(root: Path, files: Mapping[str, str]) -> Iterator[Path]:
    """A copy of the spec source with `files` (path -> text) put in, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="llm-stream-registry-") as folder:
        scratch = Path(folder)
        for source in SOURCE_DIRS:
            shutil.copytree(root / source, scratch / source)
        for path, text in files.items():
            (scratch / path).parent.mkdir(parents=True, exist_ok=True)
            (scratch / path).write_text(text, encoding="utf-8")
        yield scratch


def _scratch_problems(root: Path, files: Mapping[str, str], name: str | None) -> list[str]:
    """The full spec check on the source with `files` put in; compiles the new validator too."""
    with _scratch_copy(root, files) as scratch:
        spec, errors = check(scratch)
        problems = [f"the spec check refuses it: {error}" for error in errors]
        if spec is not None and not errors and name is not None:
            problems += _compile_problems(spec, name)
    return problems


def _compile_problems(spec: Spec, name: str) -> list[str]:
    from .render_validators import validator_roots
    from .validator_compiler import compile_validators

    event = spec.event_type(name)
    roots = [r for r in validator_roots(spec) if event is not None and r.name == event.identifier]
    try:
        compile_validators(schema_store(spec), roots)
    except Exception as exc:  # the compiler's own error names the node
        return [f"the validator compiler cannot compile the schema: {exc}"]
    return []


def _current_spec(root: Path) -> Spec:
    spec, errors = check(root)
    if spec is None or errors:
        raise RegistryError(["the spec source has errors before any change; fix them first:",
                             *(f"  {error}" for error in errors)])
    return spec


def prepare(root: Path, proposal: Proposal) -> Registration:
    """Judge a proposal whole; the registration to write, or RegistryError with every problem."""
    spec = _current_spec(root)
    name = proposal.name
    problems = _name_problems(name, spec, root)
    problems += _metadata_problems(proposal)
    problems += _reference_problems(proposal.reference, spec)
    problems += _lifecycle_problems(proposal.lifecycle, spec)
    problems += _checks_problems(proposal.checks, proposal.schema, spec)
    problems += _mappings_problems(proposal.mappings)
    if isinstance(name, str) and name:
        problems += _schema_problems(proposal.schema, name, spec)
    if problems:
        raise RegistryError(problems)
    own = proposal.schema if isinstance(proposal.schema, Mapping) else None
    document = build_schema(name, " ".join(str(proposal.description).split()), own)
    problems = _built_schema_problems(document, spec)
    if problems:
        raise RegistryError(problems)
    entry = build_entry(proposal, name)
    old_text = (root / EVENTS_FILE).read_text(encoding="utf-8")
    new_text, line = _appended(old_text, entry)
    old_entries = _plain(parse_yaml(old_text, EVENTS_FILE).get("entries"))
    new_entries = _plain(parse_yaml(new_text, EVENTS_FILE).get("entries"))
    if new_entries != [*old_entries, entry]:
        raise RegistryError([f"appending the entry to {EVENTS_FILE} does not give the entry back "
                             "(the file must end with its entries list)"])
    schema_text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    path = event_schema_path(name)
    problems = _scratch_problems(root, {EVENTS_FILE: new_text, path: schema_text}, name)
    if problems:
        raise RegistryError(problems)
    return Registration(name, entry, document, path, new_text, schema_text, line)


# -- writing --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _bindings_of(root: Path) -> Iterator[None]:
    """Let the example check's subprocess import the bindings generated under `root`, which
    for a copy of the project are not the installed ones."""
    bindings = str((root / GENERATED / "python").resolve())
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = bindings + (os.pathsep + old if old else "")
    try:
        yield
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def apply(root: Path, writes: Mapping[str, str], err: TextIO) -> list[tuple[str, str]]:
    """Write `writes` (path -> text), regenerate everything, and return the paths changed; on a
    failed regeneration, or any exception, restore every file and raise. A journal records the
    tree first, so that a kill at any instant is rolled back by the next command."""
    journal = Journal(root, writes)
    try:
        for path, text in writes.items():
            journal.write(path, text.encode("utf-8"))
        output = io.StringIO()
        with contextlib.redirect_stdout(output), _bindings_of(root):
            status = generate(root)
        if status != 0:
            err.write(output.getvalue())
            raise RegistryError(["regeneration failed (see above); every file touched has its "
                                 "previous bytes back"])
        changed = journal.changed()
    except BaseException:
        journal.rollback()
        raise
    journal.commit()
    return changed


def _describe_place(entry: Mapping[str, Any]) -> str:
    life = entry["lifecycle"]
    text = f"place {life['place']}"
    if "block_kind" in life:
        text += f", block kind {life['block_kind']}"
    if "per_block" in life:
        text += f", at most {life['per_block']} a block"
    if "closes_with" in life:
        text += f", its block closes with {life['closes_with']}"
    if "completes_block" in life:
        text += ", completes its block"
    if "fragment_of" in life:
        text += f", fragments of {life['fragment_of'].get('event')}"
    return text


def register(
    root: Path, proposal: Proposal, *, dry_run: bool = False,
    out: TextIO | None = None, err: TextIO | None = None,
) -> int:
    """`llm-stream registry add`: 0 registered (or, with dry_run, would be), 1 refused."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        registration = prepare(root, proposal)
    except RegistryError as exc:
        return _refused(exc, proposal.source, "registration", err)
    entry = registration.entry
    if dry_run:
        out.write(f"{registration.name} can be registered ({entry['status']}, "
                  f"{_describe_place(entry)}); nothing written (--dry-run).\n\n")
        out.write(f"{EVENTS_FILE}, appended at line {registration.entry_line}:\n\n")
        out.write(entry_text(entry) + "\n")
        out.write(f"{registration.schema_path}:\n\n{registration.schema_text}")
        return 0
    writes = {registration.schema_path: registration.schema_text,
              EVENTS_FILE: registration.registry_text}
    try:
        changed = apply(root, writes, err)
    except RegistryError as exc:
        return _refused(exc, proposal.source, "registration", err, written=True)
    out.write(f"registered {registration.name}: {entry['status']}, {_describe_place(entry)}\n")
    out.write(f"  created   {registration.schema_path}\n")
    out.write(f"  appended  {EVENTS_FILE} (the entry starts at line {registration.entry_line})\n")
    _write_generated(changed, writes, out)
    probe = _probe(registration.name)
    for what, path, needle in (
        ("model", "models.py", f"class {probe.class_name}("),
        ("validator", "validators.py", f"def validate_{probe.identifier}("),
        ("constant", "registry.py", f"{probe.identifier.upper()} = "),
        ("lifecycle", "lifecycle.py", f"{json.dumps(registration.name)}: "),
    ):
        full = root / GENERATED / "python" / "llm_stream" / path
        if needle in _read(full):
            shown = needle.removeprefix("class ").removeprefix("def ").rstrip("(: =")
            out.write(f"  {what:<9} {shown} in {full.relative_to(root).as_posix()}\n")
    folder = root / GENERATED / "registry"
    downloads = [f"event-types.{fmt}" for fmt in ("xml", "csv", "json")
                 if registration.name in _read(folder / f"event-types.{fmt}")]
    if downloads:
        out.write(f"  registry  {registration.name} in generated/registry/"
                  f"{{{','.join(downloads)}}}\n")
    out.write("checked: the spec source is consistent; every example is judged as tagged.\n")
    return 0


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _write_generated(changed: Sequence[tuple[str, str]], writes: Mapping[str, str],
                     out: TextIO) -> None:
    """The generated files a change created or removed, and how many it updated."""
    generated = [(path, how) for path, how in changed if path not in writes]
    for path, how in generated:
        if how != "updated":
            out.write(f"  {how:<9} {path}\n")
    updated = sum(1 for _, how in generated if how == "updated")
    if updated:
        out.write(f"  updated   {updated} generated file(s) (each names the hash of its "
                  "inputs)\n")


def _refused(
    exc: RegistryError, source: str, what: str, err: TextIO, *, written: bool = False,
) -> int:
    for problem in exc.problems:
        prefix = "" if problem.startswith(("  ", source)) else f"{source}: "
        err.write(f"error: {prefix}{problem}\n")
    count = sum(1 for p in exc.problems if not p.startswith("  "))
    if not written:
        err.write(f"{count} problem(s): the {what} is refused; nothing was written.\n")
    return 1


# -- deprecation ----------------------------------------------------------------------------------


def _deprecated_text(text: str, data: Any, name: str, reason: str) -> str:
    entries = data.get("entries") or []
    index = next((i for i, e in enumerate(entries) if e.get("name") == name), None)
    if index is None:
        raise RegistryError([f"no event type {name!r} is registered in {EVENTS_FILE}"])
    entry = entries[index]
    if entry.get("change_controller") == IETF:
        raise RegistryError([f"event type {name!r} is controlled by the IETF (change_controller "
                             "IETF): deprecating it takes a document of the IETF that updates "
                             "the standard, not a registration command (D-IETF-CONTROL)"])
    if entry.get("status") == "deprecated":
        raise RegistryError([f"event type {name!r} is already deprecated: "
                             f"{entry.get('deprecated_reason', '(no reason given)')}"])
    lines = text.splitlines(keepends=True)
    start = line_of(entry) - 1
    end = line_of(entries[index + 1]) - 1 if index + 1 < len(entries) else len(lines)
    indent = len(lines[start]) - len(lines[start].lstrip(" -"))
    pad = " " * indent
    status_at = next((i for i in range(start, end)
                      if re.match(rf"{pad}status:\s", lines[i]) or
                      (i == start and re.match(r"\s*-\s+status:\s", lines[i]))), None)
    if status_at is None:
        raise RegistryError([f"cannot find the status line of {name!r} in {EVENTS_FILE}"])
    keep = [i for i in range(start, end) if not re.match(rf"{pad}deprecated_reason:", lines[i])]
    new_member = "\n".join(_member("deprecated_reason", reason, indent)) + "\n"
    out: list[str] = lines[:start]
    for i in keep:
        if i == status_at:
            head = lines[i][: lines[i].index("status:")]
            out.append(f"{head}status: deprecated\n")
            out.append(new_member)
        else:
            out.append(lines[i])
    out += lines[end:]
    return "".join(out)


def deprecate(
    root: Path, name: str, reason: str, *, out: TextIO | None = None, err: TextIO | None = None,
) -> int:
    """`llm-stream registry deprecate`: status deprecated with deprecated_reason; 0 or 1."""
    out, err = out or sys.stdout, err or sys.stderr
    source = f"registry deprecate {name}"
    try:
        if not _text(reason):
            raise RegistryError(["a deprecation needs a reason (--reason): why, and what to use "
                                 "instead"])
        _current_spec(root)
        reason = " ".join(reason.split())
        old_text = (root / EVENTS_FILE).read_text(encoding="utf-8")
        old = parse_yaml(old_text, EVENTS_FILE)
        new_text = _deprecated_text(old_text, old, name, reason)
        wanted = _plain(old.get("entries"))
        for entry in wanted:
            if entry["name"] == name:
                entry["status"] = "deprecated"
                entry["deprecated_reason"] = reason
        if _plain(parse_yaml(new_text, EVENTS_FILE).get("entries")) != wanted:
            raise RegistryError([f"editing {EVENTS_FILE} as text does not give the intended "
                                 "entry; edit it by hand"])
        problems = _scratch_problems(root, {EVENTS_FILE: new_text}, None)
        if problems:
            raise RegistryError(problems)
        changed = apply(root, {EVENTS_FILE: new_text}, err)
    except RegistryError as exc:
        return _refused(exc, source, "deprecation", err)
    out.write(f"deprecated {name}: {reason}\n")
    out.write(f"  changed   {EVENTS_FILE} (status deprecated, deprecated_reason)\n")
    _write_generated(changed, {EVENTS_FILE: ""}, out)
    return 0


# -- listing --------------------------------------------------------------------------------------


def table(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns, the first row the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n" for row in rows
    )


def list_event_types(root: Path, *, reserved: bool = False, out: TextIO | None = None,
                     err: TextIO | None = None) -> int:
    """`llm-stream registry list`: the event types as a table (or the reserved names)."""
    out, err = out or sys.stdout, err or sys.stderr
    if reserved:
        rows: list[tuple[str, ...]] = [("RESERVED", "WHY")]
        rows += [(name, why) for name, why in RESERVED_NAMES.items()]
        rows += [(prefix + "*", why) for prefix, why in RESERVED_PREFIXES.items()]
        out.write(table(rows))
        return 0
    from .load import load

    try:
        spec = load(root)
    except (SourceError, OSError) as exc:
        err.write(f"error: {exc}\n")
        return 1
    header: tuple[str, ...] = ("NAME", "STATUS", "PLACE", "REFERENCE")
    listed = [header]
    for event in spec.event_types:
        life = event.lifecycle
        place = life.place + (f" ({life.block_kind})" if life.block_kind else "")
        listed.append((event.name, event.status, place, event.reference))
    out.write(table(listed))
    return 0
