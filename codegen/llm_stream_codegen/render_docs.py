"""The documentation site's generated pages: markdown under generated/docs, a template a page kind.

Every page is data from the spec put through a small jinja template of codegen/templates/docs (in
the manner of OpenTelemetry's semantic-conventions registry templates); nothing here is prose of
the draft. What a page derives, it derives here and hands to the template ready to print:

- field tables come from the schemas (an event's own fields joined with the envelope's through its
  `allOf` `$ref`, conditional requirements read from `if`/`then`);
- what may precede and follow an event type comes from the lifecycle tables (the stream machine's
  transitions by place, and the places of the event types), never from a hand-written list;
- the examples are the spec's example files, printed byte for byte (line ends excepted, which are
  named), and an event type's examples are the valid streams that contain it.

The hand-written pages and the mkdocs configuration live in site/; site/hooks.py adds these pages
and the registry downloads of `render_registry` to the build.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment

from .model import (
    ENVELOPE_ID,
    URN,
    VENDORS,
    EventType,
    Example,
    Rule,
    SchemaDoc,
    Spec,
    StateMachine,
    VendorMap,
)
from .render_diagram import state_diagram
from .render_mappings import MAPPINGS_INDEX, mapping_page, shown_rows, vendor_values
from .render_registry import RegistryTable, registry_tables
from .rendering import Artifact, inputs_hash, markup_header, new_environment, template_dir
from .schema_walk import iter_nodes, resolve_ref

DOCS_OUT = "generated/docs"
MACROS = "docs/macros.md.j2"
SPEC_PAGE = "spec/index.md"
DECISIONS_PAGE = "spec/decisions.md"
RULES_PAGE = "spec/rules.md"
LIFECYCLE_PAGE = "spec/lifecycle.md"
REQUEST_PAGE = "spec/request.md"
MEDIA_TYPES_PAGE = "spec/media-types.md"
EVENTS_INDEX = "events/index.md"
REGISTRIES_INDEX = "registries/index.md"
REQUEST_ID = URN + "request:1.0"
STREAM_EXAMPLE_FOLDERS = ("complete/", "valid-extra/")
# The sections whose rules bind every event, listed on every event page.
EVERY_EVENT_SECTIONS = ("sse-framing", "event-envelope")
# The draft's appendix that prints the envelope schema; the spec page prints ours under it.
APPENDIX_ENVELOPE = "appendix-envelope-schema"
# The documents the site refers to, by key: (title, address).
REFERENCES = {
    "draft": ("draft-spk-agentproto-llm-stream: A Standard Wire Format for Large Language Model "
              "Inference Streaming (the normative text)",
              "https://santoshpallagatti.github.io/draft-spk-agentproto-llm-stream/"
              "draft-spk-agentproto-llm-stream.html"),
    "sse": ("WHATWG HTML Living Standard, section 9.2: Server-sent events (the SSE framing)",
            "https://html.spec.whatwg.org/multipage/server-sent-events.html"),
    "rfc8126": ("RFC 8126: Guidelines for Writing an IANA Considerations Section in RFCs "
                "(Specification Required)", "https://www.rfc-editor.org/rfc/rfc8126"),
    "rfc6838": ("RFC 6838: Media Type Specifications and Registration Procedures",
                "https://www.rfc-editor.org/rfc/rfc6838"),
    "bcp14": ("BCP 14 (RFC 2119, RFC 8174): the requirement keywords",
              "https://www.rfc-editor.org/info/bcp14"),
    "json-schema": ("JSON Schema 2020-12 (the schemas under schemas/)",
                    "https://json-schema.org/draft/2020-12"),
}
# The labels of RFC 6838's registration template (section 5.6), in its order.
MEDIA_TEMPLATE_LABELS = {
    "type_name": "Type name",
    "subtype_name": "Subtype name",
    "required_parameters": "Required parameters",
    "optional_parameters": "Optional parameters",
    "encoding_considerations": "Encoding considerations",
    "security_considerations": "Security considerations",
    "interoperability_considerations": "Interoperability considerations",
    "published_specification": "Published specification",
    "applications": "Applications that use this media type",
    "fragment_identifiers": "Fragment identifier considerations",
    "additional_information": "Additional information",
    "contact": "Person & email address to contact for further information",
    "intended_usage": "Intended usage",
    "restrictions_on_usage": "Restrictions on usage",
    "author": "Author",
    "change_controller": "Change controller",
}


def slug(text: str) -> str:
    """An anchor for free text such as a media type: lowercase, runs of other characters to -."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def value_anchor(value: str) -> str:
    """A registered value's anchor on its registry page: the value itself where it can be."""
    return value if re.fullmatch(r"[A-Za-z0-9_.-]+", value) else slug(value)


def rule_anchor(rule_id: str) -> str:
    return rule_id.lower()


def decision_anchor(decision_id: str) -> str:
    return "decision-" + decision_id.lower()


def event_page(name: str) -> str:
    return f"events/{name}.md"


def registry_page(name: str) -> str:
    return f"registries/{name}.md"


def schema_anchor(schema_id: str) -> str:
    """`urn:ietf:params:llm-stream:content-part:1.0` -> `content-part`."""
    return schema_id.removeprefix(URN).rsplit(":", 1)[0]


def short_title(spec: Spec, title: str) -> str:
    """A registry's title without the standard's name, and without "SSE", so that event types
    have one name across the site: "LLM-Stream Stop Reasons" -> "Stop reasons"."""
    short = title.removeprefix(spec.meta.short_title + " ").removeprefix("SSE ")
    words = short.split(" ")
    return " ".join([words[0], *(w if w.isupper() else w.lower() for w in words[1:])])


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def _outside_code(text: str, change: Any) -> str:
    """Apply `change` to the parts of markdown `text` that are not inside code spans."""
    out, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        out += [change(text[last:match.start()]), match.group(0)]
        last = match.end()
    out.append(change(text[last:]))
    return "".join(out)


def prose(text: object) -> str:
    """Source text as markdown prose: a `<` is text, never the start of an HTML tag."""
    return _outside_code(str(text), lambda part: part.replace("<", "&lt;"))


def cell(text: object) -> str:
    """Text safe inside a markdown table cell: one line, pipes outside code spans escaped."""
    one_line = " ".join(str(text).split())
    return _outside_code(one_line, lambda part: part.replace("<", "&lt;").replace("|", "\\|"))


def code(value: str) -> str:
    """Inline code that survives any backticks inside it."""
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


# -- links ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Links:
    """Relative markdown links from one generated page to every kind of target of the site."""

    spec: Spec
    page: str

    def to(self, target: str, anchor: str = "") -> str:
        path, _, own = target.partition("#")
        anchor = anchor or own
        if path == self.page:
            return f"#{anchor}" if anchor else posixpath.basename(path)
        relative = posixpath.relpath(path, posixpath.dirname(self.page) or ".")
        return f"{relative}#{anchor}" if anchor else relative

    def rule(self, rule_id: str) -> str:
        if rule_id not in self.spec.rules:
            raise KeyError(f"{self.page}: no rule {rule_id}")
        return f"[{rule_id}]({self.to(SPEC_PAGE, rule_anchor(rule_id))})"

    def decision(self, decision_id: str) -> str:
        if all(d.id != decision_id for d in self.spec.decisions):
            raise KeyError(f"{self.page}: no decision {decision_id}")
        return f"[{decision_id}]({self.to(DECISIONS_PAGE, decision_anchor(decision_id))})"

    def rule_or_decision(self, identifier: str) -> str:
        if identifier in self.spec.rules:
            return self.rule(identifier)
        return self.decision(identifier)

    def section(self, anchor: str, *, number_only: bool = False) -> str:
        section = self.spec.section(anchor)
        if section is None:
            return anchor
        text = f"§{section.number}" if number_only else f"§{section.number} {section.title}"
        return f"[{text}]({self.to(SPEC_PAGE, anchor)})"

    def reference(self, reference: str) -> str:
        """A registry entry's reference ("#section" or "#decision-...") as a link."""
        anchor = reference.removeprefix("#")
        if self.spec.section(anchor) is not None:
            return self.section(anchor, number_only=False)
        for decision in self.spec.decisions:
            if anchor == decision_anchor(decision.id):
                return f"{self.decision(decision.id)} (decision)"
        return reference

    def event(self, name: str) -> str:
        if self.spec.event_type(name) is None:
            return code(name)
        return f"[{code(name)}]({self.to(event_page(name))})"

    def registry(self, name: str, text: str) -> str:
        return f"[{text}]({self.to(registry_page(name))})"

    def schema(self, schema_id: str, text: str) -> str:
        target = EVENTS_INDEX if schema_id == ENVELOPE_ID else REQUEST_PAGE
        for event in self.spec.event_types:
            if event.schema_id == schema_id:
                target = event_page(event.name)
                return f"[{text}]({self.to(target)})"
        return f"[{text}]({self.to(target, schema_anchor(schema_id))})"


# -- schemas to field tables ----------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRow:
    name: str
    type: str
    required: str
    description: str
    rules: tuple[str, ...]


def _node_ids(node: Mapping[str, Any], key: str) -> list[str]:
    value = node.get(key)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _refs_of(node: Mapping[str, Any]) -> list[str]:
    """The rule and decision IDs a schema node carries, its allOf members' included: `x-rule`
    (the rule a breach found by the node's keywords breaks), `x-decision`, and `x-see` (rules
    about the field that no keyword of the schema can check, named for the reader)."""
    ids = _node_ids(node, "x-rule") + _node_ids(node, "x-see") + _node_ids(node, "x-decision")
    for member in node.get("allOf") or ():
        if isinstance(member, Mapping) and "$ref" not in member:
            ids += _node_ids(member, "x-rule") + _node_ids(member, "x-decision")
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
        found += [*_node_ids(node, "x-rule"), *_node_ids(node, "x-see"),
                  *_node_ids(node, "x-decision")]
    return list(dict.fromkeys(found))


def _ordered_rules(spec: Spec, ids: Iterable[str]) -> list[Rule]:
    wanted = set(ids)
    return [rule for rule in spec.rules.values() if rule.id in wanted]


# -- the lifecycle, derived -----------------------------------------------------------------------


def lifecycle_order(spec: Spec) -> list[EventType]:
    """The event types in the order a stream meets them: by place, then as registered."""
    places = list(spec.lifecycle.places)
    return sorted(spec.event_types, key=lambda event: places.index(event.lifecycle.place))


def events_by_place(spec: Spec) -> dict[str, list[EventType]]:
    places: dict[str, list[EventType]] = {name: [] for name in spec.lifecycle.places}
    for event in spec.event_types:
        places.setdefault(event.lifecycle.place, []).append(event)
    return places


def _entered(machine: StateMachine, place: str) -> tuple[set[str], set[str]]:
    """(states in which an event of `place` may arrive, states it leaves the machine in)."""
    before = {state for state, moves in machine.transitions.items() if place in moves}
    after = {machine.transitions[state][place] for state in before}
    return before, after


@dataclass(frozen=True)
class Neighbours:
    """What may come right before and right after an event type, by the stream machine."""

    arrives_in: tuple[str, ...]
    leaves_in: tuple[str, ...]
    preceded_by: tuple[str, ...]
    followed_by: tuple[str, ...]
    first: bool
    last: bool
    violations: tuple[tuple[str, str], ...]
    """(state, rule) where an event of this place breaks a rule."""
    block_moves: tuple[tuple[str, str], ...]
    """(block state before, after) at the event's index, for block events."""
    block_violations: tuple[tuple[str, str], ...]


def neighbours(spec: Spec, event: EventType) -> Neighbours:
    machine, place = spec.lifecycle.stream, event.lifecycle.place
    arrives, leaves = _entered(machine, place)
    follows = [
        other.name for other in spec.event_types
        if any(other.lifecycle.place in machine.transitions.get(state, {}) for state in leaves)
    ]
    precedes = [
        other.name for other in spec.event_types
        if any(machine.transitions.get(state, {}).get(other.lifecycle.place) in arrives
               for state in machine.transitions)
    ]
    violations = []
    for state in machine.transitions:
        if state in arrives:
            continue
        rule = machine.violation(state, place)
        if rule is not None:
            violations.append((state, rule))
    blocks = spec.lifecycle.blocks
    block_moves = tuple((state, moves[place]) for state, moves in blocks.transitions.items()
                        if place in moves)
    block_violations: list[tuple[str, str]] = []
    if block_moves:
        for state, moves in blocks.transitions.items():
            rule = None if place in moves else blocks.violation(state, place)
            if rule is not None:
                block_violations.append((state, rule))
    return Neighbours(
        arrives_in=tuple(s for s in machine.transitions if s in arrives),
        leaves_in=tuple(s for s in machine.transitions if s in leaves),
        preceded_by=tuple(precedes),
        followed_by=tuple(follows),
        first=machine.initial in arrives,
        last=all(not machine.transitions.get(state) for state in leaves),
        violations=tuple(violations),
        block_moves=block_moves,
        block_violations=tuple(block_violations),
    )


def diagram(spec: Spec, machine: StateMachine, title: str) -> str:
    """A lifecycle machine as inline SVG, its arrows' tooltips naming the event types of each
    place."""
    by_place = {place: [e.name for e in events] for place, events in events_by_place(spec).items()}
    return state_diagram(machine, by_place, title)


def follows(spec: Spec) -> list[tuple[str, list[str]]]:
    """For each event type, the event types that may come right after it."""
    return [(event.name, list(neighbours(spec, event).followed_by)) for event in spec.event_types]


# -- examples -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SSEBlock:
    type: str
    text: str
    first_line: int
    last_line: int


@dataclass(frozen=True)
class ShownExample:
    example: Example
    text: str
    language: str
    line_ends: str
    relevant: str = ""
    highlight: str = ""
    also_in: tuple[Example, ...] = field(default_factory=tuple)
    pretty: str = ""
    """The picked events' JSON envelopes, pretty-printed, one after another."""


def _line_ends(raw: bytes) -> str:
    if b"\r\n" in raw:
        return "CRLF"
    if b"\r" in raw:
        return "CR"
    return "LF"


def _as_text(raw: bytes) -> str:
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def sse_blocks(text: str) -> list[SSEBlock]:
    """The events of an SSE body: the lines between blank lines, with their type."""
    blocks: list[SSEBlock] = []
    current: list[str] = []
    start = 1
    for number, line in enumerate([*text.split("\n"), ""], start=1):
        if line:
            if not current:
                start = number
            current.append(line)
            continue
        if current:
            kind = ""
            for item in current:
                if item.startswith("event:"):
                    kind = item[6:].removeprefix(" ")
            if not kind:
                for item in current:
                    if item.startswith("data:"):
                        try:
                            data = json.loads(item[5:])
                        except ValueError:
                            continue
                        if isinstance(data, dict):
                            kind = str(data.get("type", ""))
            blocks.append(SSEBlock(kind, "\n".join(current) + "\n", start, number - 1))
            current = []
    return blocks


def _language(file: str) -> str:
    return {"json": "json", "http": "http"}.get(file.rsplit(".", 1)[-1], "text")


def shown(example: Example) -> ShownExample:
    raw = example.content
    return ShownExample(example, _as_text(raw), _language(example.file), _line_ends(raw))


def stream_examples(spec: Spec) -> list[Example]:
    """The valid .sse streams of spec/examples (complete/ and valid-extra/)."""
    return [
        e for e in spec.examples
        if e.file.startswith(STREAM_EXAMPLE_FOLDERS) and e.file.endswith(".sse") and e.valid
    ]


def event_examples(spec: Spec, name: str) -> list[ShownExample]:
    """The example streams with an event of type `name`, with those events picked out; a stream
    whose picked events are the same as an earlier one's is named under it, not repeated."""
    result: list[ShownExample] = []
    for example in stream_examples(spec):
        whole = shown(example)
        picked = [b for b in sse_blocks(whole.text) if b.type == name]
        if not picked:
            continue
        relevant = "\n".join(block.text for block in picked)
        same = next((r for r in result if r.relevant == relevant), None)
        if same is not None:
            result[result.index(same)] = replace(same, also_in=(*same.also_in, example))
            continue
        lines = [str(n) for b in picked for n in range(b.first_line, b.last_line + 1)]
        pretty = "\n\n".join(json.dumps(data, indent=2, ensure_ascii=False)
                              for data in map(block_data, picked) if data is not None)
        result.append(ShownExample(example, whole.text, "text", whole.line_ends, relevant,
                                   " ".join(lines), pretty=pretty))
    return result


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def block_data(block: SSEBlock) -> Any:
    """The JSON of an SSE event's data lines (joined as SSE joins them), or None."""
    return _json_or_none("\n".join(line[5:].removeprefix(" ") for line in block.text.split("\n")
                                    if line.startswith("data:")))


EXAMPLE_WIDTH = 20


def _example_text(value: Any) -> str | None:
    """A field's value as a short JSON example, or None for an object (its fields have rows of
    their own) or a value too long to be read at a glance."""
    if isinstance(value, dict):
        return None
    if isinstance(value, str) and len(value) > EXAMPLE_WIDTH:
        return json.dumps(value[:EXAMPLE_WIDTH - 4], ensure_ascii=False)[:-1] + '…"'
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= EXAMPLE_WIDTH + 8 else None


def example_values(instances: Iterable[Any]) -> dict[str, str]:
    """For each field path (`delta.text`), the first value the instances give it, as JSON."""
    found: dict[str, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            path = prefix + str(key)
            if path not in found:
                text = _example_text(value)
                if text is not None:
                    found[path] = text
            walk(value, path + ".")

    for instance in instances:
        walk(instance, "")
    return found


def event_instances(spec: Spec, name: str | None = None) -> list[Any]:
    """The events of the valid example streams, of one type or of every type."""
    return [
        data for example in stream_examples(spec)
        for block in sse_blocks(shown(example).text)
        if name is None or block.type == name
        for data in [block_data(block)] if data is not None
    ]


# -- pages ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    """The page's title in the navigation and the browser (front matter)."""
    template: str
    context: Mapping[str, Any]
    order: int | None = None
    """The page's place among its folder's pages in the navigation (front matter `nav_order`)."""
    status: str | None = None
    """A registration status, shown as a badge beside the page in the navigation."""


def _request_groups(spec: Spec) -> list[SchemaDoc]:
    """The request's structures, breadth first from the request envelope along its $refs."""
    order = [REQUEST_ID]
    queue = [REQUEST_ID]
    while queue:
        current = spec.schemas[queue.pop(0)]
        for _, node in iter_nodes(current.document):
            ref = node.get("$ref")
            if (isinstance(ref, str) and ref in spec.schemas and ref not in order
                    and spec.schemas[ref].path is not None):
                order.append(ref)
                queue.append(ref)
    return [spec.schemas[schema_id] for schema_id in order]


def _group_examples(spec: Spec, section: str) -> list[ShownExample]:
    """The draft's printed examples of a request section, each followed by its complete forms."""
    by_file = {e.file: e for e in spec.examples}
    result: list[ShownExample] = []
    for example in spec.examples:
        if example.section != section or not example.printed:
            continue
        result.append(shown(example))
        result += [shown(by_file[f]) for f in example.complete if f in by_file]
    return result


def _event_rules(spec: Spec, event: EventType) -> list[Rule]:
    document = spec.schemas[event.schema_id].document
    section = str(document.get("x-section", event.reference.removeprefix("#")))
    ids = {rule.id for rule in spec.rules.values() if rule.section == section}
    ids |= set(schema_rule_ids(document)) & set(spec.rules)
    ids |= {check.rule for check in event.checks}
    life = event.lifecycle
    if life.expected_rule:
        ids.add(life.expected_rule)
    if life.block_kind:
        ids.add(spec.lifecycle.block_kind_rule)
    if life.closes_with:
        ids.add(spec.lifecycle.closes_with_rule)
    if life.completes_block:
        ids.add(life.completes_block)
    if life.fragment_of:
        ids.add(life.fragment_of.rule)
    # What every event obeys: its SSE framing and its envelope.
    ids |= {rule.id for rule in spec.rules.values() if rule.section in EVERY_EVENT_SECTIONS}
    ids |= set(schema_rule_ids(spec.schemas[ENVELOPE_ID].document)) & set(spec.rules)
    return _ordered_rules(spec, ids)


def _vocabulary_rules(spec: Spec, schema_id: str) -> list[tuple[str, str, Rule | None]]:
    """Where a value registry is used: (schema title, field, rule) for each $ref to it."""
    uses = []
    for document in spec.schemas.values():
        if document.path is None:
            continue
        for name, sub in (document.document.get("properties") or {}).items():
            if isinstance(sub, Mapping) and sub.get("$ref") == schema_id:
                rule = next((spec.rules[r] for r in _node_ids(sub, "x-rule") if r in spec.rules),
                            None)
                uses.append((document.title, name, rule))
    return uses


def _see_also(spec: Spec, tables: Iterable[RegistryTable]) -> dict[str, list[str]]:
    """For each section anchor, the generated pages that document what it defines."""
    links = Links(spec, SPEC_PAGE)
    found: dict[str, list[str]] = {}

    def add(reference: str, text: str, target: str, anchor: str = "") -> None:
        found.setdefault(reference.removeprefix("#"), []).append(
            f"[{text}]({links.to(target, anchor)})")

    for event in spec.event_types:
        document = spec.schemas[event.schema_id].document
        add(str(document.get("x-section", event.reference)), f"the {code(event.name)} event page",
            event_page(event.name))
    envelope = spec.schemas[ENVELOPE_ID]
    add(str(envelope.document.get("x-section", "")), "the event envelope", EVENTS_INDEX,
        "event-envelope")
    for group in _request_groups(spec):
        add(str(group.document.get("x-section", "")), f"the request reference: {group.title}",
            REQUEST_PAGE, schema_anchor(group.id))
    for media in spec.media_types:
        add(media.reference, f"the {code(media.name)} registration", MEDIA_TYPES_PAGE,
            slug(media.name))
    for table in tables:
        add(table.xref.anchor, f"the {table.title} registry", registry_page(table.id))
    for registry in spec.value_registries.values():
        add(registry.reference, f"the {registry.field} values", registry_page(registry.name))
    add("lifecycle", "the lifecycle tables and diagrams", LIFECYCLE_PAGE)
    return {anchor: list(dict.fromkeys(items)) for anchor, items in found.items()}


def pages(spec: Spec) -> list[Page]:
    tables = {table.id: table for table in registry_tables(spec)}
    rules_by_section: dict[str, list[Rule]] = {}
    for rule in spec.rules.values():
        rules_by_section.setdefault(rule.section, []).append(rule)
    result = [
        Page(SPEC_PAGE, "Specification", "docs/spec.md.j2", {
            "rules_by_section": rules_by_section,
            "see_also": _see_also(spec, tables.values()),
            "section_schemas": {APPENDIX_ENVELOPE: (spec.schemas[ENVELOPE_ID],
                                                    schema_json(spec.schemas[ENVELOPE_ID]))},
        }),
        Page(DECISIONS_PAGE, "Decisions", "docs/decisions.md.j2", {}),
        Page(RULES_PAGE, "Rules index", "docs/rules.md.j2", {}),
        Page(LIFECYCLE_PAGE, "Stream lifecycle", "docs/lifecycle.md.j2", {
            "by_place": events_by_place(spec),
            "stream_diagram": diagram(spec, spec.lifecycle.stream, "The stream's states"),
            "blocks_diagram": diagram(spec, spec.lifecycle.blocks, "A content block's states"),
            "follows": follows(spec),
        }),
        Page(REQUEST_PAGE, "Request reference", "docs/request.md.j2", {
            "groups": [
                (group, field_rows(spec, Links(spec, REQUEST_PAGE), group), examples,
                 example_values(_json_or_none(e.text) for e in examples if e.language == "json"))
                for group in _request_groups(spec)
                for examples in [_group_examples(spec, str(group.document.get("x-section", "")))]
            ],
        }),
        Page(MEDIA_TYPES_PAGE, "Media types", "docs/media-types.md.j2",
             {"labels": MEDIA_TEMPLATE_LABELS}),
        Page(EVENTS_INDEX, "Event types", "docs/events-index.md.j2", {
            "envelope": spec.schemas[ENVELOPE_ID],
            "envelope_rows": field_rows(spec, Links(spec, EVENTS_INDEX), spec.schemas[ENVELOPE_ID]),
            "envelope_values": example_values(event_instances(spec)),
            "ordered": lifecycle_order(spec),
            "envelope_json": schema_json(spec.schemas[ENVELOPE_ID]),
        }),
        Page(REGISTRIES_INDEX, "Registries", "docs/registries-index.md.j2",
             {"tables": list(tables.values())}),
        Page(MAPPINGS_INDEX, "Vendor mappings", "docs/mappings-index.md.j2", {}),
    ]
    for mappings in spec.mappings.values():
        result.append(Page(mapping_page(mappings.format), mappings.title, "docs/mapping.md.j2", {
            "mappings": mappings,
            "tables": [(m, shown_rows(m, _value_links(spec, m, mapping_page(mappings.format))))
                       for m in mappings.maps.values()],
            "examples": _worked_examples(spec, mappings.format),
        }))
    for order, event in enumerate(lifecycle_order(spec)):
        path = event_page(event.name)
        document = spec.schemas[event.schema_id]
        result.append(Page(path, event.name, "docs/event.md.j2", {
            "event": event,
            "schema": document,
            "rows": field_rows(spec, Links(spec, path), document),
            "values": example_values(event_instances(spec, event.name)),
            "schema_download": f"schemas/{posixpath.relpath(event.schema_path, 'schemas')}",
            "near": neighbours(spec, event),
            "examples": event_examples(spec, event.name),
            "rules": _event_rules(spec, event),
        }, order=order, status=event.status))
    for table in tables.values():
        registry = spec.value_registries.get(table.id)
        result.append(Page(registry_page(table.id), short_title(spec, table.title),
                           "docs/registry.md.j2", {
            "table": table,
            "registry": registry,
            "uses": _vocabulary_rules(spec, registry.schema_id) if registry else [],
            "vendor_values": {entry.value: vendor_values(spec, table.id, entry.value)
                              for entry in registry.entries} if registry else {},
        }))
    return result


def _worked_examples(spec: Spec, fmt: str) -> list[tuple[ShownExample, ShownExample]]:
    """The vendor streams of a format, each with the LLM-Stream body it translates into (the
    spec check holds the two to each other byte for byte)."""
    by_file = {e.file: e for e in spec.examples}
    return [(shown(e), shown(by_file[e.translation["into"]])) for e in spec.examples
            if e.translation is not None and e.translation["format"] == fmt]


def _value_links(spec: Spec, vendor_map: VendorMap, page: str) -> dict[str, str]:
    """Links from a map's LLM-Stream values to where each is defined: the registry page's
    section of each."""
    links = Links(spec, page)
    if vendor_map.registry is None:
        return {}
    registry = spec.value_registries.get(vendor_map.registry)
    if registry is None:
        return {}
    target = registry_page(vendor_map.registry)
    return {v: links.to(target, value_anchor(v)) for v in registry.values}


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def tidy(markdown: str) -> str:
    """Collapse the runs of blank lines that templates leave, except inside fenced code, and end
    the text with exactly one newline."""
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        match = _FENCE.match(line)
        if match and (fence is None or match.group(1).startswith(fence)):
            fence = match.group(1) if fence is None else None
        elif fence is None and not line.strip() and out and not out[-1].strip():
            continue
        out.append(line if fence is not None or line.strip() else "")
    return "\n".join(out).strip("\n") + "\n"


@cache
def docs_environment(templates: Path) -> Environment:
    """The environment of the pages, with their filters, made once for every page."""
    env = new_environment()
    env.filters["cell"] = cell
    env.filters["code"] = code
    env.filters["prose"] = prose
    env.globals.update(references=REFERENCES, slug=slug, rule_anchor=rule_anchor,
                       decision_anchor=decision_anchor, schema_anchor=schema_anchor,
                       value_anchor=value_anchor, vendors=VENDORS, mapping_page=mapping_page,
                       mappings_index=MAPPINGS_INDEX,
                       group_rules=lambda group: schema_rule_ids(group.document))
    return env


def render_page(spec: Spec, page: Page) -> Artifact:
    env = docs_environment(template_dir())
    links = Links(spec, page.path)
    body = env.get_template(page.template).render(spec=spec, links=links, page=page.path,
                                                  title=page.title, **page.context)
    header = markup_header(spec, f"the spec source and codegen/templates/{page.template}",
                           inputs_hash(spec, page.template, MACROS))
    front = f"---\ntitle: {json.dumps(page.title)}\n"
    if page.order is not None:
        front += f"nav_order: {page.order}\n"
    if page.status is not None:
        front += f"status: {page.status}\n"
    front += "---\n"
    text = front + header + "\n" + tidy(body)
    return Artifact(f"{DOCS_OUT}/{page.path}", text.encode())


def render_docs(spec: Spec) -> Iterator[Artifact]:
    """Every generated page of the documentation site, under generated/docs."""
    for page in pages(spec):
        yield render_page(spec, page)


__all__ = [
    "DOCS_OUT",
    "FieldRow",
    "Links",
    "decision_anchor",
    "diagram",
    "event_examples",
    "event_page",
    "field_rows",
    "neighbours",
    "render_docs",
    "rule_anchor",
    "slug",
    "sse_blocks",
]
