"""Load spec/, schemas/ and registry/ into one resolved, immutable `Spec`.

Loading only reads and joins; judging consistency is `check`'s job. Anything that would make the
join impossible (a missing file, a malformed entry) raises `SourceError` naming file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .model import (
    REGISTRY_URN,
    VENDORS,
    Decision,
    EventCheck,
    EventLifecycle,
    EventType,
    Example,
    FormatMappings,
    Fragments,
    Lifecycle,
    MapRow,
    MediaType,
    Place,
    Rule,
    SchemaDoc,
    Section,
    Spec,
    SpecMeta,
    StateMachine,
    ValueEntry,
    ValueRegistry,
    VendorMap,
    Where,
)
from .source_files import (
    EXAMPLES_FILE,
    REGISTRY_DIR,
    SOURCE_DIRS,
    SPEC_FILE,
    SourceFiles,
    read_source,
)
from .sources import SourceError, line_of

VALUE_REGISTRIES = ("stop-reasons", "error-codes", "roles", "content-part-types")


def _require(entry: Mapping[str, Any], key: str, where: Where) -> Any:
    if key not in entry:
        raise SourceError(where.path, where.line, f"missing member {key!r}")
    return entry[key]


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


def _value_registry(name: str, data: Mapping[str, Any], display: str) -> ValueRegistry:
    entries = tuple(
        ValueEntry(
            value=entry["value"],
            description=entry["description"],
            reference=entry["reference"],
            status=entry["status"],
            date=entry["date"],
            reason=entry.get("reason"),
            deprecated_reason=entry.get("deprecated_reason"),
        )
        for entry in data["entries"]
    )
    return ValueRegistry(
        name=name,
        title=data["title"],
        field=data.get("field", ""),
        reference=data["reference"],
        entries=entries,
        where=Where(display, line_of(data)),
    )


def registry_value_schema(registry: ValueRegistry) -> SchemaDoc:
    """The schema that `$ref`s to a value registry resolve to: a string enum of its values."""
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": registry.schema_id,
        "title": registry.title,
        "description": f"A registered {registry.field or registry.name} "
                       f"(registry/{registry.name}.yaml).",
        "type": "string",
        "enum": list(registry.values),
    }
    return SchemaDoc(registry.schema_id, None, MappingProxyType(document))


def event_type_of(entry: Mapping[str, Any], display: str) -> EventType:
    where = Where(display, line_of(entry))
    life = _require(entry, "lifecycle", where)
    expected = life.get("expected") or {}
    schema_path = _require(entry, "schema", where)
    name = _require(entry, "name", where)
    return EventType(
        name=name,
        description=_require(entry, "description", where),
        schema_path=schema_path,
        schema_id=f"urn:ietf:params:llm-stream:event:{name}:1.0",
        reference=_require(entry, "reference", where),
        status=_require(entry, "status", where),
        date=_require(entry, "date", where),
        change_controller=_require(entry, "change_controller", where),
        lifecycle=EventLifecycle(
            place=life["place"],
            block_kind=life.get("block_kind"),
            per_block=life.get("per_block"),
            closes_with=life.get("closes_with"),
            expected_min=expected.get("min"),
            expected_rule=expected.get("rule"),
            completes_block=life.get("completes_block"),
            fragment_of=_fragments(life.get("fragment_of")),
        ),
        checks=tuple(
            EventCheck(c["check"], c["field"], c["rule"]) for c in entry.get("checks", [])
        ),
        mappings=_frozen(entry.get("mappings")),
        where=where,
        contact=entry.get("contact"),
        reason=entry.get("reason"),
        deprecated_reason=entry.get("deprecated_reason"),
    )


def _fragments(data: Mapping[str, Any] | None) -> Fragments | None:
    if data is None:
        return None
    return Fragments(
        event=data["event"],
        field=data["field"],
        carries=tuple(data.get("carries", ())),
        unless_stop_reason=data.get("unless_stop_reason"),
        rule=data["rule"],
    )


def _machine(data: Mapping[str, Any]) -> StateMachine:
    return StateMachine(
        initial=data["initial"],
        final=data.get("final"),
        states=_frozen(data["states"]),
        transitions=_frozen({k: _frozen(v) for k, v in data["transitions"].items()}),
        violations=_frozen({k: _frozen(v) for k, v in data["violations"].items()}),
        unfinished=_frozen(data["unfinished"]),
    )


def _lifecycle(data: Mapping[str, Any]) -> Lifecycle:
    places = {
        name: Place(name, place["description"], place.get("min"), place.get("max"))
        for name, place in data["places"].items()
    }
    blocks = data["blocks"]
    return Lifecycle(
        places=_frozen(places),
        stream=_machine(data["stream"]),
        blocks=_machine(blocks),
        block_kind_rule=blocks["kind_rule"],
        closes_with_rule=blocks["closes_with_rule"],
        unfinished_blocks_after_failure_allowed=blocks.get("unfinished_after_failure") == "allowed",
    )


def _example(entry: Mapping[str, Any], display: str, folder: Path) -> Example:
    where = Where(display, line_of(entry))
    path = folder / str(entry.get("file", ""))
    expect = entry.get("expect")
    return Example(
        file=_require(entry, "file", where),
        title=_require(entry, "title", where),
        section=_require(entry, "section", where),
        kind=_require(entry, "kind", where),
        printed=bool(entry.get("printed", False)),
        where=where,
        abbreviated=entry.get("abbreviated"),
        complete=tuple(entry.get("complete", ())),
        expect=None if expect is None else () if expect == "valid" else tuple(sorted(expect)),
        options=_frozen(entry.get("options")),
        content=path.read_bytes() if path.is_file() else b"",
        translation=_frozen(entry["translation"]) if "translation" in entry else None,
    )


def _side(value: Any) -> str | tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else value


def _vendor_map(name: str, data: Mapping[str, Any], display: str) -> VendorMap:
    return VendorMap(
        name=name,
        title=data["title"],
        registry=data.get("registry"),
        fields_of=data.get("fields_of"),
        vendor_field=data["vendor_field"],
        note=data.get("note", ""),
        otherwise=data.get("otherwise"),
        rows=tuple(
            MapRow(_side(row["vendor"]), _side(row["ours"]), row.get("only"),
                   row.get("note", ""), Where(display, line_of(row)))
            for row in data["rows"]
        ),
        where=Where(display, line_of(data)),
    )


def _format_mappings(display: str, data: Mapping[str, Any]) -> FormatMappings:
    return FormatMappings(
        format=data["format"],
        title=data["title"],
        reference=data["reference"],
        wire=data["wire"],
        maps=_frozen({name: _vendor_map(name, m, display) for name, m in data["maps"].items()}),
        where=Where(display, line_of(data)),
    )


def _mappings(files: SourceFiles) -> dict[str, FormatMappings]:
    loaded = [_format_mappings(display, data) for display, data in files.mappings]
    order = {name: n for n, name in enumerate(VENDORS)}
    return {m.format: m for m in sorted(loaded, key=lambda m: (order.get(m.format, 99), m.format))}


def load(root: Path, files: SourceFiles | None = None) -> Spec:
    """The whole source under `root` as a `Spec`, joined from `files` when the caller has
    read them already (`check.check` has), else read here."""
    if files is None:
        files = read_source(root)
    spec_data = files.spec
    registries = files.registries
    for needed in ("event-types", "lifecycle", "media-types", *VALUE_REGISTRIES):
        if needed not in registries:
            raise SourceError(REGISTRY_DIR, 0, f"no registry file defines registry {needed!r}")

    rules: dict[str, Rule] = {}
    for entry in spec_data["rules"]:
        where = Where(SPEC_FILE, line_of(entry))
        rule_id = _require(entry, "id", where)
        if rule_id in rules:
            raise SourceError(SPEC_FILE, where.line, f"rule ID {rule_id} is used twice "
                              f"(first at line {rules[rule_id].where.line})")
        rules[rule_id] = Rule(
            id=rule_id,
            section=_require(entry, "section", where),
            keyword=_require(entry, "keyword", where),
            basis=_require(entry, "basis", where),
            binds=tuple(_require(entry, "binds", where)),
            text=_require(entry, "text", where),
            where=where,
            decision=entry.get("decision"),
            not_checkable=entry.get("not_checkable"),
        )

    value_registries = {
        name: _value_registry(name, registries[name][1], registries[name][0])
        for name in VALUE_REGISTRIES
    }
    schemas = dict(files.schemas)
    for registry in value_registries.values():
        schemas[registry.schema_id] = registry_value_schema(registry)

    events_display, events_data = registries["event-types"]
    media_data = registries["media-types"][1]
    examples_data = files.examples
    meta = spec_data
    return Spec(
        meta=SpecMeta(
            title=meta["title"],
            short_title=meta["short_title"],
            version=str(meta["version"]),
            draft=meta["draft"],
            revision=str(meta["revision"]),
            status=meta["status"],
        ),
        sections=tuple(Section(str(s["number"]), s["anchor"], s["title"], s["summary"])
                       for s in spec_data["sections"]),
        rules=_frozen(rules),
        decisions=tuple(
            Decision(d["id"], d["title"], tuple(d["rules"]), d["decision"], d["reason"],
                     Where(SPEC_FILE, line_of(d)))
            for d in spec_data["decisions"]
        ),
        schemas=_frozen(schemas),
        event_types=tuple(event_type_of(e, events_display) for e in events_data["entries"]),
        value_registries=_frozen(value_registries),
        media_types=tuple(
            MediaType(m["name"], m["status"], m["date"], m["reference"],
                      m.get("template"), m.get("profile"), tuple(m.get("draft_fields") or ()))
            for m in media_data["entries"]
        ),
        lifecycle=_lifecycle(registries["lifecycle"][1]),
        examples=tuple(_example(e, EXAMPLES_FILE, root / EXAMPLES_FILE.rsplit("/", 1)[0])
                       for e in examples_data["examples"]),
        registry_meta=_frozen({
            name: _frozen({k: v for k, v in data.items() if k != "entries"})
            for name, (_, data) in registries.items()
        }),
        mappings=_frozen(_mappings(files)),
        input_hash=files.input_hash,
    )


__all__ = ["REGISTRY_URN", "SOURCE_DIRS", "load"]
