"""Layer 1 of the decoder (draft section 5.1): bytes to Server-Sent Events, sans-IO.

The rules are WHATWG HTML's "event stream interpretation", to the letter, because that is what
browsers and SDKs do: a looser or stricter reading would make our verdicts disagree with what
clients actually see.

This is the hot path of every client, so the common case costs a few C-level calls per chunk
rather than Python work per byte or per line: a chunk in which no event ends is held as it came;
the bytes up to the last blank line, of the chunks held and the one that ends an event, are
decoded in one call; a run of events of the usual shapes (in CRLF line ends, once its CRs are
dropped) is cut in a few calls: an ``event:`` line then a ``data:`` line, as LLM-Stream's
events are, at the line ends two finds of str give (interpreted, a run of one type at once,
``_one_type``), ``data:`` alone as columns of its lines for the whole run (``_columns``), and
an event of a usual shape among others whole. A caller that
knows the ``event:`` line to expect may take an event of a chunk that is one whole event, or
that ends one begun in the pieces held, by comparing its head (``event_of``). Anything else
(comments, ``id:``, several ``data:`` lines, a CR alone, invalid UTF-8, a line or an event near
a limit) goes line by line through ``_field`` and ``_blank``, which hold the rules proper.
Whatever the chunking, the events and the diagnostics are the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any, Final

from .diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["RawFields", "SSEDecoder", "SSEEvent"]

_BOM: Final = b"\xef\xbb\xbf"
_LINE_END: Final = b"\r\n"
_LONE_CR: Final = re.compile(b"\r(?!\n)")
"""A CR that is not that of a CRLF."""
# A larger chunk is fed in slices of this size, so that the work on one slice (decoding, cutting)
# never holds much more than a slice.
_SLICE: Final = 1 << 16


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event, with the line it starts on so that later layers can point at it."""

    type: str
    data: str
    id: str
    retry: int | None
    line: int

    def __reduce__(self) -> tuple[Callable[..., SSEEvent], RawFields]:
        """Pickled and copied through the constructor, which the compiled class (whose fields
        only its own code may set) takes as the plain one does."""
        return SSEEvent, (self.type, self.data, self.id, self.retry, self.line)


RawFields = tuple[str, str | bytes, str, int | None, int]
"""An event as the tuple of its fields, in SSEEvent's order: type, data, id, retry, line. The
data is str, except from an SSEDecoder made with ``bytes_data``, where it may be UTF-8 bytes."""


class _Unfrozen:
    """SSEEvent's slots without its guard against assignment; see ``_unfrozen_event``."""

    __slots__ = SSEEvent.__slots__


_new = object.__new__


def _unfrozen_event(type: str, data: str, id: str, retry: int | None, line: int) -> SSEEvent:
    """Build an SSEEvent at the cost of a plain object.

    A frozen dataclass sets each field through ``object.__setattr__``, which costs more than all
    the rest of decoding an event. ``_Unfrozen`` has the same slots, so once its fields are set
    it can take SSEEvent's class, and what comes out is an ordinary, frozen SSEEvent.
    """
    event: Any = _new(_Unfrozen)
    event.type = type
    event.data = data
    event.id = id
    event.retry = retry
    event.line = line
    event.__class__ = SSEEvent
    return event  # type: ignore[no-any-return]


def _native_event(type: str, data: str, id: str, retry: int | None, line: int) -> SSEEvent:
    """``_unfrozen_event`` where SSEEvent is compiled (mypyc): compiled code sets its fields
    in place, not through the guard that Python code meets, and builds it as cheaply."""
    event = SSEEvent.__new__(SSEEvent)
    event.type = type  # type: ignore[misc]
    event.data = data  # type: ignore[misc]
    event.id = id  # type: ignore[misc]
    event.retry = retry  # type: ignore[misc]
    event.line = line  # type: ignore[misc]
    return event


def _event_builder() -> Callable[[str, str, str, int | None, int], SSEEvent]:
    """``_unfrozen_event`` where classes are plain Python ones; compiled, SSEEvent's layout is
    its own and no other class's objects may take it, so ``_native_event``."""
    try:
        _unfrozen_event("", "", "", None, 1)
    except TypeError:
        return _native_event
    return _unfrozen_event


_event: Final = _event_builder()
"""Build an SSEEvent from its fields."""


def _text(value: str | bytes) -> str:
    """Data as str, from str or from bytes known to be UTF-8."""
    return value if isinstance(value, str) else value.decode()


def _split(text: str, crlf: bool) -> list[str]:
    """Cut text into lines at CRLF, LF and CR."""
    if crlf:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


_KNOWN: Final[dict[Any, str]] = {}
"""The types of the ``event:`` lines (str or UTF-8 bytes) taken apart so far (`_type_of`),
shared by every decoder: a line always means the one type, so no stream can make another's
wrong, and a short stream finds its types known."""
_KNOWN_MAX: Final = 64
"""How many lines `_KNOWN` holds, at most: it is emptied when full, since a stream may name
any number of types, and would otherwise leave no room for the usual ones."""
_TEXT_WORDS: Final = ("event: ", "data: ", "\n", "\ndata: ")
_BYTE_WORDS: Final = (b"event: ", b"data: ", b"\n", b"\ndata: ")
_INTERPRETED: Final = _event is _unfrozen_event
"""These modules run as Python code, not compiled (`_event_builder` tells): a loop over events
then costs more than cutting a run of one type at once (`_one_type`), while compiled, its calls
of str's methods are direct and cost less than the cut (`SSEDecoder._run`)."""


def _one_type(text: Any) -> tuple[str, list[Any]] | None:
    """The type and the data of events that are all ``event: TYPE`` then ``data:``, of one
    type, as the events of a block are; else None.

    ``text`` is the events but for the last blank line, in LF line ends with no CR, as str or
    UTF-8 bytes. Cut at the blank line and the head of the first event, it gives one value per
    event, and the events are of that shape if no value holds a line end (looked for once in
    the values joined, a copy and a memchr, where counting the text's line ends reads it byte
    by byte).
    """
    raw = type(text) is bytes
    words: Any = _BYTE_WORDS if raw else _TEXT_WORDS  # Any: str or bytes
    event, _, eol, data_line = words
    first = text.find(eol)
    last = text.rfind(eol + eol) + 2  # where the last event starts, if not the first
    if last >= 2 and not text.startswith(text[: first + 1], last):
        return None  # the last event's first line is another: most runs of several types
    if text[:7] != event or first < 0:
        return None
    head = text[:first] + data_line
    if not text.startswith(head):
        return None
    values = text[len(head) :].split(eol + eol + head)
    if eol in text[:0].join(values):  # text[:0]: the empty str or bytes
        return None
    kind = head[7:first]
    return (kind.decode() if raw else kind) or "message", values


def _type_of(head: str | bytes) -> str | None:
    """The type that ``head``, the first line of an event (str or UTF-8 bytes), names if it is
    an ``event:`` line, kept in `_KNOWN`; else None."""
    if isinstance(head, bytes):
        if head[:7] != b"event: " or 10 in head:
            return None
        kind = head[7:].decode() or "message"
    else:
        if head[:7] != "event: " or "\n" in head:
            return None
        kind = head[7:] or "message"
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()  # a stream that names ever new types: the usual ones come back
    _KNOWN[head] = kind
    return kind


def _columns(lines: list[Any]) -> list[Any] | None:
    """The data of events that are all ``data:`` alone, the other usual shape, each a line and
    a blank line; else None.

    ``lines`` are the events' lines but for the last blank line, cut at LF from text with no
    CR, str or UTF-8 bytes. A line holds no LF, so joining the data lines with LF and cutting
    on LF and the field's name gives one value per line, and as many as there are events only
    if every such line has that field.
    """
    raw = type(lines[0]) is bytes
    words: Any = _BYTE_WORDS if raw else _TEXT_WORDS  # Any: str or bytes
    _, data_field, eol, data_line = words
    count, left = divmod(len(lines) + 1, 2)
    if left or lines[0][:6] != data_field or any(lines[1::2]):
        return None
    values: list[Any] = eol.join(lines[::2])[6:].split(data_line)
    return values if len(values) == count else None


class SSEDecoder:
    """Turns the bytes of a ``text/event-stream`` body into events, in any chunking.

    Problems go to ``diagnostics`` rather than raising, because a checker must see every one of
    them and a client usually still wants the events that are intact.
    """

    def __init__(
        self,
        *,
        max_line_bytes: int = 1 << 20,
        max_event_bytes: int = 8 << 20,
        bytes_data: bool = False,
    ) -> None:
        # Refused as the compiled SSE layer refuses them at the call (see ``Decoder``).
        if not (isinstance(max_line_bytes, int) and isinstance(max_event_bytes, int)):
            raise TypeError("max_line_bytes and max_event_bytes must be whole numbers, got "
                            f"{max_line_bytes!r} and {max_event_bytes!r}")
        if type(bytes_data) is not bool:
            raise TypeError(f"bytes_data is True or False, got {bytes_data!r}")
        # With ``bytes_data``, ``feed_fields`` gives the data of a run of events of the usual
        # shapes as the UTF-8 bytes it came as, for a JSON parser, which reads those faster
        # than a str it has to encode first.
        self._bytes_data = bytes_data
        self.diagnostics: list[Diagnostic] = []
        self._max_line = max_line_bytes
        self._max_event = max_event_bytes
        self._closed = False
        # Bytes held back until we know whether the body starts with a BOM; None once we do.
        self._head: bytes | None = b""
        # The previous chunk ended in CR, so an LF at the start of this one ends no line.
        self._skip_lf = False
        # Length so far of an over-long line being skipped, -1 when there is none.
        self._overlong = -1
        self._overlong_comment = False
        # Any of the four states above sends a chunk the slow way, through _feed_split.
        self._irregular = True
        # The unterminated last line, as the pieces it arrived in, joined once when it ends; or,
        # when _deferred, every byte since the last that was taken apart, in which no event ends.
        self._tail: list[bytes] = []
        self._tail_len = 0
        self._deferred = False
        # What follows the event that event_of found ending in a chunk, held once it is taken.
        self._after: bytes | None = None
        self._lines = 0  # lines completed so far
        # WHATWG's buffers, and what our limits and diagnostics need to know about them.
        self._type = ""
        self._data: list[str] = []
        self._size = 0  # UTF-8 bytes in the data buffer, counting the "\n" after each line
        self._id = ""
        self._retry: int | None = None
        self._start = 1  # the current event's first line that is not a comment
        self._spoiled = False  # the current event lost a line to a limit and will be dropped
        # A run of complete lines no longer than this can hold no over-long line, nor an event
        # with too much data (the lines of an event begun in an earlier chunk, the only one that
        # could, always go through _field, which counts), so the lines need no checking.
        self._fast_max = min(max_line_bytes, max_event_bytes + 1)
        # How much feed_fields holds back, at most, while no event ends (_deferred).
        self._hold_max = min(_SLICE, self._fast_max)

    def feed(self, data: Buffer) -> list[SSEEvent]:
        """Take the next chunk of the body (any bytes-like object); return the events it
        completes."""
        if self._bytes_data:
            return [_event(kind, _text(value), event_id, retry, line)
                    for kind, value, event_id, retry, line in self.feed_fields(data)]
        # Without bytes_data, the data of every event is str.
        return [_event(*fields) for fields in self.feed_fields(data)]  # type: ignore[arg-type]

    def feed_fields(self, data: Buffer) -> list[RawFields]:
        """As ``feed``, each event as the tuple of its fields: for a layer above that takes the
        events apart at once, which is cheaper than building objects it does not keep."""
        chunk: bytes = data if type(data) is bytes else bytes(data)
        self._after = None  # an event event_of found, not taken: the chunk is fed instead
        if self._irregular:
            return self._feed_split(chunk)
        # In a regular state: take apart the bytes up to the last blank line, and hold what
        # follows it, in which no event ends, until a chunk ends one. Each event is then taken
        # apart whole, however the body is cut; a chunk that ends none costs an append. (That an
        # int is in bytes is one memchr; that bytes are, ten times that.)
        tail = self._tail
        if not tail and chunk[-1:] == b"\n" and len(chunk) <= self._fast_max:
            return self._region(chunk, 13 in chunk)  # complete lines, as servers flush each event
        if 13 not in chunk:  # LF line ends
            last = chunk.rfind(b"\n\n")
            if last >= 0:
                cut = last + 2
            elif chunk[:1] == b"\n" and (not tail or tail[-1][-1:] == b"\n"):
                cut = 1  # a blank line, after the line end that came last
            else:
                cut = 0
        else:
            # CRs end lines too, alone or before an LF. A blank line is a line end after
            # another: in any line ends, one of three pairs, in the chunk or across the last
            # byte taken apart or held (a line end when none is held). The usual blank line of
            # CRLF bodies is the one place to cut at.
            last = chunk.rfind(b"\r\n\r\n")
            after = last + 3 if last >= 0 else 0
            if (
                chunk.find(b"\n\r", after) >= 0
                or chunk.find(b"\r\r", after) >= 0
                or chunk.find(b"\n\n", after) >= 0
            ):
                cut = -1
            elif last >= 0:
                cut = last + 4
            elif chunk[0] in _LINE_END and (not tail or tail[-1][-1] in _LINE_END):
                cut = -1
            else:
                cut = 0
        if cut == 0:
            if self._defer(chunk):
                return []
        elif cut > 0:
            rest = len(chunk) - cut
            if self._tail_len + cut <= self._fast_max and rest <= self._hold_max:
                if rest:
                    region = chunk[:cut]
                    chunk = chunk[cut:]
                    self._tail = [chunk]
                else:
                    region = chunk
                    self._tail = []
                if tail:
                    tail.append(region)
                    region = b"".join(tail)
                self._tail_len = rest
                self._deferred = rest > 0
                return self._region(region, 13 in region)
        if self._deferred:
            tail.append(chunk)
            chunk = b"".join(tail)
            self._tail = []
            self._tail_len = 0
            self._deferred = False
        return self._feed_split(chunk)

    def _defer(self, data: bytes) -> bool:
        """Hold bytes in which no event ends, unless that would hold too much."""
        held = self._tail_len + len(data)
        if held > self._hold_max:
            return False
        if data:
            self._tail.append(data)
            self._tail_len = held
            self._deferred = True
        return True

    def close(self) -> list[SSEEvent]:
        """End the body. An event still open is discarded (WHATWG), so this returns no events."""
        if self._closed:
            return []
        if self._deferred:  # no event ends in what was held: its lines are read, none dispatched
            data = b"".join(self._tail)
            self._tail = []
            self._tail_len = 0
            self._deferred = False
            self._feed_split(data)
        self._closed = self._irregular = True
        if self._head:
            self._tail = [self._head]
        if self._overlong >= 0:
            self._end_overlong()
        elif self._tail:
            # WHATWG drops an unterminated line unread; we read it only to report on it.
            self._checked_line(b"".join(self._tail), self._lines + 1)
        if not self._spoiled and (self._data or self._type):
            self._report(
                "LS-SSE-5",
                self._start,
                f"the body ends inside the event starting at line {self._start}, with no blank "
                "line after it, so the event was discarded",
                Severity.WARNING,
            )
        return []

    def whole_event(self, data: bytes) -> tuple[bytes, bytes] | None:
        """The first line and the data of a chunk that is exactly one event of the usual shape
        (a field line, one ``data:`` line, a blank line, in any line ends) and comes between
        events, within the limits; else None.

        Servers flush every event, so this is the commonest chunk of all, and a caller that
        recognises the event it expects (the LLM-Stream decoder) can take it from the bytes
        without the cost of ``feed``, by ``took_whole_event``. It takes an event only when the
        first line is the ``event:`` line it expects, which it compares whole: that is cheaper
        than taking the line apart here. Nothing changes until then (but that the first chunk
        of a body, if it does not begin with a byte of a BOM, shows there is none); a chunk not
        taken is fed as usual. The data is bytes, which may not be UTF-8: the caller checks it,
        as it checks the event anyway.
        """
        if self._irregular:
            if self._head != b"" or data[:1] in (b"", _BOM[:1]) or self._closed:
                return None
            # The first chunk, which does not begin a BOM: what _feed_split would find.
            self._head = None
            self._irregular = False
        if (
            self._tail
            or self._lines >= self._start
            or len(data) > self._fast_max
            or data[-1:] != b"\n"
        ):
            return None
        # One character a byte: the finds of str, direct calls compiled, where those of bytes
        # are not; the chunk may hold many events, so they look no further than one needs.
        view = data.decode("latin-1")
        if "\r" in view:
            lines = data.splitlines()  # bytes end lines at CRLF, LF and CR alone, as SSE does
            if len(lines) != 3 or lines[2] or lines[1][:6] != b"data: ":
                return None
            return lines[0], lines[1][6:]
        first = view.find("\n")
        end = view.find("\n", first + 1)
        if end != len(view) - 2 or view.find("data: ", first + 1, first + 7) < 0:
            return None
        return data[:first], data[first + 7 : end]

    def event_of(self, data: bytes, head: bytes) -> bytes | tuple[()] | None:
        """Feed a chunk in LF line ends to a caller that knows the ``event:`` line to expect
        (the LLM-Stream decoder, within a block): ``head`` is that line, LF, and ``data: ``
        (which holds no blank line). Between events and within the limits:

        - a chunk that is exactly one such event, its data on one line, or that ends one such
          event begun in the pieces held, the rest of the chunk ending none, gives the event's
          data: found, not yet taken (nothing changes until ``took_whole_event``, which holds
          the rest; a chunk not taken is fed as usual). The data may not be UTF-8: the caller
          checks it, as it checks the event anyway, rather than decode it twice;
        - a chunk that ends no event is held, and this gives ``()``.

        Else None, and nothing changed. Servers flush every event, and a body read in small
        pieces (64 bytes, say) comes as pieces that end no event and, now and then, one that
        ends one: so fed, either costs a few tests rather than the work of ``feed``, comparing
        the head less than cutting the chunk into lines, holding a piece an append. (That a
        piece holds no LF is one memchr, where a call of a method of bytes costs several.)
        """
        tail = self._tail
        if self._irregular or self._lines >= self._start or 13 in data:
            return None
        if not tail:
            if data[-2:] == b"\n\n" and len(data) <= self._fast_max and data.startswith(head):
                payload = data[len(head) : -2]  # one whole event, if it is the only one
                return None if 10 in payload else payload
            if 10 in data and (data[-1:] == b"\n" or data.find(b"\n\n") >= 0):
                return None  # lines that end here are taken apart at once; so is an event
            return () if self._defer(data) else None
        if not self._deferred:  # the start of a line, held as it came
            if 10 in data and data.find(b"\n\n") >= 0:
                return None  # an event ends here
            return () if self._defer(data) else None
        # pieces held since the last event, as they came
        if 10 not in data:  # no event ends here: held as by _defer, inline, as most pieces are
            held = self._tail_len + len(data)
            if held > self._hold_max:
                return None
            if data:
                tail.append(data)
                self._tail_len = held
            return ()
        if data[:1] == b"\n" and tail[-1][-1:] == b"\n":  # a blank line, after the line end held
            rest = data[1:]
            if rest[:1] == b"\n" or rest.find(b"\n\n") >= 0:
                return None  # another event ends in the rest
            first = b""
            cut = 1
        else:
            parts = data.split(b"\n\n", 2)  # at the first blank line and, if any, the next
            if len(parts) == 1:
                return () if self._defer(data) else None
            if len(parts) > 2 or parts[1][:1] == b"\n":
                return None  # another event ends in the rest
            first, rest = parts
            cut = len(first) + 2
        # an event ends here: the one begun in the pieces held, up to its last line end
        if self._tail_len + cut > self._fast_max:
            return None
        if len(tail) == 2:  # as a rule, in pieces of a steady size: cheaper than a join
            event = tail[0] + tail[1] + first
        else:
            event = (tail[0] if len(tail) == 1 else b"".join(tail)) + first
        if not event.startswith(head):
            return None
        payload = event[len(head) :] if cut > 1 else event[len(head) : -1]
        if 10 in payload or 13 in payload:
            return None
        self._after = rest
        return payload

    def took_whole_event(self, lines: int = 3) -> int:
        """Account for the event ``whole_event`` or ``event_of`` found, whose first line the
        caller found to be an ``event:`` line and which it took; returns the line the event
        starts on. ``lines`` is how many lines the event took, its blank line included (two
        for ``took_whole_data``). What followed an event that ``event_of`` found ending in the
        chunk is held, as it held what came before."""
        n = self._lines
        self._lines = n + lines
        self._start = n + lines + 1
        self._retry = None
        after = self._after
        if after is not None:
            self._after = None
            self._tail = [after] if after else []
            self._tail_len = len(after)
            self._deferred = bool(after)
        return n + 1

    def whole_data(self, data: bytes) -> bytes | None:
        """The data of a chunk that is exactly one event of one ``data:`` line and a blank line,
        in LF line ends, between events and within the limits; else None. It is the commonest
        chunk of the streams whose events have no type (OpenAI Chat Completions', Gemini's), as
        ``whole_event``'s is of the others: nothing changes until ``took_whole_data``."""
        if (
            self._irregular
            or self._tail
            or self._lines >= self._start
            or len(data) > self._fast_max
            or data[:6] != b"data: "
            or data[-2:] != b"\n\n"
        ):
            return None
        payload = data[6:-2]
        if 10 in payload or 13 in payload:
            return None
        return payload

    def took_whole_data(self) -> int:
        """Account for the event ``whole_data`` found, which the caller took; returns the line
        the event starts on."""
        return self.took_whole_event(2)

    def _feed_split(self, data: bytes) -> list[RawFields]:
        """Feed a chunk that continues or leaves an unterminated line, is large, or comes in an
        irregular state."""
        if self._irregular:
            if self._closed:
                raise RuntimeError("SSEDecoder.feed() called after close()")
            if self._head is not None:
                data = self._head + data
                if len(data) < 3 and _BOM.startswith(data):
                    self._head = data
                    return []
                self._head = None
                if data[:3] == _BOM:
                    data = data[3:]
            if self._skip_lf and data:
                self._skip_lf = False
                if data[0] == 10:
                    data = data[1:]
            if self._overlong >= 0:
                data = self._skip_overlong(data)
            self._irregular = self._skip_lf or self._overlong >= 0
        if len(data) > _SLICE:
            return [
                event
                for i in range(0, len(data), _SLICE)
                for event in self._feed_split(data[i : i + _SLICE])
            ]
        end = data.rfind(b"\n")
        cr = data.rfind(b"\r", end + 1)  # a CR before the last LF cannot end the last line
        if cr > end:
            end = cr
        if end < 0:
            if data:
                self._hold(data)
            return []
        rest = data[end + 1 :]
        if rest:
            data = data[: end + 1]
        elif cr == end:
            self._skip_lf = self._irregular = True
        if self._tail:
            self._tail.append(data)
            data = b"".join(self._tail)
            self._tail = []
            self._tail_len = 0
        if rest:
            self._hold(rest)
        if len(data) <= self._fast_max:
            return self._region(data, 13 in data)
        return self._checked(data)

    def _hold(self, data: bytes) -> None:
        """Keep the start of an unterminated line, or start skipping it if it is too long."""
        self._tail.append(data)
        self._tail_len += len(data)
        if self._tail_len > self._max_line:
            self._overlong = self._tail_len
            self._overlong_comment = self._tail[0][:1] == b":"
            self._irregular = True
            self._tail = []
            self._tail_len = 0

    def _skip_overlong(self, data: bytes) -> bytes:
        """Drop the rest of an over-long line; return what follows its end."""
        lf = data.find(b"\n")
        cr = data.find(b"\r")
        end = lf if cr < 0 or 0 <= lf < cr else cr
        if end < 0:
            self._overlong += len(data)
            return b""
        self._overlong += end
        self._end_overlong()
        if data[end] == 13:
            if end + 1 == len(data):
                self._skip_lf = True
            elif data[end + 1] == 10:
                end += 1
        return data[end + 1 :]

    def _end_overlong(self) -> None:
        n = self._lines = self._lines + 1
        self._too_long(n, self._overlong, self._overlong_comment)
        self._overlong = -1

    def _too_long(self, n: int, length: int, comment: bool) -> None:
        """Report line ``n``; unless it is a comment, its event cannot be whole, so drop it."""
        self._report(
            "LS-LIMIT-1",
            n,
            f"line {n} is {length} bytes long, over the limit of {self._max_line}",
        )
        if not comment:
            self._spoil()
        elif self._start == n:
            self._start = n + 1

    def _spoil(self) -> None:
        self._spoiled = True
        self._data = []
        self._size = 0

    def _report(
        self, rule: str, line: int, message: str, severity: Severity = Severity.ERROR
    ) -> None:
        self.diagnostics.append(Diagnostic(rule, line, message, severity))

    def _region(self, region: bytes, crlf: bool) -> list[RawFields]:
        """Apply complete lines within every limit: in a few calls when they are UTF-8, else one
        by one (``_checked``).

        With no CR in the region (``crlf`` false), lines end in LF; with CRs, the region is
        taken to end its lines in CRLF throughout, as bodies do. A piece that ends any line
        otherwise fails the tests for the usual shapes, which look for no other CR or LF, and
        goes through ``_apply``, which holds the rules.
        """
        if crlf and _LONE_CR.search(region) is None:
            # Every CR is that of a CRLF, as in CRLF bodies: CRLF and LF are one line end each,
            # so without its CRs the region has the same lines, in LF line ends.
            region = region.replace(b"\r", b"")
            crlf = False
        try:
            text = region.decode()
        except UnicodeDecodeError:
            return self._checked(region)
        blank, data_line = ("\r\n\r\n", "\r\ndata: ") if crlf else ("\n\n", "\ndata: ")
        n = self._lines
        if n < self._start and text[:7] == "event: " and (
            text.find(blank) == len(text) - len(blank)
        ):
            # Servers flush every event, so the commonest chunk of all is one whole event in the
            # shape the draft prescribes: it is taken apart here at the least cost. (Its one
            # blank line ends it: a region of several events is not copied in two to find out.)
            head, sep, data = text.partition(data_line)
            data = data[: -len(blank)]
            if (
                sep
                and "\n" not in data
                and "\n" not in head
                and not (crlf and ("\r" in data or "\r" in head))
            ):
                event = (head[7:] or "message", data, self._id, self._retry, n + 1)
                self._retry = None
                self._lines = n + 3
                self._start = n + 4
                return [event]
        events: list[RawFields] = []
        start = 0  # of the text not yet applied
        if n >= self._start:  # the first lines end an event that began in an earlier chunk
            start = text.find(blank)
            if start < 0:
                lines = _split(text, crlf)
                lines.pop()
                self._lines = self._apply(lines, n, events)
                return events
            first = text[:start]
            start += len(blank)
            if (
                not self._data
                and not self._spoiled
                and first[:6] == "data: "
                and "\n" not in first
                and not (crlf and "\r" in first)
            ):
                # Most often the chunk was cut inside the event's one data: line.
                kind = self._type or "message"
                events.append((kind, first[6:], self._id, self._retry, self._start))
                self._type = ""
                self._retry = None
                n += 2
            else:
                n = self._apply(_split(first, crlf), n, events) + 1
                self._blank(n, events)
            self._start = n + 1
        if crlf:
            pieces = text.split(blank)  # one piece per event, and after them the lines left open
            rest = pieces.pop()
            if start:
                del pieces[0]
            if pieces:
                n = self._pieces(pieces, crlf, n, events)
        else:
            end = text.rfind(blank, start)
            if end < 0:
                rest = text[start:]
            else:  # events, each ending in a blank line, and after them the lines left open
                rest = text[end + 2 :]
                n = self._lf_events(region, text, start, end, n, events)
        if rest:
            lines = _split(rest, crlf)
            lines.pop()
            n = self._apply(lines, n, events)
        self._lines = n
        return events

    def _lf_events(
        self, region: bytes, text: str, start: int, end: int, n: int, events: list[RawFields]
    ) -> int:
        """Apply the events in LF line ends of ``text[start:end]``, the region's text, all their
        lines but the last blank one, that follow line ``n``; return the number of that line.
        Events of the usual shapes are cut out of the text, or with ``bytes_data`` out of the
        region's bytes (`_run`, or interpreted `_one_type` first, then `_columns`); any other
        run, event by event."""
        raw = self._bytes_data
        view, since, stop = text, start, end
        if raw and len(text) != len(region):
            # One character a byte: the finds of str, which are direct calls compiled, give
            # the positions of the same lines in the bytes. (Text as long as its bytes is ASCII.)
            view = region.decode("latin-1")
            since = view.find("\n\n") + 2 if start else 0
            stop = view.rfind("\n\n", since)
        one = _one_type(region[since:stop] if raw else text[start:end]) if _INTERPRETED else None
        if one is not None:
            return self._columns_run(one[0], one[1], 3, n, events)
        count = len(events)
        last = self._run(region, view, since, stop, n, events)
        if last >= 0:
            return last
        del events[count:]
        data = _columns(region[since:stop].split(b"\n") if raw else text[start:end].split("\n"))
        if data is None:
            return self._pieces(text[start:end].split("\n\n"), False, n, events)
        return self._columns_run("message", data, 2, n, events)

    def _columns_run(
        self, kind: str, data: list[Any], step: int, n: int, events: list[RawFields]
    ) -> int:
        """Apply the events of a run of type ``kind`` taken apart as columns, ``step`` lines
        each, that follow line ``n``; return the number of the last line."""
        count = len(data)
        retries: list[int | None] = [None] * count
        retries[0] = self._retry
        events += zip(repeat(kind), data, repeat(self._id), retries,
                      range(n + 1, n + step * count, step))
        self._retry = None
        n += step * count
        self._start = n + 1
        return n

    def _run(
        self, region: bytes, view: str, i: int, end: int, n: int, events: list[RawFields]
    ) -> int:
        """Apply the events of ``view[i:end]`` that follow line ``n``, if every one is an
        ``event:`` line, one ``data:`` line and a blank line (but for the last), as the events
        of LLM-Stream bodies are; return the number of the last line. Else -1, and nothing
        changed but the events appended, which the caller drops.

        ``view`` is the text, or with ``bytes_data`` the region's bytes a character each, out
        of which the data is cut as bytes. An event costs two finds (str's: direct calls,
        compiled), a lookup of its ``event:`` line (`_KNOWN`) and two slices, each a single
        copy: no line is cut out of the text to be read once and dropped.
        """
        raw = self._bytes_data
        known = _KNOWN
        event_id = self._id
        retry = self._retry
        while True:
            j = view.find("\ndata: ", i, end)  # the event's first line ends here, if one line
            if j < 0:
                return -1
            head = region[i:j] if raw else view[i:j]
            kind = known.get(head)
            if kind is None:
                kind = _type_of(head)
                if kind is None:
                    return -1
            k = view.find("\n", j + 7, end)
            last = k < 0
            if last:
                k = end
            data = region[j + 7 : k] if raw else view[j + 7 : k]
            events.append((kind, data, event_id, retry, n + 1))
            retry = None
            n += 3
            if last:
                break
            if view[k + 1] != "\n":  # a line where the blank one would be
                return -1
            i = k + 2
        self._retry = None
        self._start = n + 1
        return n

    def _pieces(self, pieces: list[str], crlf: bool, n: int, events: list[RawFields]) -> int:
        """Apply events that follow line ``n``, each as its lines but for its blank line; return
        the number of the last blank line. One of a usual shape is taken whole, any other line
        by line."""
        eol = "\r\n" if crlf else "\n"
        data_line = eol + "data: "
        event_id = self._id
        retry = self._retry
        for piece in pieces:
            if piece[:7] == "event: ":
                head, sep, data = piece.partition(data_line)
                if (
                    sep
                    and "\n" not in data
                    and "\n" not in head
                    and not (crlf and ("\r" in data or "\r" in head))
                ):
                    events.append((head[7:] or "message", data, event_id, retry, n + 1))
                    retry = None
                    n += 3
                    continue
            elif piece[:6] == "data: " and "\n" not in piece and not (crlf and "\r" in piece):
                events.append(("message", piece[6:], event_id, retry, n + 1))
                retry = None
                n += 2
                continue
            self._retry = retry
            self._start = n + 1
            n = self._apply(_split(piece, crlf), n, events) + 1
            self._blank(n, events)
            event_id = self._id
            retry = self._retry
        self._retry = retry
        self._start = n + 1
        return n

    def _apply(self, lines: list[str], n: int, events: list[RawFields]) -> int:
        """Apply the lines that follow line ``n``; return the number of the last one."""
        for line in lines:
            n += 1
            if line:
                self._field(line, n)
            else:
                self._blank(n, events)
        return n

    def _checked(self, region: bytes) -> list[RawFields]:
        """Apply complete lines one by one, checking each for the limits and for UTF-8."""
        if 13 in region:
            region = region.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = region.split(b"\n")
        lines.pop()
        events: list[RawFields] = []
        n = self._lines
        for raw in lines:
            n += 1
            if raw:
                self._checked_line(raw, n)
            else:
                self._blank(n, events)
        self._lines = n
        return events

    def _checked_line(self, raw: bytes, n: int) -> None:
        if len(raw) > self._max_line:
            self._too_long(n, len(raw), raw[:1] == b":")
            return
        try:
            line = raw.decode()
        except UnicodeDecodeError:
            # Python replaces as WHATWG's decoder does: each maximal invalid subpart by one U+FFFD.
            line = raw.decode(errors="replace")
            self._report(
                "LS-SSE-1",
                n,
                f"line {n} is not valid UTF-8; its invalid bytes were read as U+FFFD",
            )
        self._field(line, n)

    def _field(self, line: str, n: int) -> None:
        """Apply the non-blank line ``n``: a comment or a field."""
        name, _, value = line.partition(":")
        if not name:
            if self._start == n:
                self._start = n + 1
            return
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            if self._spoiled:
                return
            self._data.append(value)
            self._size += (len(value) if value.isascii() else len(value.encode())) + 1
            if self._size > self._max_event + 1:
                self._report(
                    "LS-LIMIT-2",
                    n,
                    f"the event starting at line {self._start} has more than {self._max_event} "
                    f"bytes of data (the limit) by line {n}, so it was discarded",
                )
                self._spoil()
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _blank(self, n: int, events: list[RawFields]) -> None:
        """Dispatch the current event at the blank line ``n``, if it has data and is whole."""
        if self._data:
            data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
            events.append((self._type or "message", data, self._id, self._retry, self._start))
            self._retry = None
            self._data = []
            self._size = 0
        self._type = ""
        self._start = n + 1
        self._spoiled = False
