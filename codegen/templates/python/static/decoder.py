"""The sans-IO LLM-Stream decoder: bytes in, events and diagnostics out (draft section 5.1).

Four layers, each its own module and usable alone: SSE framing (`sse`), the JSON envelope checked
by the generated validators (`validators`), the lifecycle state machine whose tables come from
the registry (`lifecycle`), and typed events (`models`). No sockets, threads or event loops:
callers feed whatever bytes arrive and get back whatever events completed, in the manner of h11.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from enum import Enum
from functools import cache
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Literal,
    NamedTuple,
    TypeAlias,
    get_args,
    get_origin,
    get_type_hints,
)

from . import lifecycle as life
from .diagnostics import Diagnostic, LLMStreamError, SchemaError, Severity
from .jsonscan import certainly_json
from .jsontext import (
    MAX_DEPTH,
    JSONLimitError,
    duplicate_name,
    duplicate_names,
    from_json,
    loads,
    too_deep,
)
from .plainjson import parse
from .rules import severity
from .sse import RawFields, SSEDecoder
from .validators import (
    EVENT_CHECKS,
    is_valid_envelope,
    is_valid_event,
    validate_envelope,
    validate_event,
)

if TYPE_CHECKING:
    from pydantic import BaseModel
    from typing_extensions import Buffer

    from .models import EventEnvelope

_STEADY_KINDS: Final = frozenset(
    kind for kind, place in life.PLACES.items()
    if place == "block" and kind in life.BLOCK_KINDS and kind not in life.PER_BLOCK
    and kind not in life.CLOSES_WITH and kind not in life.FIELD_CHECKS
    and kind not in life.EXPECTED and kind not in life.COMPLETES_BLOCK
    and kind not in life.FRAGMENTS
)
"""Block event types whose repetition in an open block changes no state but seq."""

_BUILT_BY: Final = {fragments.event: kind for kind, fragments in life.FRAGMENTS.items()}
"""The event types that fragments build, and the type of those fragments."""


class _Plan(NamedTuple):
    """What the quick path (`_QUICK`) weighs of an event type, from the lifecycle's
    tables: the same tables, read once per type rather than once per event."""

    place: str
    moves: dict[str, str]
    """`life.STREAM_TRANSITIONS` from each state, at this type's place."""
    block_moves: dict[str, str]
    """`life.BLOCK_TRANSITIONS` from each block state, at this type's place."""
    block_kind: str | None
    limit: int | None
    """`life.PER_BLOCK`."""
    completes: bool
    """In `life.COMPLETES_BLOCK`."""
    fragments: life.Fragments | None
    """`life.FRAGMENTS`: the event type is the fragments of another."""
    builds: bool
    """The event type is one that fragments build (`_BUILT_BY`)."""
    closes_with: str | None
    """`life.CLOSES_WITH`."""
    checks: tuple[tuple[str, str, tuple[str, str]], ...]
    """`life.FIELD_CHECKS`: each check, its field, and the key of what it remembers."""
    counted: bool
    """In `life.EXPECTED`: the stream counts its events."""
    integers: tuple[str, ...]
    """`life.INTEGER_MEMBERS` but seq and, in a block, index, which the quick path takes only
    as ints anyway."""


def _plan(kind: str, place: str) -> _Plan:
    block_moves = {state: to for (state, at), to in life.BLOCK_TRANSITIONS.items() if at == place}
    taken = {"seq", "index"} if block_moves else {"seq"}
    return _Plan(
        place,
        {state: to for (state, at), to in life.STREAM_TRANSITIONS.items() if at == place},
        block_moves,
        life.BLOCK_KINDS.get(kind),
        life.PER_BLOCK.get(kind),
        kind in life.COMPLETES_BLOCK,
        life.FRAGMENTS.get(kind),
        kind in _BUILT_BY,
        life.CLOSES_WITH.get(kind),
        tuple((check, field, (kind, field)) for check, field, _ in life.FIELD_CHECKS.get(kind, ())),
        kind in life.EXPECTED,
        tuple(name for name in life.INTEGER_MEMBERS[kind] if name not in taken),
    )


_PLANS: Final = {kind: _plan(kind, place) for kind, place in life.PLACES.items()}
"""What the quick path weighs of each registered event type."""


def _all_required(model: type[BaseModel]) -> bool:
    """Whether every field of a model and of its nested models is required: an optional field
    also takes an explicit null, which the schema refuses, so such models cannot be trusted."""
    from pydantic import BaseModel

    for field in model.model_fields.values():
        nested = field.annotation
        if not field.is_required() or (
            isinstance(nested, type) and issubclass(nested, BaseModel) and not _all_required(nested)
        ):
            return False
    return True


def _event_line(kind: str) -> bytes:
    return b"event: " + kind.encode()


_KIND_OF_LINE: Final = {_event_line(kind): kind for kind in life.PLACES}
"""The type of an event whose ``event:`` line is this, for each registered type."""
_HOT: Final = {kind: (_event_line(kind) + b"\ndata: ", kind) for kind in _STEADY_KINDS}
"""What a chunk that is one whole event of each type a block repeats begins with, and the type:
see `Decoder.feed`."""


class _Typed(NamedTuple):
    """What typed decoding needs of the pydantic models, built when the first typed decoder is
    made, so that a program that decodes only dicts never imports pydantic or builds a model."""

    models: dict[str, type[EventEnvelope]]
    """The model of each registered event type."""
    unknown: type[EventEnvelope]
    """The model of an event of an unregistered type."""
    whole: dict[str, Callable[..., Any]]
    """Every registered type's model parses and validates an event in one step, in pydantic's
    strict mode, for the hot path and the quick path (`_QUICK`): of JSON text with no
    NaN or Infinity in it, and no null unless its model has every field required
    (`nullable`), every model accepts only what its schema accepts (the differential tests
    hold them to that); `Decoder._sound` makes sure of the text before its model is trusted.
    What a model refuses goes down the general path, which reports why."""
    nullable: frozenset[str]
    """The types whose models take an explicit null, which the schema refuses, for an
    optional field."""
    trusted: dict[str, Callable[..., Any]]
    """The general path builds an event of these types from its parsed object in pydantic's
    strict mode, which then stands in for the validator: their models accept only what their
    schemas accept, once an object with a null member is left to the validator (the
    differential tests hold them to that). An object a model refuses is checked by the
    validator, which reports why, or, valid after all, built in pydantic's lax mode."""
    members: dict[str, int]
    """How many members the required fields of a type make (`_members`), nested ones included,
    for the types whose required fields take no float (`_takes_no_float`): a text of one with
    no more colons than that, and those within its strings (`Decoder._sound`), holds just
    those members, each once, since its model found every one of them: no member name twice
    (D-DUPLICATE-KEYS), no optional member, none that its model does not type, so no NaN,
    Infinity or null, and nothing nested deeper than its models."""


@cache
def _typed_tables() -> _Typed:
    """The models and the typed hot path's validators, built once."""
    from .models import EVENT_MODELS, UnknownEvent

    whole = {
        kind: model.__pydantic_validator__.validate_json
        for kind, model in sorted(EVENT_MODELS.items())
    }
    nullable = frozenset(kind for kind, model in EVENT_MODELS.items() if not _all_required(model))
    trusted = {
        kind: model.__pydantic_validator__.validate_python
        for kind, model in sorted(EVENT_MODELS.items())
        if _plain(model) and (_all_required(model) or _flat(model))
    }
    members = {
        kind: _members(model) for kind, model in sorted(EVENT_MODELS.items())
        if _takes_no_float(model)
    }
    return _Typed(EVENT_MODELS, UnknownEvent, whole, nullable, trusted, members)


def _takes_no_float(model: type[BaseModel]) -> bool:
    """Whether every required field of a model is a string, an integer, a boolean, a literal,
    an enum of strings, or a model whose every field is required and takes no float: one that
    in strict mode takes neither NaN nor Infinity, which JSON has not, nor null."""
    from pydantic import BaseModel

    for field in model.model_fields.values():
        kind = field.annotation
        if field.is_required() and not (
            kind in (str, int, bool)
            or get_origin(kind) is Literal
            or (isinstance(kind, type) and issubclass(kind, Enum)
                and all(type(member.value) is str for member in kind))
            or (isinstance(kind, type) and issubclass(kind, BaseModel) and _all_required(kind)
                and _takes_no_float(kind))
        ):
            return False
    return True


def _members(model: type[BaseModel]) -> int:
    """The members of an object of a model that has just its required fields, nested ones
    included (a nested model of `_takes_no_float` has every field required)."""
    from pydantic import BaseModel

    return sum(
        1 + (_members(kind) if isinstance(kind, type) and issubclass(kind, BaseModel) else 0)
        for kind in (field.annotation for field in model.model_fields.values()
                     if field.is_required())
    )


def _field_types(model: type[BaseModel]) -> Iterator[object]:
    """The type of each field of a model, forward references resolved, and every type within
    it (the members of a union, a list, an Annotated)."""
    hints = get_type_hints(model, include_extras=True)

    def within(annotation: object) -> Iterator[object]:
        yield annotation
        for argument in get_args(annotation):
            yield from within(argument)

    for name in model.model_fields:
        yield from within(hints[name])


def _plain(model: type[BaseModel]) -> bool:
    """Whether pydantic's strict mode takes a parsed JSON object for the model as it is: it
    wants enum members, not their values, so a model with an enum field anywhere is not."""
    from pydantic import BaseModel

    for kind in _field_types(model):
        if isinstance(kind, type) and (
            issubclass(kind, Enum) or (issubclass(kind, BaseModel) and not _plain(kind))
        ):
            return False
    return True


def _flat(model: type[BaseModel]) -> bool:
    """Whether no field of the model holds another model: an explicit null, the one thing its
    optional fields take that the schema refuses, can then only be a member of the object."""
    from pydantic import BaseModel

    return not any(
        isinstance(kind, type) and issubclass(kind, BaseModel) for kind in _field_types(model)
    )


_Steady = tuple[str, Callable[[object], bool] | None]
"""What `Decoder._steady` knows of an open block whose events may take the hot path: their
type, and the check of their schema when the decoder validates."""

_NOT_STEADY: Final[_Steady] = ("", None)

_STEADY_ENTRIES: Final[dict[str, tuple[Any, Any]]] = {
    kind: ((kind, None), (kind, EVENT_CHECKS[kind])) for kind in _STEADY_KINDS}
"""The `_Steady` of a block of each type of `_STEADY_KINDS`, without and with the check of its
schema, made once: one object each that every decoder shares."""

_UNPARSED: Final[Any] = object()
"""The data of an event that no path has parsed yet (JSON's null parses to None)."""


def _text(data: str | bytes) -> str:
    """An event's data as str in which to count colons and look for ASCII words (`Decoder._sound`):
    compiled, str's count and find are direct calls, while bytes' go through Python's method
    calls, which cost more than decoding first. Bytes are read a character a byte (Latin-1),
    the cheapest decoding: an ASCII character stands where the bytes hold it, and no byte of a
    character of several in UTF-8, nor one that is no UTF-8 (data the SSE layer has not yet
    taken), is one."""
    return data.decode("latin-1") if isinstance(data, bytes) else data


_PARSE: Final = from_json
"""`from_json`, for the loops over events: compiled, a Final is read directly, an imported name
is looked up in the module's dict at each use."""
_PARSE_PLAIN: Final = parse
"""`plainjson.parse`, read as `_PARSE` is: the parse of each event on the fast path, what
`from_json` gives, built by the C parser where the text is plain JSON, as nearly every event's
is."""
_CERTAINLY_JSON: Final = certainly_json
"""`jsonscan.certainly_json`, read as `_PARSE` is: whether a member is certainly JSON text that
`loads` accepts, which the C scanner decides without building the value."""
_VERSION: Final = life.ENVELOPE_VERSION
_INITIAL: Final = life.STREAM_INITIAL
_FINAL: Final = life.STREAM_FINAL
_UNFINISHED: Final = life.STREAM_UNFINISHED
"""The rule a stream breaks that ends in a state of these."""
_FAILED: Final = life.FAILED_STATE
_UNFINISHED_BLOCKS_ALLOWED: Final = life.UNFINISHED_BLOCKS_AFTER_FAILURE_ALLOWED
_SEQ_MAX: Final = life.SEQ_MAX
_SHALLOW: Final = 2 * MAX_DEPTH
"""No text this short nests deeper than the limit (LS-LIMIT-3)."""

_CALLS: Final = frozenset(
    kind for kind, checks in life.FIELD_CHECKS.items()
    if any(check == "declared-tool" for check, _, _ in checks)
)
"""The event types a client may act on, returned only when every check of them passed
(decision D-TOOL-CALL-CHECKS)."""
_ORDERED_CHECKS: Final = frozenset({"non-decreasing"})
"""Field checks that compare an event with the one before, run only with the lifecycle."""
_START_RULE: Final = life.STREAM_VIOLATIONS[(life.STREAM_INITIAL, life.UNREGISTERED_PLACE)]
"""The rule a stream breaks that does not begin with stream.start."""
_LAST_PLACES: Final = frozenset(
    place for (_, place), target in life.STREAM_TRANSITIONS.items() if target == life.STREAM_FINAL
)
"""The places of the events that end a stream."""

_UNFINISHED_BLOCKS: Final = frozenset(life.BLOCK_UNFINISHED)
"""The block states a stream may not end in."""
_MINIMUMS: Final = tuple((kind, minimum) for kind, (minimum, _) in life.EXPECTED.items())
"""How many events of each type of `life.EXPECTED` a stream carries at least."""
_KEEPS_OPEN: Final = frozenset(
    state for (state, place), target in life.STREAM_TRANSITIONS.items()
    if place == "block" and target == state
)
"""The stream states that a block event leaves as they are: those where a block may go on."""

_FREE_TEXT: Final = {
    kind: tuple(sorted(
        {field for check, field, _ in life.FIELD_CHECKS.get(kind, ()) if check == "json-text"}
        | ({fragments.field} if (fragments := life.FRAGMENTS.get(kind)) else set())
    ))
    for kind in life.PLACES
}
"""The members of each event type whose strings are text that runs free, colons and all: a
tool call's arguments and their fragments."""
_BARE: Final = frozenset(kind for kind, free in _FREE_TEXT.items() if not free)
"""The event types with no such member, whose text `Decoder._sound` most often settles by its
colons alone, which the loop over events counts first: the others are spared counting them
twice."""



def _bare_and_settled(text: str | bytes, obj: dict[str, Any], bare: bool) -> bool:
    """`Decoder._sound`'s commonest case, for an event object of a `_BARE` type (`bare`) off the
    hot path: a text too short to nest past the limit, with as many colons as its object and its
    delta hold members, lost none to a name written twice."""
    if not bare or len(text) > _SHALLOW:
        return False
    delta = obj.get("delta")
    return _text(text).count(":") == len(obj) + (len(delta) if type(delta) is dict else 0)


def _accounted(text: str, colons: int, members: int, fields: dict[str, Any], kind: str) -> bool:
    """Whether the colons of an event's text are just those of `members` members and those
    within the strings where its text runs free (`Decoder._sound` says why that settles it):
    those of `_FREE_TEXT`, and the text of a delta, a part of the colons within all its strings
    found for little. An escaped colon (\\u003a) is looked for only where those strings hold a
    colon, which it may have been."""
    within = 0
    for name in _FREE_TEXT.get(kind, ()):
        free = fields.get(name)
        if type(free) is str:
            within += free.count(":")
    delta = fields.get("delta")
    if delta is not None:
        if type(delta) is dict:
            plain: dict[str, Any] = delta  # compiled, a direct call, as in `Decoder._sound`
            free = plain.get("text")
        else:
            free = getattr(delta, "text", None)
        if type(free) is str:
            within += free.count(":")
    return colons - within == members and (within == 0 or "u003" not in text)


Event: TypeAlias = "EventEnvelope | dict[str, Any]"
"""A decoded event: a pydantic model by default, the raw JSON object on the fast path."""


class Decoder:
    """Decode one LLM-Stream response body incrementally.

    `feed(data)` returns the events that `data` completed; `close()` ends the body and returns
    what remains. Every problem becomes a `Diagnostic` in `diagnostics`, carrying the rule it
    breaks and the line it is on; events that fail their schema are reported and not returned.
    With `strict=True` the first error raises `LLMStreamError` instead. `typed=False` returns the
    JSON objects as dicts, skipping model construction. `tools` is what the request declared:
    tool names, or the request's `tools` array (objects with a `name`); given, every tool.call
    is checked against it (draft section 8.2), wherever it comes and with or without the
    lifecycle, and a tool.call with any error is not returned (decision D-TOOL-CALL-CHECKS).
    `request_metadata` is the request's `metadata`; given, the events that should echo its
    members (stream.start and stream.end echo request_id) are checked (LS-META-2).
    `lifecycle=False` checks events one by one (framing, envelope, schema) without order,
    for excerpts of a stream. `validate=False`, with `typed=False`, is the fastest path: each
    event is checked against the envelope (v, seq, type) and the lifecycle, not against the
    schema of its type. `max_blocks` bounds the distinct content block indexes a stream may
    open (LS-LIMIT-5), as `max_line_bytes` and `max_event_bytes` bound the SSE layer.
    """

    # Slots: a decoder holds more attributes than CPython keeps in an instance's compact
    # dictionary (30), past which each one costs more to set and to read.
    __slots__ = (
        "_blocks",
        "_closed",
        "_counts",
        "_end_rejected",
        "_errors",
        "_expected_seq",
        "_failed",
        "_first",
        "_hot",
        "_is_valid",
        "_kinds",
        "_last_line",
        "_last_value",
        "_max_blocks",
        "_pending",
        "_placed",
        "_seen",
        "_spare",
        "_sse",
        "_state",
        "_steady",
        "_typed",
        "_validates",
        "diagnostics",
        "lifecycle",
        "request_metadata",
        "strict",
        "tools",
        "typed",
    )

    def __init__(
        self,
        *,
        typed: bool = True,
        validate: bool = True,
        lifecycle: bool = True,
        strict: bool = False,
        tools: Iterable[str | Mapping[str, Any]] | None = None,
        request_metadata: Mapping[str, Any] | None = None,
        max_blocks: int = 4096,
        max_line_bytes: int = 1 << 20,
        max_event_bytes: int = 8 << 20,
    ) -> None:
        # The options in the order a caller most often gives them, the modes first: compiled,
        # a call from Python looks for each keyword up to the last one given, at a cost each.
        # Arguments of other types than their annotations' are refused, as the compiled
        # decoder refuses them at the call (where an int takes a bool, as isinstance does).
        if not (type(typed) is type(strict) is type(lifecycle) is type(validate) is bool):
            raise TypeError("typed, strict, lifecycle and validate are True or False, got "
                            f"{typed!r}, {strict!r}, {lifecycle!r} and {validate!r}")
        if not isinstance(max_blocks, int):
            raise TypeError(f"max_blocks must be a whole number, got {max_blocks!r}")
        if typed and not validate:
            raise ValueError("typed events are always validated: use typed=False")
        if max_blocks < 1:
            raise ValueError(f"max_blocks must be a whole number from 1, got {max_blocks!r}")
        self.typed = typed
        self._typed, self._kinds, self._is_valid, self._errors = _mode(typed, validate, lifecycle)
        self._validates = validate
        self.strict = strict
        self.tools = None if tools is None else _tool_names(tools)
        self.request_metadata = request_metadata
        self.lifecycle = lifecycle
        self.diagnostics: list[Diagnostic] = []
        self._sse = SSEDecoder(
            max_line_bytes=max_line_bytes, max_event_bytes=max_event_bytes, bytes_data=True)
        self._state = _INITIAL
        self._first = True
        self._expected_seq = 0
        self._last_line = 1  # where an end-of-body finding goes when no event came: line 1
        self._pending: tuple[str, int] | None = None  # the data and line of a broken event
        self._blocks: dict[int, _Block] = {}  # block index: its state and what it remembers
        self._spare: _Block | None = None  # a record free for the next block (`_Block`)
        self._counts: dict[str, int] = {}
        self._seen: dict[tuple[str, str], set[Any]] = {}
        self._last_value: dict[tuple[str, str], Any] = {}
        self._steady: dict[object, _Steady] = {}
        self._max_blocks = max_blocks
        self._end_rejected = False  # the last event, a stream.end, was rejected unplaced
        self._placed = False  # an event reached the lifecycle
        self._failed = False
        self._closed = False
        # The type that the next chunk, if one whole event, most likely is, and what it begins
        # with (`_HOT`): that of the last such chunk of a type a block repeats.
        self._hot: tuple[bytes, str] | None = None

    # -- input ------------------------------------------------------------------------------

    def feed(self, data: Buffer) -> list[Event]:
        """Decode the bytes that arrived (any bytes-like object); returns the events they
        completed, in order.

        Servers flush every event, so the commonest chunk of all is one whole event, and a
        body read in small pieces completes one event a piece, most often: such an event is
        checked on its bytes as `_events` checks it, without building an SSE event first. Most
        often it is of the type of the last (`_hot`), which the SSE layer recognises by its
        head (`SSEDecoder.event_of`); else a whole chunk by its lines
        (`SSEDecoder.whole_event`). An event continuing an open block in the expected order
        changes nothing but the next seq (the hot path, inline here); any other goes on to
        `_whole`. In typed mode the event is parsed and validated in one step (`_Typed.whole`).
        """
        chunk: bytes = data if type(data) is bytes else bytes(data)
        sse = self._sse
        hot = self._hot
        payload = None
        if hot is not None and self._pending is None and not sse.diagnostics:
            head, kind = hot
            taken = sse.event_of(chunk, head)  # None once closed
            if isinstance(taken, bytes):  # an event that ends here, not yet taken
                payload = taken
            elif taken is not None:
                return []  # no event ends in it, as in most pieces of a body in small pieces
        if payload is None:
            if self._closed:
                raise RuntimeError("feed() after close()")
            if (
                chunk[-1:] == b"\n"  # an event ends here, as in every chunk of one whole event
                and self.lifecycle
                and self._pending is None
                and not sse.diagnostics
                and (whole := sse.whole_event(chunk)) is not None
                and (kind := _KIND_OF_LINE.get(whole[0], ""))
            ):
                payload = whole[1]
            else:
                fields = sse.feed_fields(chunk)
                return self._events(fields) if fields else []
        expected = self._expected_seq
        event: Any = None
        typed = self._typed
        if typed is not None:
            validate = typed.whole.get(kind)
            if validate is not None:
                try:
                    event = validate(payload, strict=True)
                except ValueError:  # the general path reports why (a context manager costs more)
                    event = None
            if (
                event is not None
                and event.seq == expected
                and kind in _STEADY_KINDS
                and expected <= _SEQ_MAX
                and (entry := self._steady.get(event.index)) is not None
                and entry[0] == kind
            ):
                # `_Typed.members` settles the commonest text
                if payload.count(b":") == typed.members.get(kind) or self._sound(
                        payload, event, kind):
                    self._expected_seq = expected + 1
                    self._last_line = sse.took_whole_event()
                    return [event]
                event = None  # not to be trusted
            parsed = _UNPARSED
        else:
            try:
                parsed = event = _PARSE_PLAIN(payload)
            except ValueError:
                parsed = _UNPARSED
            if type(event) is dict and kind in _STEADY_KINDS:  # else a KeyError costs more
                try:  # subscripts cost less than get; a member missing is no steady event
                    index = key = event["index"]  # `key`, not known to be an int, stays boxed
                    seq = event["seq"]
                    entry = self._steady.get(key) if type(index) is int else None
                    steady, check = _NOT_STEADY if entry is None else entry
                    if (
                        steady == kind
                        and seq == expected
                        and type(seq) is int
                        and 1 < expected <= _SEQ_MAX
                        and kind == event["type"]
                        and event["v"] == _VERSION
                        and (check is None or check(event))
                    ):
                        delta = event.get("delta")
                        if (  # `_sound`'s commonest case first, inline
                            len(payload) <= _SHALLOW
                            and payload.count(b":")
                            == len(event) + (len(delta) if type(delta) is dict else 0)
                        ) or self._sound(payload, event, kind):
                            self._expected_seq = expected + 1
                            self._last_line = sse.took_whole_event()
                            return [event]
                except KeyError:
                    pass
        events = self._whole(kind, payload, parsed, event)
        if events is not None:
            return events
        fields = sse.feed_fields(chunk)
        return self._events(fields) if fields else []

    def close(self) -> list[Event]:
        """End of body: report an unfinished stream and return any last events."""
        if self._closed:
            return []
        self._closed = True
        sse = self._sse
        sse.close()  # an event still open is discarded, so none comes out
        if sse.diagnostics:
            self._drain_sse()
        if self._pending is not None:
            self._flush_pending()
        rule = _UNFINISHED.get(self._state) if self.lifecycle else None
        if rule is not None:
            if not self._placed:
                self._report(_START_RULE, self._last_line, "the body ended before stream.start")
            if not self._end_rejected:  # else that rejection is the finding
                self._report(rule, self._last_line, "the body ended without stream.end")
        return []

    # -- layers -----------------------------------------------------------------------------

    def _drain_sse(self, through: int | None = None) -> None:
        """Report the SSE layer's findings on lines up to `through` (all when None).

        They are reported just before the first event starting after them, never at the end of
        a chunk, so that they take the same place among the other diagnostics (and strict mode
        raises the same first error) however the body is cut into chunks.
        """
        found = self._sse.diagnostics
        taken = len(found)
        if through is not None:
            taken = 0
            while taken < len(found) and found[taken].line <= through:
                taken += 1
        if taken:
            batch = found[:taken]
            del found[:taken]
            for diagnostic in batch:
                self._add(diagnostic)

    def _whole(
        self, kind: str, payload: bytes, parsed: Any = _UNPARSED, event: Any = None
    ) -> list[Event] | None:
        """The events of one whole event of type `kind` and data `payload` that the hot path
        (`feed`) did not take, found by the SSE layer and not yet taken from it; else None, and
        nothing changed (the chunk is then fed). `parsed` is the data as parsed, if it was, and
        `event`, typed, the model built from it, if one was, which `_sound` checks here before
        it is trusted. The quick path (`_QUICK`) takes what it can, and the general path the
        rest, with what was parsed."""
        sse = self._sse
        known = self._kinds.get(kind)
        if self._typed is not None:
            if event is not None:
                fields = event.__dict__  # read once for both below
                if not (  # `_Typed.members` settles the commonest text, as in `_events`
                    known is not None and known.bare
                    and payload.decode("latin-1").count(":") == known.members
                ) and not self._sound(payload, event, kind, fields):
                    event = None
                elif known is not None and (quick := known.quick) is not None and quick.take(
                        self, fields, True):
                    self._last_line = sse.took_whole_event()
                    return [event]
        else:
            if (
                type(event) is dict
                and known is not None
                and (quick := known.quick) is not None
                and (_bare_and_settled(payload, event, known.bare)
                     or self._sound(payload, event, kind))
                and quick.take(self, event, False)
            ):
                self._last_line = sse.took_whole_event()
                return [event]
            event = None  # the general path builds no model in this mode
        try:
            data = payload.decode()
        except UnicodeDecodeError:  # not taken: the SSE layer reports it
            return None
        at = self._last_line = sse.took_whole_event()
        general = self._general(kind, data, at, parsed, event)
        return [] if general is None else [general]

    def _events(self, sse_events: list[RawFields]) -> list[Event]:
        """The hot loop. A valid event that continues an open block in the expected order
        changes nothing but the next seq, so it skips the general path (`_general`), as in
        `feed`: `steady` maps the index of each such block to what its events are
        (`_Steady`). Their envelope is checked inline: v is the version, and seq is an integer
        (not an integral float, which equals one: D-INTEGERS), the next seq, above 1 (True ==
        1) and at most the largest. The next seq lives in `expected` while no other path runs.
        Any other event of a registered type is parsed once (typed: parsed and validated in one
        step) and tried on the quick path (`_QUICK`); what that does not take goes down the
        general path with what was parsed or built (an event of another type is parsed there).
        A typed event left there, which has findings or opens the lifecycle's rarer cases, is
        parsed once more as an object for the checks that read one."""
        out: list[Event] = []
        steady = self._steady
        sse_found = self._sse.diagnostics
        kinds = self._kinds
        expected = self._expected_seq
        pending = self._pending  # changed only on the general path
        try:
            for sse_type, data, _, _, line in sse_events:
                if sse_found:
                    self._expected_seq = expected
                    self._drain_sse(line)
                parsed: object = _UNPARSED
                model: Any = None
                if pending is None and (known := kinds.get(sse_type)) is not None:
                    validate = known.validate
                    if validate is not None:
                        try:
                            model = validate(data, strict=True)
                        except ValueError:
                            model = None
                        if model is not None:
                            if (
                                known.steady
                                and model.seq == expected
                                and expected <= _SEQ_MAX
                                and (entry := steady.get(model.index)) is not None
                                and entry[0] == sse_type
                            ):
                                # `_Typed.members` settles the commonest text
                                colons = (data.count(b":") if isinstance(data, bytes)
                                          else data.count(":"))
                                if colons == known.members or self._sound(
                                        data, model, sse_type):
                                    expected += 1
                                    out.append(model)
                                    continue
                                model = None  # not to be trusted
                            else:
                                fields = model.__dict__  # read once for both below
                                if not (  # `_Typed.members` settles the commonest text
                                    known.bare and _text(data).count(":") == known.members
                                ) and not self._sound(data, model, sse_type, fields):
                                    model = None
                                elif (quick := known.quick) is not None:
                                    self._expected_seq = expected
                                    if quick.take(self, fields, True):
                                        expected = self._expected_seq
                                        out.append(model)
                                        continue
                    else:
                        try:
                            parsed = obj = _PARSE_PLAIN(data)
                        except ValueError:
                            obj = None
                        if type(obj) is dict:
                            steady_envelope = False
                            check = None
                            if known.steady and steady:  # a block open that it may continue
                                index = key = obj.get("index")  # `key` stays boxed, as in `feed`
                                entry = steady.get(key) if type(index) is int else None
                                kind, check = _NOT_STEADY if entry is None else entry
                                if kind == sse_type:
                                    try:  # subscripts cost less than get, as in `feed`
                                        steady_envelope = (
                                            type(seq := obj["seq"]) is int
                                            and seq == expected
                                            and 1 < expected <= _SEQ_MAX
                                            and kind == obj["type"]
                                            and obj["v"] == _VERSION
                                        )
                                    except KeyError:  # a member missing is no steady event
                                        steady_envelope = False
                            if steady_envelope and (check is None or check(obj)):
                                delta = obj.get("delta")
                                if (  # `_sound`'s commonest case first, inline
                                    len(data) <= _SHALLOW
                                    and (data.count(b":") if isinstance(data, bytes)
                                         else data.count(":"))
                                    == len(obj) + (len(delta) if type(delta) is dict else 0)
                                ) or self._sound(data, obj, sse_type):
                                    expected += 1
                                    out.append(obj)
                                    continue
                            elif (quick := known.quick) is not None and (
                                _bare_and_settled(data, obj, known.bare)
                                or self._sound(data, obj, sse_type)
                            ):
                                self._expected_seq = expected
                                if quick.take(self, obj, False):
                                    expected = self._expected_seq
                                    out.append(obj)
                                    continue
                self._expected_seq = expected
                # bytes the SSE layer found to be UTF-8
                text = data.decode() if isinstance(data, bytes) else data
                event = self._general(sse_type, text, line, parsed, model)
                expected = self._expected_seq
                pending = self._pending
                if event is not None:
                    out.append(event)
        except LLMStreamError as error:
            error.events = list(out)
            raise
        self._expected_seq = expected
        if sse_events:
            self._last_line = sse_events[-1][4]
        return out

    def _sound(
        self, text: str | bytes, value: Any, kind: str, fields: dict[str, Any] | None = None
    ) -> bool:
        """Whether the text of an event that the hot or quick path may take nests within the
        limit (LS-LIMIT-3) and writes no member name twice (D-DUPLICATE-KEYS); the general path
        reports either. Typed, `value` is the model built from it, to be trusted only if this
        holds: the text then also holds no NaN or Infinity, nor a null where its model takes
        one (`_Typed.whole`); `fields`, the model's fields when the caller read them.

        A text holds a colon of its own for each member it writes, outside strings, and within
        its strings one for each colon they hold, unless it escapes one (\\u003a). So a text
        with no more colons than members its value holds, and colons within the strings of its
        value, lost none of the members it wrote to a name written twice. The members counted:
        those of an object and its delta; typed, those the required fields of its type make
        (`_Typed.members`), else those its text set. The colons: those of the strings where
        text runs free (`_accounted`). A typed text with just the members of its type's
        required fields holds nothing its model does not type, so no NaN, Infinity or null
        either.
        Any other text is left to `duplicate_names`.
        """
        if len(text) > _SHALLOW and too_deep(text):
            return False
        view = _text(text)
        colons = view.count(":")
        typed = self._typed
        if typed is not None:
            members = typed.members.get(kind, 0)
            if colons == members:
                return True
            if fields is None:
                fields = value.__dict__
            if members and _accounted(view, colons, members, fields, kind):
                return True
            nullable = kind in typed.nullable
            if "NaN" in view or "Infinity" in view or (nullable and "null" in view):
                return False
            if nullable:  # it may have more: those its text set
                members = len(value.model_fields_set)
            elif members:  # its colons were weighed against these members above
                return not duplicate_names(text, value)
        else:
            obj: dict[str, Any] = value  # compiled, a dict's get is a direct call, Any's is not
            fields = obj
            delta = obj.get("delta")
            members = len(obj) + (len(delta) if type(delta) is dict else 0)
        if colons == members or _accounted(view, colons, members, fields, kind):
            return True
        return not duplicate_names(text, value)

    def _ends_well(self, kind: str, target: str) -> bool:
        """Whether `_at_end` would find nothing, at an event of this type that moves the
        stream to `target`, its final state."""
        failed = self._failed or target == _FAILED
        if not (failed and _UNFINISHED_BLOCKS_ALLOWED):
            for block in self._blocks.values():
                if block.state in _UNFINISHED_BLOCKS:
                    return False
        counts = self._counts
        for expected, minimum in _MINIMUMS:
            if counts.get(expected, 0) + (expected == kind) < minimum:
                return False
        return True

    def _general(
        self,
        sse_type: str,
        data: str,
        line: int,
        parsed: object = _UNPARSED,
        model: EventEnvelope | None = None,
    ) -> Event | None:
        """Every check of an event; `parsed` is its data as the hot path parsed it, if it did,
        and `model` the event as typed mode built it from its data, if it did."""
        obj = self._parse(data, line, parsed)
        kind = None if obj is None else obj.get("type")
        if type(kind) is not str:
            self._unplaced(sse_type)
        if obj is None:
            return None
        before = len(self.diagnostics)
        event = self._event(obj, sse_type, line, model)
        if event is not None and type(kind) is str and kind in _CALLS and any(
            d.severity is Severity.ERROR for d in self.diagnostics[before:]
        ):
            return None  # a tool call a check refused is not one to make
        return event

    def _unplaced(self, sse_type: str) -> None:
        """An event the lifecycle cannot place: when its event: line says it ends the stream,
        its rejection is the finding, not a stream that then ended without one."""
        if self.lifecycle and life.PLACES.get(sse_type) in _LAST_PLACES:
            self._end_rejected = True
            self._steady.clear()  # so that whatever follows reaches the lifecycle

    def _parse(self, data: str, line: int, parsed: object = _UNPARSED) -> dict[str, Any] | None:
        """The event's JSON object, joining an envelope split across two events (LS-SSE-3)."""
        try:
            obj = loads(data) if parsed is _UNPARSED or too_deep(data) else parsed
        except JSONLimitError as error:
            self._flush_pending()
            self._expected_seq += 1
            self._report(error.rule, line, f"data is refused: {error}")
            return None
        except ValueError:
            pending = self._pending
            if pending is not None:
                self._pending = None
                try:
                    joined = loads(pending[0] + "\n" + data)
                except ValueError:
                    self._not_json(*pending)
                    self._pending = (data, line)
                    return None
                if isinstance(joined, dict):
                    self._report("LS-SSE-3", pending[1],
                                 f"one JSON envelope is split across the events at lines "
                                 f"{pending[1]} and {line}")
                    return self._unique(pending[0] + "\n" + data, joined, line)
                self._not_json(*pending)
                self._not_json(data, line)
                return None
            self._pending = (data, line)
            return None
        self._flush_pending()
        if type(obj) is not dict:
            self._expected_seq += 1
            self._report("LS-SSE-2", line, f"data must be one JSON object, got {_json_kind(obj)}")
            return None
        return self._unique(data, obj, line)

    def _unique(self, data: str, obj: dict[str, Any], line: int) -> dict[str, Any] | None:
        """The object, unless a member name is written twice in it (decision D-DUPLICATE-KEYS)."""
        if not duplicate_names(data, obj):
            return obj
        self._expected_seq += 1
        name = duplicate_name(data)
        self._report("LS-SSE-6", line, f"data has the member name {name!r} twice in one object: "
                                       "every member name must be unique")
        return None

    def _flush_pending(self) -> None:
        if self._pending is not None:
            self._not_json(*self._pending)
            self._pending = None

    def _not_json(self, data: str, line: int) -> None:
        self._expected_seq += 1
        preview = data if len(data) <= 60 else data[:57] + "..."
        self._report("LS-SSE-2", line, f"data is not one complete JSON object: {preview!r}")

    def _event(
        self, obj: dict[str, Any], sse_type: str, line: int, model: EventEnvelope | None = None
    ) -> Event | None:
        kind = obj.get("type")
        registered = type(kind) is str and kind in life.PLACES
        integers = life.ENVELOPE_INTEGER_MEMBERS
        if type(kind) is str:
            integers = life.INTEGER_MEMBERS.get(kind, integers)
        for name in integers:
            number = obj.get(name)
            if type(number) is float and number.is_integer():
                obj[name] = int(number)  # the integer it equals (decision D-INTEGERS)
        if type(kind) is str and kind != sse_type:
            self._report("LS-ENV-4", line,
                         f"the event: field is {sse_type!r} but the JSON type is {kind!r}")
        if model is None and self._typed is not None and type(kind) is str:
            build = self._typed.trusted.get(kind)
            if build is not None and None not in obj.values():
                with suppress(ValueError):
                    model = build(obj, strict=True)
        if model is not None and model.seq > _SEQ_MAX:
            model = None  # the validator reports it (LS-SEC-6)
        valid = model is not None or self._is_valid(obj)
        if not valid:
            errors = self._errors(obj)
            for error in errors:
                self._report(error.rule, line, error.message)
            # an event whose only findings are warnings (LS-SEC-6, say) is returned
            valid = all(severity(error.rule) is Severity.WARNING for error in errors)
        if type(kind) is str and not registered:
            self._report("LS-TYPE-1", line, f"{kind!r} is not a registered event type")
        if self.lifecycle:
            if type(kind) is str:
                self._sequence(obj, kind, line)
                self._lifecycle(obj, kind, line)
            else:
                self._sequence(obj, "", line)
        elif type(kind) is str:
            self._field_checks(obj, kind, line)
        if not valid:
            return None
        if self._typed is None:
            return obj
        if model is None:
            models, unknown = self._typed.models, self._typed.unknown
            kind_model = models.get(kind, unknown) if type(kind) is str else unknown
            model = kind_model.model_validate(obj)
        return model

    def _sequence(self, obj: dict[str, Any], kind: str, line: int) -> None:
        seq = obj.get("seq")
        if type(seq) is not int:
            self._expected_seq += 1
            return
        if self._first and life.PLACES.get(kind) == "first":
            if seq != 0:
                self._report("LS-SEQ-1", line, f"stream.start must have seq 0, got {seq}")
        elif seq != self._expected_seq:
            self._report("LS-SEQ-2", line, f"seq is {seq}, expected {self._expected_seq}")
        self._first = False
        self._expected_seq = seq + 1

    def _lifecycle(self, obj: dict[str, Any], kind: str, line: int) -> None:
        self._placed = True
        self._end_rejected = False
        place = life.PLACES.get(kind, life.UNREGISTERED_PLACE)
        state = self._state
        target = life.STREAM_TRANSITIONS.get((state, place))
        if target is None:
            rule = life.STREAM_VIOLATIONS[(state, place)]
            why = life.STREAM_STATES[state].rstrip(".").lower()
            self._report(rule, line, f"{kind} is not allowed in state {state} ({why})")
            self._field_checks(obj, kind, line)  # a tool call out of place is checked all the same
            return
        if target != state:
            self._state = target
            self._steady.clear()
        if target == life.FAILED_STATE:
            self._failed = True
        if kind in life.EXPECTED:  # counted only where a minimum is checked: bounded state
            self._counts[kind] = self._counts.get(kind, 0) + 1
        if place in ("block", "block-end"):
            self._block(obj, kind, place, line)
        self._field_checks(obj, kind, line)
        if target == life.STREAM_FINAL:
            self._at_end(line)

    def _block(self, obj: dict[str, Any], kind: str, place: str, line: int) -> None:
        index = obj.get("index")
        if type(index) is not int:
            return
        block = self._blocks.get(index)
        if block is None:
            if len(self._blocks) >= self._max_blocks:
                self._report("LS-LIMIT-5", line, f"block {index} is one more than the "
                                                 f"{self._max_blocks} blocks a stream may open")
                return
            state = life.BLOCK_INITIAL
        else:
            state = block.state
        target = life.BLOCK_TRANSITIONS.get((state, place))
        if target is None:
            rule = life.BLOCK_VIOLATIONS[(state, place)]
            what = "content" if place == "block" else "a second content.stop"
            self._report(rule, line, f"{what} for block {index} after its content.stop")
            return
        if block is None:
            block = _Block(target)
        else:  # never a settled block's shared record: no event moves a settled block
            block.state = target
        self._blocks[index] = _SETTLED.get(target, block)
        if target != state:
            self._steady.pop(index, None)
        if place == "block":
            block_kind = life.BLOCK_KINDS.get(kind)
            if block_kind is not None:
                established = block.kind
                if established is None:
                    established = block.kind = block_kind
                if established != block_kind:
                    self._report(life.BLOCK_KIND_RULE, line,
                                 f"{kind} in block {index}, which holds {established} content")
                else:
                    self._in_order(obj, kind, index, block, line)
            limit = life.PER_BLOCK.get(kind)
            if limit is not None:  # counted only where limited: bounded state
                count = block.held(kind) + 1
                block.hold(kind, count)
                if count > limit:
                    self._report(life.BLOCK_KIND_RULE, line,
                                 f"block {index} holds {count} {kind} events, at most {limit}")
            wanted = life.CLOSES_WITH.get(kind)
            if wanted is not None:
                block.closes_with = (kind, wanted)
            elif (
                kind in _STEADY_KINDS
                and established == block_kind
                and block.completed is None
                and self._state in _KEEPS_OPEN
            ):
                self._steady[index] = self._steady_entry(kind)
        else:
            reason = obj.get("stop_reason")
            member, wanted = ("", reason) if block.closes_with is None else block.closes_with
            if reason != wanted:
                self._report(life.CLOSES_WITH_RULE, line,
                             f"block {index} holds a {member}, so it closes with "
                             f"stop_reason {wanted!r}, not {reason!r}")
            joining = block.joining
            block.joining = None
            if joining is not None:
                unless = joining.of.unless_stop_reason
                if reason != unless:
                    cut = f" (only one cut off with stop_reason {unless!r} may)" if unless else ""
                    self._report(joining.of.rule, line, f"block {index} holds {joining.kind} "
                                                        f"fragments but no {joining.of.event}{cut}")

    def _steady_entry(self, kind: str) -> Any:
        """What `_steady` holds of a block whose events are of this type, which are then what
        the next chunk most likely completes (`_hot`)."""
        self._hot = _HOT[kind]
        unchecked, checked = _STEADY_ENTRIES[kind]
        return checked if self._validates else unchecked

    def _in_order(
        self, obj: dict[str, Any], kind: str, index: int, block: _Block, line: int
    ) -> None:
        """The order within a block: nothing after the event that completes it, and fragments
        that add up to the event they build (`life.COMPLETES_BLOCK`, `life.FRAGMENTS`)."""
        completed = block.completed
        if completed is not None and kind != completed:
            self._report(life.COMPLETES_BLOCK[completed], line,
                         f"{kind} in block {index} after its {completed}")
        elif kind in life.COMPLETES_BLOCK:
            block.completed = kind
            self._steady.pop(index, None)
        fragments = life.FRAGMENTS.get(kind)
        if fragments is not None:
            self._fragment(obj, kind, fragments, index, block, line)
        elif kind in _BUILT_BY:
            self._build(obj, kind, block, line)

    def _fragment(
        self,
        obj: dict[str, Any],
        kind: str,
        fragments: life.Fragments,
        index: int,
        block: _Block,
        line: int,
    ) -> None:
        if block.built:
            self._report(fragments.rule, line, f"{kind} in block {index} after its "
                                               f"{fragments.event}")
            return
        joining = block.joining
        if joining is None:
            missing = [name for name in fragments.carries if obj.get(name) is None]
            if missing:
                self._report(fragments.rule, line, f"the first {kind} of block {index} carries "
                                                   "no " + " and no ".join(missing))
            joining = _Joining(kind, fragments, {n: obj.get(n) for n in fragments.carries})
            block.joining = joining
        joining.add(obj.get(fragments.field))

    def _build(self, obj: dict[str, Any], kind: str, block: _Block, line: int) -> None:
        """The event that the fragments of its block, if any, add up to."""
        block.built = True
        joining = block.joining
        block.joining = None
        if joining is None:
            return
        field, rule = joining.of.field, joining.of.rule
        if not joining.adds_up_to(obj.get(field)):
            self._report(rule, line, f"{kind} {field} is not its {joining.kind} fragments "
                                     "joined in order")
        for name, carried in joining.carried.items():
            if type(carried) is str and obj.get(name) != carried:
                self._report(rule, line, f"{kind} {name} is {obj.get(name)!r}, but its "
                                         f"{joining.kind} fragments carry {carried!r}")

    def _field_checks(self, obj: dict[str, Any], kind: str, line: int) -> None:
        """The checks beyond the schema of an event's fields; those that compare it with the
        events before it only with the lifecycle."""
        checks = life.FIELD_CHECKS.get(kind)
        if checks:
            for check, field, rule in checks:
                if self.lifecycle or check not in _ORDERED_CHECKS:
                    self._field_check(check, kind, field, obj.get(field), rule, line)

    def _field_check(
        self, check: str, kind: str, field: str, value: Any, rule: str, line: int
    ) -> None:
        if check == "json-text":
            if type(value) is str and not _CERTAINLY_JSON(value):  # else `loads` accepts it
                try:
                    loads(value)
                except ValueError:
                    self._report(rule, line, f"{kind} {field} is not JSON text")
        elif check == "unique":
            seen = self._seen.setdefault((kind, field), set())
            if type(value) is str or type(value) is int:
                if value in seen:
                    self._report(rule, line, f"{kind} {field} {value!r} is used twice")
                elif len(seen) >= self._max_blocks:
                    self._report("LS-LIMIT-5", line, f"{kind} {field} {value!r} is one more than "
                                                     f"the {self._max_blocks} a stream may carry")
                else:
                    seen.add(value)
        elif check == "declared-tool":
            if self.tools is not None and type(value) is str and value not in self.tools:
                declared = ", ".join(sorted(self.tools)) or "none"
                self._report(rule, line, f"tool {value!r} was not declared (declared: {declared})")
        elif check == "echoes-request-metadata":
            wanted = (self.request_metadata or {}).get(field)
            if wanted is not None and value != wanted:
                found = f"carries no {field}" if value is None else f"{field} is {value!r}"
                self._report(rule, line, f"{kind} {found}, but should echo the request's "
                                         f"{field} {wanted!r}")
        elif check == "non-decreasing" and type(value) is int:
            key = (kind, field)
            last = self._last_value.get(key)
            if last is not None and value < last:
                self._report(rule, line,
                             f"{kind} {field} fell from {last} to {value}; usage events "
                             "carry running totals")
            self._last_value[key] = value

    def _at_end(self, line: int) -> None:
        if not (self._failed and life.UNFINISHED_BLOCKS_AFTER_FAILURE_ALLOWED):
            for index in sorted(self._blocks):
                rule = life.BLOCK_UNFINISHED.get(self._blocks[index].state)
                if rule is not None:
                    self._report(rule, line, f"block {index} was never closed by content.stop")
        for kind, (minimum, rule) in life.EXPECTED.items():
            count = self._counts.get(kind, 0)
            if count < minimum:
                self._report(rule, line, f"the stream carried {count} {kind} event(s), "
                                         f"expected at least {minimum}")

    # -- reporting --------------------------------------------------------------------------

    def _report(self, rule: str, line: int, message: str) -> None:
        self._add(Diagnostic(rule, line, message, severity(rule)))

    def _add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)
        if self.strict and diagnostic.severity is Severity.ERROR:
            raise LLMStreamError(diagnostic)

    @property
    def conforming(self) -> bool:
        """No error so far (warnings do not count)."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


class _Block:
    """One content block: its state (`life.BLOCK_STATES`) and, while events may still come in
    it, what its lifecycle remembers of it: the kind of content it holds, how many events it
    holds of each type of `life.PER_BLOCK`, the stop_reason it closes with (`life.CLOSES_WITH`,
    with the type that wants it), the event that completed it (`life.COMPLETES_BLOCK`), its
    fragments so far and whether it holds the event they build (`life.FRAGMENTS`). A block in
    a state that no event leaves keeps none of it: it is that state's one record (`_SETTLED`),
    which nothing changes, so that a stream of many blocks holds little for the closed ones.
    One record a block, not a table a fact, costs an event one lookup rather than several;
    the quick path keeps the record of the block it closed last (`Decoder._spare`) for the
    next it opens, rather than make one a block."""

    state: str
    kind: str | None
    counted: str | None
    """The first type of `life.PER_BLOCK` the block holds, whose count is `count`."""
    count: int
    counts: dict[str, int] | None
    """The count of any other type of `life.PER_BLOCK` the block holds."""
    closes_with: tuple[str, str] | None
    completed: str | None
    joining: _Joining | None
    built: bool

    def __init__(self, state: str) -> None:
        self.reset(state)

    def reset(self, state: str) -> None:
        """The record of a block that has just moved to `state`, holding nothing yet."""
        self.state = state
        self.kind = self.counted = self.completed = None
        self.count = 0
        self.counts = self.closes_with = self.joining = None
        self.built = False

    def held(self, kind: str) -> int:
        """How many events of this type of `life.PER_BLOCK` the block holds."""
        if kind == self.counted:
            return self.count
        return 0 if self.counts is None else self.counts.get(kind, 0)

    def hold(self, kind: str, count: int) -> None:
        """That the block holds `count` events of this type of `life.PER_BLOCK`."""
        if self.counted is None or kind == self.counted:
            self.counted, self.count = kind, count
        elif self.counts is None:
            self.counts = {kind: count}
        else:
            self.counts[kind] = count


_SETTLED: Final[dict[str, _Block]] = {
    state: _Block(state) for state in life.BLOCK_STATES
    if not any(source == state for source, _ in life.BLOCK_TRANSITIONS)
}
"""The one record of each block state that no event leaves (a block closed)."""


_JOIN_KEPT: Final = 1 << 12
"""How many characters of a block's fragments are kept as text before they are hashed."""


class _Joining:
    """The fragments of one block so far: their text joined while it is short, and once it is
    longer, a hash of it, so that the memory a block takes stays bounded however long its
    fragments run. Comparing the text is the hash's verdict without the hashing, which is most
    of the work on tool calls streamed as fragments."""

    def __init__(self, kind: str, of: life.Fragments, carried: dict[str, Any]) -> None:
        self.kind = kind
        self.of = of
        self.carried = carried
        self._text: str | None = ""  # None: a fragment was no string, the join is unknowable
        self._hash: Any = None

    def add(self, fragment: object) -> None:
        if type(fragment) is not str:  # its schema error is reported: the join is unknowable
            self._text = self._hash = None
        elif self._hash is not None:
            self._hash.update(fragment.encode())
        elif self._text is not None:
            text = self._text + fragment
            if len(text) > _JOIN_KEPT:
                self._hash = hashlib.sha256(text.encode())
                self._text = ""
            else:
                self._text = text

    def built(self, obj: dict[str, Any]) -> bool:
        """Whether the event `obj` is what these fragments build, as `Decoder._build` judges
        it."""
        if not self.adds_up_to(obj.get(self.of.field)):
            return False
        for name, carried in self.carried.items():
            if type(carried) is str and obj.get(name) != carried:
                return False
        return True

    def adds_up_to(self, whole: object) -> bool:
        """Whether the fragments joined are `whole`; true when that cannot be known."""
        if self._text is None or type(whole) is not str:
            return True
        if self._hash is None:
            return self._text == whole
        return bool(self._hash.digest() == hashlib.sha256(whole.encode()).digest())


_KNOWN_CHECKS: Final = frozenset(
    {"non-decreasing", "json-text", "unique", "declared-tool", "echoes-request-metadata"})
"""The field checks of `life.FIELD_CHECKS` that the quick path weighs."""

_Checks = tuple[tuple[str, Any], ...]
"""The fields of one kind of field check of a type, each with the key of what it remembers:
a `(type, field)` tuple, typed Any so that compiled code keeps it as the one object it is rather
than build it anew for each lookup."""


class _QuickPath:
    """The quick path of one event type: what `_event` checks and changes for it, all checks
    before any change, with the type's plan read once. This one takes no event: that of a type
    whose plan holds what the quick path does not know, so the general path decides every such
    event (`_never`). Each place has a quick path of its own (`_QuickOutside`, `_QuickBlockEnd`,
    `_QuickInBlock`), so that an event pays only for the parts of the lifecycle its place has; a
    part of the plan the type has none of costs one test of an attribute. They are classes, not
    closures, so that compiled code calls them directly rather than through Python's calls."""

    def __init__(self, kind: str, plan: _Plan) -> None:
        self.kind = kind
        self.moves = plan.moves
        self.first = plan.place == "first"
        self.counted = plan.counted
        self.ends = life.STREAM_FINAL in plan.moves.values()
        self.integers = plan.integers
        self.schema: Callable[[dict[str, Any]], bool] = EVENT_CHECKS.get(kind, _valid)

        def of(check: str) -> _Checks:
            return tuple((field, key) for name, field, key in plan.checks if name == check)

        self.checks = bool(plan.checks)
        self.rising, self.texts, self.unique = of("non-decreasing"), of("json-text"), of("unique")
        self.declared, self.echoed = of("declared-tool"), of("echoes-request-metadata")

    def take(self, decoder: Decoder, obj: dict[str, Any], validated: bool) -> bool:
        """Whether the event passes every check of the general path, which it then changes as
        the general path would; given the decoder, the event's object (or its model's fields,
        when validated), whether typed mode validated it."""
        return False

    def _envelope(self, decoder: Decoder, obj: dict[str, Any]) -> bool:
        """The envelope checks of an event no model validated, whose seq was checked."""
        # the model's type and version are its schema's; compiled, str compares directly
        version, kind = obj.get("v"), obj.get("type")
        if type(version) is not str or version != _VERSION or type(kind) is not str or (
                kind != self.kind):
            return False
        for name in self.integers:  # an integral float leaves the general path to convert
            if type(obj.get(name)) is float:
                return False
        return not decoder._validates or self.schema(obj)

    def _checked(self, decoder: Decoder, obj: dict[str, Any]) -> bool:
        """Whether an event passes its type's field checks, as `_field_check` judges them,
        called once every other check held; when it does, what they remember of it is
        remembered, as `_field_check` remembers it."""
        rising, texts, unique = self.rising, self.texts, self.unique
        if rising:
            lasts = decoder._last_value
            for field, key in rising:
                value = obj.get(field)
                if type(value) is int:
                    last = lasts.get(key)
                    if last is not None and value < last:
                        return False
        if texts:
            for field, _ in texts:
                value = obj.get(field)
                if type(value) is str and not _CERTAINLY_JSON(value):  # parsed as `loads` does
                    try:  # (D-LIMITS); what pydantic-core refuses is left to the general path
                        _PARSE(value, allow_inf_nan=False)
                    except ValueError:
                        return False
                    if len(value) > _SHALLOW and too_deep(value):
                        return False
        if unique:
            seen = decoder._seen
            for field, key in unique:
                value = obj.get(field)
                if type(value) is str or type(value) is int:
                    known = seen.get(key)
                    if known is not None and (
                            value in known or len(known) >= decoder._max_blocks):
                        return False
        tools = decoder.tools
        if self.declared and tools is not None:
            for field, _ in self.declared:
                value = obj.get(field)
                if type(value) is str and value not in tools:
                    return False
        metadata = decoder.request_metadata
        if self.echoed and metadata:  # none to echo: nothing to check
            for field, _ in self.echoed:
                wanted = metadata.get(field)
                if wanted is not None and obj.get(field) != wanted:
                    return False
        # Every check held: what `_field_check` remembers.
        if rising:
            lasts = decoder._last_value
            for field, key in rising:
                value = obj.get(field)
                if type(value) is int:
                    lasts[key] = value
        if unique:
            seen = decoder._seen
            for field, key in unique:
                value = obj.get(field)
                if type(value) is str or type(value) is int:
                    kept = seen.get(key)
                    if kept is None:
                        seen[key] = {value}
                    else:
                        kept.add(value)
        return True

    def _in_order(self, decoder: Decoder, obj: dict[str, Any], validated: bool) -> int:
        """The event's seq if it is the one expected (an int from 0, as the schema has it) and,
        unless the event was validated, its envelope holds; else -1."""
        seq = obj.get("seq")
        if type(seq) is not int or seq != (
            0 if self.first and decoder._first else decoder._expected_seq
        ) or not 0 <= seq <= _SEQ_MAX or (not validated and not self._envelope(decoder, obj)):
            return -1
        return seq

    def _moved(self, decoder: Decoder, seq: int, state: str, target: str) -> None:
        """The changes `_sequence` and `_lifecycle` make for an event that a quick path took,
        the same at every place."""
        decoder._placed = True
        decoder._end_rejected = False
        decoder._expected_seq = seq + 1
        decoder._first = False
        if target != state:
            decoder._state = target
            decoder._steady.clear()
            if target == _FAILED:
                decoder._failed = True
        if self.counted:
            kind = self.kind
            decoder._counts[kind] = decoder._counts.get(kind, 0) + 1


def _valid(obj: dict[str, Any]) -> bool:
    return True


_never: Final = _QuickPath(
    "", _Plan("", {}, {}, None, None, False, None, False, None, (), False, ()))
"""The quick path that takes no event."""


def _quick_path(kind: str, plan: _Plan) -> _QuickPath:
    """The quick path of one event type, made from its plan."""
    if any(check not in _KNOWN_CHECKS for check, _, _ in plan.checks):
        return _never
    if not plan.block_moves:
        return _QuickOutside(kind, plan)
    if plan.place != "block":
        return _QuickBlockEnd(kind, plan)
    if plan.block_kind is None:
        return _never
    return _QuickInBlock(kind, plan)


class _QuickOutside(_QuickPath):
    """The quick path of a type whose place is outside blocks: stream.start, usage, error,
    stream.end."""

    def take(self, decoder: Decoder, obj: dict[str, Any], validated: bool) -> bool:
        seq = self._in_order(decoder, obj, validated)
        if seq < 0:
            return False
        state = decoder._state
        target = self.moves.get(state)
        if target is None or (
            self.ends and target == _FINAL
            and not decoder._ends_well(self.kind, target)
        ) or (self.checks and not self._checked(decoder, obj)):  # the last: it remembers
            return False
        # Every check held: the changes `_sequence`, `_lifecycle` and `_field_check` make.
        self._moved(decoder, seq, state, target)
        return True


class _QuickBlockEnd(_QuickPath):
    """The quick path of a type that closes a block: content.stop."""

    def __init__(self, kind: str, plan: _Plan) -> None:
        super().__init__(kind, plan)
        self.block_moves = plan.block_moves
        self.unopened = plan.block_moves.get(life.BLOCK_INITIAL)
        """What a block this type comes to first becomes; None: it may not come first."""

    def take(self, decoder: Decoder, obj: dict[str, Any], validated: bool) -> bool:
        seq = self._in_order(decoder, obj, validated)
        if seq < 0:
            return False
        state = decoder._state
        target = self.moves.get(state)
        index: Any = obj.get("index")  # compiled, this stays boxed for the dicts keyed by it:
        at = index  # this is the name that the test below makes an int
        if target is None or type(at) is not int:
            return False
        blocks = decoder._blocks
        block = blocks.get(index)
        if block is None:  # a block unopened holds nothing (`_block` keeps no state for one)
            block_target = self.unopened
            if block_target is None or len(blocks) >= decoder._max_blocks:
                return False
        else:
            block_target = self.block_moves.get(block.state)
            if block_target is None:
                return False
            reason = obj.get("stop_reason")
            wanted = block.closes_with
            if wanted is not None and reason != wanted[1]:
                return False
            joining = block.joining
            if joining is not None and reason != joining.of.unless_stop_reason:
                return False
        if (self.ends and target == _FINAL
                and not decoder._ends_well(self.kind, target)) or (
            self.checks and not self._checked(decoder, obj)  # the last check: it remembers
        ):
            return False
        # Every check held: the changes `_sequence`, `_lifecycle`, `_block` and
        # `_field_check` make.
        self._moved(decoder, seq, state, target)
        if block is None:
            settled = _SETTLED.get(block_target)
            blocks[index] = _Block(block_target) if settled is None else settled
        else:
            block.joining = None
            if block_target != block.state:
                block.state = block_target
                settled = _SETTLED.get(block_target)
                if settled is not None:  # the record is free: kept for the next block
                    blocks[index] = settled
                    decoder._spare = block
                if decoder._steady:
                    decoder._steady.pop(index, None)
        return True


class _QuickInBlock(_QuickPath):
    """The quick path of a type whose events make up a block: content.delta's first in its
    block, tool.call, tool.call.delta, the reasoning events."""

    def __init__(self, kind: str, plan: _Plan) -> None:
        super().__init__(kind, plan)
        self.block_moves = plan.block_moves
        self.block_kind: str = plan.block_kind or ""
        self.limit = plan.limit
        self.completes = plan.completes
        self.fragments = plan.fragments
        self.builds = plan.builds
        self.carries: tuple[str, ...] = () if plan.fragments is None else plan.fragments.carries
        # Any: compiled, a tuple[str, str] would be unpacked here and built anew for each event
        self.closes_with: Any = None if plan.closes_with is None else (kind, plan.closes_with)
        self.steady = kind in _STEADY_KINDS
        # What `Decoder._steady_entry` reads, read once (Any: compiled, kept as the objects
        # they are, not unpacked and built anew for each block)
        self.hot: Any = _HOT.get(kind)
        self.entry: Any = None
        self.checked_entry: Any = None
        if self.steady:
            self.entry, self.checked_entry = _STEADY_ENTRIES[kind]
        limit = plan.limit
        self.unopened = (
            plan.block_moves.get(life.BLOCK_INITIAL) if limit is None or limit > 0 else None)
        """What a block this type opens becomes; None: it may not open one."""

    def take(self, decoder: Decoder, obj: dict[str, Any], validated: bool) -> bool:
        seq = self._in_order(decoder, obj, validated)
        if seq < 0:
            return False
        state = decoder._state
        target = self.moves.get(state)
        index: Any = obj.get("index")  # compiled, this stays boxed for the dicts keyed by it:
        at = index  # this is the name that the test below makes an int
        if target is None or type(at) is not int:
            return False
        kind, limit, fragments = self.kind, self.limit, self.fragments
        blocks = decoder._blocks
        block = blocks.get(index)
        joining = None
        if block is None:
            # A block unopened holds nothing (`_block` keeps no state for one): no kind, no
            # event that completed it, no count, no fragments, nothing built.
            block_target = self.unopened
            if block_target is None or len(blocks) >= decoder._max_blocks or (
                fragments is not None and any(obj.get(name) is None for name in self.carries)
            ):
                return False
            established, held = None, 0
        else:
            block_target = self.block_moves.get(block.state)
            if block_target is None:
                return False
            established = block.kind
            completed = block.completed
            held = 0 if limit is None else block.held(kind)
            if (
                (established is not None and established != self.block_kind)
                or (completed is not None and kind != completed)
                or (limit is not None and held >= limit)
            ):
                return False
            joining = block.joining
            if fragments is not None:
                if block.built or (
                    joining is None and any(obj.get(name) is None for name in self.carries)
                ):
                    return False
            elif self.builds and joining is not None and not joining.built(obj):
                return False
        if (self.ends and target == _FINAL
                and not decoder._ends_well(kind, target)) or (
            self.checks and not self._checked(decoder, obj)  # the last check: it remembers
        ):
            return False
        # Every check held: the changes `_sequence`, `_lifecycle`, `_block` and
        # `_field_check` make.
        self._moved(decoder, seq, state, target)
        if block is None:  # a block opened
            block = decoder._spare
            if block is None:
                block = _Block(block_target)
            else:
                decoder._spare = None
                block.reset(block_target)
            blocks[index] = _SETTLED.get(block_target, block)
        elif block_target != block.state:  # one that moves
            block.state = block_target
            blocks[index] = _SETTLED.get(block_target, block)
            if decoder._steady:
                decoder._steady.pop(index, None)
        if established is None:
            block.kind = self.block_kind
        if self.completes:
            block.completed = kind
            if decoder._steady:
                decoder._steady.pop(index, None)
        if fragments is not None:
            if joining is None:
                carried = {name: obj.get(name) for name in self.carries}
                joining = block.joining = _Joining(kind, fragments, carried)
            joining.add(obj.get(fragments.field))
        elif self.builds:
            block.built = True
            block.joining = None
        if limit is not None:
            block.hold(kind, held + 1)
        closes_with = self.closes_with
        if closes_with is not None:
            block.closes_with = closes_with
        elif self.steady and block.completed is None and target in _KEEPS_OPEN:
            decoder._hot = self.hot
            decoder._steady[index] = self.checked_entry if decoder._validates else self.entry
        return True


_QUICK: Final[dict[str, _QuickPath]] = {
    kind: _quick_path(kind, plan) for kind, plan in _PLANS.items()}
"""The quick path of each registered event type, made once from its plan."""


class _Kind:
    """What the loops over events (`Decoder._events`, `Decoder._whole`) weigh of one registered
    event type in one mode: one lookup an event rather than one a table."""

    def __init__(self, kind: str, quick: _QuickPath | None, typed: _Typed | None) -> None:
        self.quick = quick
        """Its quick path (`_QUICK`); None without the lifecycle."""
        self.steady = kind in _STEADY_KINDS
        self.bare = kind in _BARE
        self.validate: Callable[..., Any] | None = None if typed is None else typed.whole.get(kind)
        """Typed: its model's parse and validation in one step (`_Typed.whole`)."""
        self.members: int = 0 if typed is None else typed.members.get(kind, 0)
        """Typed: `_Typed.members`, or 0 (which no text of an event has) where that does not
        settle a text."""


_Mode = tuple[
    _Typed | None,
    dict[str, _Kind],
    Callable[[object], bool],
    Callable[[object], list[SchemaError]],
]
"""What a decoder of one mode reads of the tables shared by every decoder: the typed tables
(`_Typed`) when typed, what the loops over events weigh of each registered type (`_Kind`), and
the validator's verdict and findings on an event (of its schema, or of its envelope alone)."""

_MODES: Final[dict[int, _Mode]] = {}
"""The `_Mode` of each mode, made once a mode, by its number (`_mode`)."""


def _mode(typed: bool, validate: bool, lifecycle: bool) -> _Mode:
    """The tables of a decoder of this mode, made once: a decoder reads them in one lookup, by
    a number rather than a tuple of its options, which compiled code would build and hash."""
    number = (4 if typed else 0) + (2 if validate else 0) + (1 if lifecycle else 0)
    mode = _MODES.get(number)
    if mode is None:
        tables = _typed_tables() if typed else None
        kinds = {kind: _Kind(kind, quick if lifecycle else None, tables)
                 for kind, quick in _QUICK.items()}
        if validate:
            mode = (tables, kinds, is_valid_event, validate_event)
        else:
            mode = (tables, kinds, is_valid_envelope, validate_envelope)
        _MODES[number] = mode
    return mode


def _tool_names(tools: Iterable[str | Mapping[str, Any]]) -> frozenset[str]:
    """The declared tool names: from names, or from the request's `tools` array (objects, or
    models, with a `name`)."""
    # Each checked here as it is: compiled, a value typed as the parameter's would be cast first.
    given: Iterable[object] = tools
    if isinstance(given, (str, bytes)):
        raise TypeError("tools must be the declared tool names or the request's tools array, "
                        f"not one string: {given!r}")
    names = set()
    for tool in given:
        name = tool.get("name") if isinstance(tool, Mapping) else getattr(tool, "name", tool)
        if type(name) is not str:
            raise TypeError(f"a declared tool is a name or an object with a string name, "
                            f"got {tool!r}")
        names.add(name)
    return frozenset(names)


def _json_kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
