"""Refuse an inconsistent spec source, naming the file and the entry of every fault.

Two stages: the files must first be well-formed (`check_files`: registry files against their
schema, schemas against the 2020-12 meta-schema), since the model cannot be built from malformed
ones; then the loaded model must hang together (refs resolve, rule IDs exist, event types match
their schemas). Whether each example validates as its tag says is checked with the generated
bindings (`examples.verify_examples`), because the decoder is the judge of a stream.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .check_files import check_files, schema_line
from .load import load
from .model import ENVELOPE_ID, VENDORS, EventType, FormatMappings, SchemaDoc, Spec, VendorMap
from .satisfiable import contradictions
from .schema_walk import envelope_constants, iter_nodes, pointer_tokens, resolve_ref
from .source_files import MAPPINGS_DIR, SPEC_FILE
from .sources import SourceError


def check_model(spec: Spec, root: Path) -> list[SourceError]:
    """Stage two: the loaded model hangs together."""
    return [
        *_check_refs(spec),
        *_check_satisfiable(spec, root),
        *_check_event_types(spec, root),
        *_check_rule_references(spec),
        *_check_sections(spec),
        *_check_examples_exist(spec, root),
        *_check_envelope(spec),
        *_check_mappings(spec),
        *_check_translations(spec),
    ]


def _check_translations(spec: Spec) -> Iterator[SourceError]:
    """A vendor stream names a vendor format and becomes a stream example."""
    by_file = {e.file: e for e in spec.examples}
    for example in spec.examples:
        if example.translation is None:
            continue
        where = example.where
        fmt, into = example.translation["format"], example.translation["into"]
        if fmt not in VENDORS:
            yield SourceError(where.path, where.line, f"example {example.file}: format {fmt!r} "
                                                      f"is not one of {', '.join(VENDORS)}")
        target = by_file.get(into)
        if target is None or target.kind != "stream":
            yield SourceError(where.path, where.line, f"example {example.file}: into {into!r} "
                                                      "is not a stream example of examples.yaml")


def _check_mappings(spec: Spec) -> Iterator[SourceError]:
    """Every vendor format has its mappings file, and every map is a function both ways."""
    for vendor in VENDORS:
        if vendor not in spec.mappings:
            yield SourceError(f"{MAPPINGS_DIR}/{vendor}.yaml", 0,
                              f"the mappings of vendor format {vendor!r} are missing")
    for mappings in spec.mappings.values():
        yield from _check_format(spec, mappings)


def _check_format(spec: Spec, mappings: FormatMappings) -> Iterator[SourceError]:
    where = mappings.where
    stem = where.path.rsplit("/", 1)[-1].removesuffix(".yaml")
    if mappings.format != stem:
        yield SourceError(where.path, where.line,
                          f"format {mappings.format!r} must be the file's name, {stem!r}")
    if mappings.format not in VENDORS:
        yield SourceError(where.path, where.line, f"format {mappings.format!r} is not one of the "
                                                  f"vendor formats: {', '.join(VENDORS)}")
    for vendor_map in mappings.maps.values():
        problems = (_value_map_problems(spec, vendor_map) if vendor_map.registry is not None
                    else _field_map_problems(spec, vendor_map))
        for line, problem in [*problems, *_function_problems(vendor_map)]:
            yield SourceError(where.path, line or vendor_map.where.line,
                              f"map {vendor_map.name!r}: {problem}")


def _value_map_problems(spec: Spec, vendor_map: VendorMap) -> Iterator[tuple[int, str]]:
    registry = spec.value_registries.get(str(vendor_map.registry))
    if registry is None:
        yield 0, (f"registry {vendor_map.registry!r} is not a value registry: one of "
                  f"{', '.join(spec.value_registries)}")
        return
    values = registry.values
    if vendor_map.otherwise is not None and vendor_map.otherwise not in values:
        yield 0, f"otherwise {vendor_map.otherwise!r} is not a registered {registry.field}"
    for row in vendor_map.rows:
        if isinstance(row.vendor, tuple) or isinstance(row.ours, tuple):
            yield row.where.line, "a value map's row maps one value, not a list"
        elif row.ours is not None and row.ours not in values:
            yield row.where.line, f"{row.ours!r} is not a registered {registry.field}"
    written = vendor_map.writing
    for value in values:
        if value not in written:
            yield 0, (f"the registered {registry.field} {value!r} has no row going 'to' the "
                      "vendor format (give vendor: null when the format cannot express it)")


def _field_map_problems(spec: Spec, vendor_map: VendorMap) -> Iterator[tuple[int, str]]:
    document = next((d.document for d in spec.schemas.values() if d.path == vendor_map.fields_of),
                    None)
    if document is None:
        yield 0, f"fields_of {vendor_map.fields_of!r} is no schema file"
        return
    if vendor_map.otherwise is not None:
        yield 0, "otherwise is for value maps only"
    fields = set(document.get("properties") or {})
    for row in vendor_map.rows:
        ours = row.ours if isinstance(row.ours, tuple) else (row.ours,)
        for name in ours:
            if name is not None and name not in fields:
                yield row.where.line, f"{name!r} is not a field of {vendor_map.fields_of}"
        if isinstance(row.vendor, tuple) and row.only != "from":
            yield row.where.line, "vendor counts summed into one go 'from' the vendor only"
        if isinstance(row.ours, tuple) and row.only != "to":
            yield row.where.line, "LLM-Stream counts summed into one go 'to' the vendor only"


def _function_problems(vendor_map: VendorMap) -> Iterator[tuple[int, str]]:
    """Each direction maps a value to one value: no key twice, no null both ways."""
    by_value = vendor_map.registry is not None
    for direction, key in (("from", "vendor" if by_value else "ours"),
                           ("to", "ours" if by_value else "vendor")):
        seen: dict[object, int] = {}
        for row in vendor_map.rows:
            value = getattr(row, key)
            if not row.goes(direction) or value is None:
                continue
            if value in seen:
                yield row.where.line, (f"{key} {value!r} goes '{direction}' twice (first at line "
                                       f"{seen[value]}): say which row is only: from or only: to")
            seen.setdefault(value, row.where.line)
    for row in vendor_map.rows:
        if row.only is None and (row.vendor is None or row.ours is None):
            yield row.where.line, "a row without a counterpart on one side goes one way only"


def _check_envelope(spec: Spec) -> Iterator[SourceError]:
    """The envelope schema fixes what the decoder's hot path checks without it."""
    envelope = spec.schemas.get(ENVELOPE_ID)
    if envelope is None:
        yield SourceError(SPEC_FILE, 0, f"no schema has the envelope's $id {ENVELOPE_ID!r}")
        return
    version, seq_max = envelope_constants(envelope.document)
    where = envelope.path or envelope.id
    if version != spec.meta.version:
        yield SourceError(where, 0, f"properties.v must have const {spec.meta.version!r}, the "
                                    f"spec's version, found {version!r}")
    if seq_max is None:
        yield SourceError(where, 0, "properties.seq must have an integer maximum (the largest "
                                    "seq, section 8.4)")


def _check_satisfiable(spec: Spec, root: Path) -> Iterator[SourceError]:
    for doc in spec.schemas.values():
        for pointer, problem in contradictions(doc.document):
            yield SourceError(doc.path or doc.id,
                              schema_line(root, doc, pointer_tokens(pointer)),
                              f"no instance satisfies the schema at {pointer or '/'}: {problem}")


def _check_refs(spec: Spec) -> Iterator[SourceError]:
    for doc in spec.schemas.values():
        for pointer, node in iter_nodes(doc.document):
            ref = node.get("$ref")
            if isinstance(ref, str) and resolve_ref(spec.schemas, doc.id, ref) is None:
                yield SourceError(doc.path or doc.id, 0,
                                  f"$ref {ref!r} at {pointer or '/'} does not resolve")


def _check_event_types(spec: Spec, root: Path) -> Iterator[SourceError]:
    by_id = {doc.path: doc for doc in spec.schemas.values() if doc.path}
    seen: dict[str, int] = {}
    for event in spec.event_types:
        where = event.where
        if event.name in seen:
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r} is registered twice "
                              f"(first at line {seen[event.name]})")
        seen[event.name] = where.line
        doc = by_id.get(event.schema_path)
        if doc is None:
            missing = "does not exist" if not (root / event.schema_path).exists() else "has no $id"
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r}: schema {event.schema_path} {missing}")
            continue
        if doc.id != event.schema_id:
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r}: {event.schema_path} has $id "
                              f"{doc.id!r}, expected {event.schema_id!r}")
        type_const = doc.document.get("properties", {}).get("type", {}).get("const")
        if type_const != event.name:
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r}: {event.schema_path} must fix "
                              f"properties.type.const to {event.name!r}, found {type_const!r}")
        place = event.lifecycle.place
        if place in BLOCK_PLACES and not _has_block_index(doc.document):
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r}: place {place!r} needs a required "
                              f"integer index in {event.schema_path}, the block it belongs to")
        if place not in spec.lifecycle.places:
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r}: unknown lifecycle place {place!r}")
        closes = event.lifecycle.closes_with
        if closes and closes not in spec.value_registries["stop-reasons"].values:
            yield SourceError(where.path, where.line,
                              f"event type {event.name!r}: closes_with {closes!r} is not a "
                              "registered stop reason")
        if event.lifecycle.fragment_of is not None:
            for problem in _fragment_problems(spec, event, by_id):
                yield SourceError(where.path, where.line,
                                  f"event type {event.name!r}: fragment_of {problem}")


def _fragment_problems(spec: Spec, event: EventType, by_id: Mapping[str, SchemaDoc]
                       ) -> Iterator[str]:
    """What keeps the decoder from pairing the fragments with the event they build."""
    fragments = event.lifecycle.fragment_of
    assert fragments is not None
    whole = spec.event_type(fragments.event)
    if whole is None:
        yield f"names event {fragments.event!r}, which is not registered"
        return
    if whole.lifecycle.block_kind != event.lifecycle.block_kind:
        yield (f"names {whole.name!r}, of block kind {whole.lifecycle.block_kind!r}, not "
               f"{event.lifecycle.block_kind!r}: the two must share their blocks")
    for side in (event, whole):
        doc = by_id.get(side.schema_path)
        properties = (doc.document.get("properties") or {}) if doc is not None else {}
        for name in (fragments.field, *fragments.carries):
            if name not in properties:
                yield f"names field {name!r}, which {side.schema_path} does not define"
    reason = fragments.unless_stop_reason
    if reason is not None and reason not in spec.value_registries["stop-reasons"].values:
        yield f"unless_stop_reason {reason!r} is not a registered stop reason"


BLOCK_PLACES = ("block", "block-end")
"""The places whose events the decoder pairs by their content block index."""


def _has_block_index(schema: Mapping[str, Any]) -> bool:
    index = (schema.get("properties") or {}).get("index") or {}
    return "index" in (schema.get("required") or ()) and index.get("type") == "integer"


def _rule_references(spec: Spec) -> Iterator[tuple[str, int, str, str]]:
    """(file, line, what, rule ID) for every place in the source that names a rule."""
    for doc in spec.schemas.values():
        for pointer, node in iter_nodes(doc.document):
            if isinstance(node.get("x-rule"), str):
                yield doc.path or doc.id, 0, f"x-rule at {pointer or '/'}", node["x-rule"]
            for also in node.get("x-see") or ():
                yield doc.path or doc.id, 0, f"x-see at {pointer or '/'}", str(also)
    for event in spec.event_types:
        for check in event.checks:
            yield event.where.path, event.where.line, f"check of {event.name}", check.rule
        if event.lifecycle.expected_rule:
            yield (event.where.path, event.where.line, f"expected count of {event.name}",
                   event.lifecycle.expected_rule)
        if event.lifecycle.completes_block:
            yield (event.where.path, event.where.line, f"completes_block of {event.name}",
                   event.lifecycle.completes_block)
        if event.lifecycle.fragment_of:
            yield (event.where.path, event.where.line, f"fragment_of of {event.name}",
                   event.lifecycle.fragment_of.rule)
    life = spec.lifecycle
    for machine_name, machine in (("stream", life.stream), ("blocks", life.blocks)):
        for table in (*machine.violations.values(), machine.unfinished):
            for rule in table.values():
                yield "registry/lifecycle.yaml", 0, f"{machine_name} table", rule
    yield "registry/lifecycle.yaml", 0, "blocks kind_rule", life.block_kind_rule
    yield "registry/lifecycle.yaml", 0, "blocks closes_with_rule", life.closes_with_rule
    for decision in spec.decisions:
        for rule in decision.rules:
            yield decision.where.path, decision.where.line, f"decision {decision.id}", rule
    for example in spec.examples:
        for rule in example.expect or ():
            yield example.where.path, example.where.line, f"example {example.file}", rule


def _check_rule_references(spec: Spec) -> Iterator[SourceError]:
    for path, line, what, rule in _rule_references(spec):
        if rule not in spec.rules:
            yield SourceError(path, line, f"{what} names rule {rule}, which does not exist")
    decisions = {d.id for d in spec.decisions}
    for entry in spec.rules.values():
        where = entry.where
        if entry.decision and entry.decision not in decisions:
            yield SourceError(where.path, where.line, f"rule {entry.id} names decision "
                                                      f"{entry.decision}, which does not exist")
        if entry.basis == "decision" and not entry.decision:
            yield SourceError(where.path, where.line,
                              f"rule {entry.id} has basis decision but names no decision")


def _check_sections(spec: Spec) -> Iterator[SourceError]:
    anchors = spec.anchors
    for rule in spec.rules.values():
        if rule.section not in anchors:
            message = f"rule {rule.id} names section {rule.section!r}, which does not exist"
            yield SourceError(rule.where.path, rule.where.line, message)
    for event in spec.event_types:
        if event.reference.startswith("#") and event.reference[1:] not in anchors:
            yield SourceError(event.where.path, event.where.line,
                              f"event type {event.name!r} references {event.reference!r}, "
                              "which is no section anchor")
    for example in spec.examples:
        if example.section not in anchors:
            yield SourceError(example.where.path, example.where.line,
                              f"example {example.file} names section {example.section!r}, "
                              "which does not exist")


def _check_examples_exist(spec: Spec, root: Path) -> Iterator[SourceError]:
    folder = root / "spec" / "examples"
    listed = {e.file for e in spec.examples}
    for example in spec.examples:
        for name in (example.file, *example.complete):
            if not (folder / name).is_file():
                yield SourceError(example.where.path, example.where.line,
                                  f"example file {name} does not exist")
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_file() and path.name != "examples.yaml" and name not in listed:
            yield SourceError(f"spec/examples/{name}", 0, "example file is not in examples.yaml")


def check(root: Path) -> tuple[Spec | None, list[SourceError]]:
    """Load and check the source; the spec is None when the files are too broken to load."""
    files, errors = check_files(root)
    if files is None or errors:
        return None, errors
    try:
        spec = load(root, files)
    except SourceError as exc:
        return None, [exc]
    return spec, check_model(spec, root)


def schema_store(spec: Spec) -> Mapping[str, Mapping[str, Any]]:
    """The schema documents by $id, as validators and the jsonschema oracle consume them."""
    return {schema_id: doc.document for schema_id, doc in spec.schemas.items()}
