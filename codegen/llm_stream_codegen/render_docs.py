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

This module chooses the pages and hands each its data; what the data is made of is in modules of
its own: `docs_links` (page paths, anchors, links), `docs_fields` (field tables), `docs_lifecycle`
(the lifecycle, derived) and `docs_examples` (the examples as printed).

The hand-written pages and the mkdocs configuration live in site/; site/hooks.py adds these pages
and the registry downloads of `render_registry` to the build.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment

from .docs_examples import (
    ShownExample,
    event_examples,
    event_instances,
    example_values,
    json_or_none,
    shown,
)
from .docs_fields import field_rows, node_ids, schema_json, schema_rule_ids
from .docs_lifecycle import diagram, events_by_place, follows, lifecycle_order, neighbours
from .docs_links import (
    DECISIONS_PAGE,
    EVENTS_INDEX,
    LIFECYCLE_PAGE,
    MEDIA_TYPES_PAGE,
    REGISTRIES_INDEX,
    REQUEST_PAGE,
    RULES_PAGE,
    SPEC_PAGE,
    Links,
    cell,
    code,
    decision_anchor,
    event_page,
    prose,
    registry_page,
    rule_anchor,
    schema_anchor,
    slug,
    value_anchor,
)
from .model import (
    ENVELOPE_ID,
    URN,
    VENDORS,
    EventType,
    Rule,
    SchemaDoc,
    Spec,
    VendorMap,
)
from .render_mappings import MAPPINGS_INDEX, mapping_page, shown_rows, vendor_values
from .render_registry import RegistryTable, registry_tables
from .rendering import Artifact, inputs_hash, markup_header, new_environment, template_dir
from .schema_walk import iter_nodes

DOCS_OUT = "generated/docs"
MACROS = "docs/macros.md.j2"
REQUEST_ID = URN + "request:1.0"

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


def short_title(spec: Spec, title: str) -> str:
    """A registry's title without the standard's name, and without "SSE", so that event types
    have one name across the site: "LLM-Stream Stop Reasons" -> "Stop reasons"."""
    short = title.removeprefix(spec.meta.short_title + " ").removeprefix("SSE ")
    words = short.split(" ")
    return " ".join([words[0], *(w if w.isupper() else w.lower() for w in words[1:])])


def _ordered_rules(spec: Spec, ids: Iterable[str]) -> list[Rule]:
    wanted = set(ids)
    return [rule for rule in spec.rules.values() if rule.id in wanted]


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
                rule = next((spec.rules[r] for r in node_ids(sub, "x-rule") if r in spec.rules),
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
                 example_values(json_or_none(e.text) for e in examples if e.language == "json"))
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


__all__ = ["DOCS_OUT", "render_docs"]
