"""The resolved spec: one immutable model of spec/, schemas/ and registry/ for every renderer.

Renderers never open a source file themselves; whatever they need is a field here, so that the
check and every artifact see the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

URN = "urn:ietf:params:llm-stream:"
REGISTRY_URN = URN + "registry:"
ENVELOPE_ID = URN + "event-envelope:1.0"
VENDORS = ("openai-chat", "openai-responses", "anthropic", "gemini")
WARNING_KEYWORDS = frozenset({"SHOULD", "SHOULD NOT", "RECOMMENDED", "NOT RECOMMENDED"})


@dataclass(frozen=True)
class Where:
    """The file and line an entry of the source comes from, for error messages and docs."""

    path: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class Section:
    number: str
    anchor: str
    title: str
    summary: str


@dataclass(frozen=True)
class Rule:
    id: str
    section: str
    keyword: str
    basis: str
    binds: tuple[str, ...]
    text: str
    where: Where
    decision: str | None = None
    not_checkable: str | None = None

    @property
    def checkable(self) -> bool:
        return self.not_checkable is None

    @property
    def severity(self) -> str:
        """SHOULD-level breaches are warnings; every other breach (MUST, a field table) an error."""
        return "warning" if self.keyword in WARNING_KEYWORDS else "error"


@dataclass(frozen=True)
class Decision:
    id: str
    title: str
    rules: tuple[str, ...]
    decision: str
    reason: str
    where: Where


@dataclass(frozen=True)
class SchemaDoc:
    """A schema document by its $id; `path` is None for those built from a value registry."""

    id: str
    path: str | None
    document: Mapping[str, Any]

    @property
    def title(self) -> str:
        return str(self.document.get("title", self.id))


@dataclass(frozen=True)
class EventCheck:
    """A check beyond the schema that the decoder makes on one field of an event type."""

    check: str
    field: str
    rule: str


@dataclass(frozen=True)
class Fragments:
    """What makes an event type the fragments of another within a block: the `field` of the
    fragments joined in order is that of the `event` that follows them and ends them (no
    fragment comes after it), the first fragment carries the `carries` fields and that event
    carries the same, and a block of fragments without that event closes with
    `unless_stop_reason` only; `rule` is what a breach of any of these breaks."""

    event: str
    field: str
    carries: tuple[str, ...]
    unless_stop_reason: str | None
    rule: str


@dataclass(frozen=True)
class EventLifecycle:
    place: str
    block_kind: str | None = None
    per_block: int | None = None
    closes_with: str | None = None
    expected_min: int | None = None
    expected_rule: str | None = None
    completes_block: str | None = None
    """The rule an event of another type in the block breaks when it follows this one."""
    fragment_of: Fragments | None = None


@dataclass(frozen=True)
class EventType:
    name: str
    description: str
    schema_path: str
    schema_id: str
    reference: str
    status: str
    date: str
    change_controller: str
    lifecycle: EventLifecycle
    checks: tuple[EventCheck, ...]
    mappings: Mapping[str, str]
    where: Where
    contact: str | None = None
    reason: str | None = None
    deprecated_reason: str | None = None

    @property
    def identifier(self) -> str:
        """The event name as a Python identifier: `content.delta` -> `content_delta`."""
        return self.name.replace(".", "_")

    @property
    def class_name(self) -> str:
        """The model class name: `content.delta` -> `ContentDeltaEvent`."""
        words = self.name.replace("_", ".").split(".")
        return "".join(word.capitalize() for word in words) + "Event"


@dataclass(frozen=True)
class ValueEntry:
    value: str
    description: str
    reference: str
    status: str
    date: str
    reason: str | None = None
    deprecated_reason: str | None = None


@dataclass(frozen=True)
class ValueRegistry:
    """A registry of string values (stop reasons, error codes, roles, content part types)."""

    name: str
    title: str
    field: str
    reference: str
    entries: tuple[ValueEntry, ...]
    where: Where

    @property
    def schema_id(self) -> str:
        return REGISTRY_URN + self.name

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(entry.value for entry in self.entries)


Side = str | tuple[str, ...] | None
"""One side of a map row: a value, several summed (fields only), or None for no counterpart."""


@dataclass(frozen=True)
class MapRow:
    """A vendor value and an LLM-Stream value that stand for each other, in both directions or
    `only` "from" the vendor format (reading it) or "to" it (writing it)."""

    vendor: Side
    ours: Side
    only: str | None
    note: str
    where: Where

    def goes(self, direction: str) -> bool:
        return self.only in (None, direction)


@dataclass(frozen=True)
class VendorMap:
    """One map of a vendor format: its LLM-Stream side is a value registry's values
    (`registry`) or a schema's fields (`fields_of`)."""

    name: str
    title: str
    registry: str | None
    fields_of: str | None
    vendor_field: str
    note: str
    otherwise: str | None
    rows: tuple[MapRow, ...]
    where: Where

    @property
    def reading(self) -> dict[str, Side]:
        """from: each vendor value (or, for fields, each LLM-Stream field) and what it becomes."""
        if self.registry is not None:
            return {str(r.vendor): r.ours for r in self.rows
                    if r.goes("from") and r.vendor is not None}
        return {str(r.ours): r.vendor for r in self.rows
                if r.goes("from") and r.ours is not None and r.vendor is not None}

    @property
    def writing(self) -> dict[str, Side]:
        """to: each LLM-Stream value (or, for fields, each vendor field) and what it becomes."""
        if self.registry is not None:
            return {str(r.ours): r.vendor for r in self.rows
                    if r.goes("to") and r.ours is not None}
        return {str(r.vendor): r.ours for r in self.rows
                if r.goes("to") and r.vendor is not None and r.ours is not None}


@dataclass(frozen=True)
class FormatMappings:
    """Everything mappings/FORMAT.yaml says about one vendor format."""

    format: str
    title: str
    reference: str
    wire: str
    maps: Mapping[str, VendorMap]
    where: Where


@dataclass(frozen=True)
class MediaType:
    name: str
    status: str
    date: str
    reference: str
    template: Mapping[str, str] | None
    profile: Mapping[str, str] | None
    draft_fields: tuple[str, ...] = ()
    """The template fields the draft itself fills in; the others are this project's proposal."""


@dataclass(frozen=True)
class StateMachine:
    """One of the lifecycle's two machines: the stream's, and each content block's."""

    initial: str
    states: Mapping[str, str]
    transitions: Mapping[str, Mapping[str, str]]
    violations: Mapping[str, Mapping[str, str]]
    unfinished: Mapping[str, str]
    final: str | None = None

    def violation(self, state: str, place: str) -> str | None:
        table = self.violations.get(state, {})
        return table.get(place, table.get("*"))


@dataclass(frozen=True)
class Place:
    name: str
    description: str
    min: int | None
    max: int | None


@dataclass(frozen=True)
class Lifecycle:
    places: Mapping[str, Place]
    stream: StateMachine
    blocks: StateMachine
    block_kind_rule: str
    closes_with_rule: str
    unfinished_blocks_after_failure_allowed: bool


@dataclass(frozen=True)
class Example:
    file: str
    title: str
    section: str
    kind: str
    printed: bool
    where: Where
    abbreviated: str | None = None
    complete: tuple[str, ...] = ()
    expect: tuple[str, ...] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    content: bytes = b""
    """The file's exact bytes."""
    translation: Mapping[str, Any] | None = None
    """A vendor stream's: its format, the example it becomes (into), the translator's options
    (created, model, request_id) and the rules of what it reports (findings)."""

    @property
    def valid(self) -> bool:
        return self.expect == ()


@dataclass(frozen=True)
class SpecMeta:
    title: str
    short_title: str
    version: str
    draft: str
    revision: str
    status: str


@dataclass(frozen=True)
class Spec:
    meta: SpecMeta
    sections: tuple[Section, ...]
    rules: Mapping[str, Rule]
    decisions: tuple[Decision, ...]
    schemas: Mapping[str, SchemaDoc]
    event_types: tuple[EventType, ...]
    value_registries: Mapping[str, ValueRegistry]
    media_types: tuple[MediaType, ...]
    lifecycle: Lifecycle
    examples: tuple[Example, ...]
    registry_meta: Mapping[str, Mapping[str, Any]]
    """Each registry file's own members (title, reference, policy, note) by registry name."""
    mappings: Mapping[str, FormatMappings]
    """The vendor formats' maps (mappings/), by format, in the order of VENDORS."""
    input_hash: str

    @property
    def anchors(self) -> frozenset[str]:
        """Every anchor a reference may name: the sections' and the decisions'."""
        return frozenset({s.anchor for s in self.sections}
                         | {f"decision-{d.id.lower()}" for d in self.decisions})

    def section(self, anchor: str) -> Section | None:
        return next((s for s in self.sections if s.anchor == anchor), None)

    def event_type(self, name: str) -> EventType | None:
        return next((e for e in self.event_types if e.name == name), None)
