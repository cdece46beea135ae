"""Layer 1 of the decoder (draft section 5.1): bytes to Server-Sent Events, sans-IO.

The rules are WHATWG HTML's "event stream interpretation", followed to the letter, because every
browser and SDK a server is tested against follows them; anything looser or stricter would make
our verdicts disagree with what clients actually see.

This is the hot path of every client, so the decoder works on whole chunks with C-level bytes and
str methods: a chunk's complete lines are decoded in one call and split in one call, and an event
of the usual shape (``event:`` then ``data:``, or ``data:`` alone) is recognised without looking at
its lines one by one. Anything unusual (comments, ``id:``, several ``data:`` lines, CR line ends,
invalid UTF-8, a line or event near a limit) takes a slower line-by-line path with the same
semantics. Whatever the chunking, the events and the diagnostics are the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Diagnostic, Severity

__all__ = ["SSEDecoder", "SSEEvent"]

_BOM = b"\xef\xbb\xbf"
# Larger inputs are fed in slices of this size, so that a chunk's complete lines can be decoded
# in one call without that call ever holding more than a slice plus one line.
_SLICE = 1 << 16


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event, with the line it starts on so that later layers can point at it."""

    type: str
    data: str
    id: str
    retry: int | None
    line: int


class SSEDecoder:
    """Turns the bytes of a ``text/event-stream`` body into events, in any chunking.

    Problems go to ``diagnostics`` rather than raising, because a checker must see every one of
    them and a client usually wants the events that are still intact.
    """

    def __init__(self, *, max_line_bytes: int = 1 << 20, max_event_bytes: int = 8 << 20) -> None:
        self.diagnostics: list[Diagnostic] = []
        self._max_line = max_line_bytes
        self._max_event = max_event_bytes
        self._closed = False
        # Bytes held back until we know whether the stream starts with a BOM; None once we do.
        self._head: bytes | None = b""
        # The unterminated last line, as the pieces it arrived in, joined once when it ends.
        self._tail: list[bytes] = []
        self._tail_len = 0
        # The previous chunk ended in CR, so an LF at the start of this one ends no line.
        self._skip_lf = False
        # Length so far of an over-long line being skipped, -1 when there is none.
        self._overlong = -1
        self._overlong_comment = False
        self._lines = 0  # lines completed so far
        # WHATWG's buffers, plus the bookkeeping our limits and diagnostics need.
        self._type = ""
        self._data: list[str] = []
        self._size = 0  # UTF-8 bytes in the data buffer, counting the "\n" after each line
        self._id = ""
        self._retry: int | None = None
        self._start = 1  # first line of the current event that is not a comment
        self._spoiled = False  # the current event lost a line to a limit and will be dropped

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Take the next chunk of the body; return the events it completes."""
        if self._closed:
            raise RuntimeError("SSEDecoder.feed() called after close()")
        if len(data) > _SLICE:
            return [
                event
                for i in range(0, len(data), _SLICE)
                for event in self.feed(data[i : i + _SLICE])
            ]
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
        events: list[SSEEvent] = []
        if self._overlong >= 0:
            data = self._skip_overlong(data, events)
        cr = data.rfind(b"\r")
        end = max(cr, data.rfind(b"\n"))
        if end < 0:
            if data:
                self._hold(data)
            return events
        last = len(data) - 1
        self._skip_lf = end == cr == last
        region = data if end == last else data[: end + 1]
        if self._tail:
            self._tail.append(region)
            region = b"".join(self._tail)
            self._tail = []
            self._tail_len = 0
        if end != last:
            self._hold(data[end + 1 :])
        self._region(region, cr >= 0, events)
        return events

    def close(self) -> list[SSEEvent]:
        """End the body. An event still open is discarded (WHATWG), so this returns no events."""
        if self._closed:
            return []
        self._closed = True
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
                f"the body ends inside the event starting at line {self._start}, which has no "
                "blank line after it, so it was discarded",
                Severity.WARNING,
            )
        return []

    def _hold(self, data: bytes) -> None:
        """Keep the start of an unterminated line, or start skipping it if it is too long."""
        self._tail.append(data)
        self._tail_len += len(data)
        if self._tail_len > self._max_line:
            self._overlong = self._tail_len
            self._overlong_comment = self._tail[0][:1] == b":"
            self._tail = []
            self._tail_len = 0

    def _skip_overlong(self, data: bytes, events: list[SSEEvent]) -> bytes:
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
        self._report(
            "LS-LIMIT-1",
            n,
            f"line {n} is {length} bytes long, over the limit of {self._max_line}",
        )
        if comment:
            if self._start == n:
                self._start = n + 1
        else:
            self._spoil()

    def _spoil(self) -> None:
        """Drop what the current event has gathered; its blank line will dispatch nothing."""
        self._spoiled = True
        self._data = []
        self._size = 0

    def _report(
        self, rule: str, line: int, message: str, severity: Severity = Severity.ERROR
    ) -> None:
        self.diagnostics.append(Diagnostic(rule, line, message, severity))

    def _region(self, region: bytes, has_cr: bool, events: list[SSEEvent]) -> None:
        """Process complete lines (the region ends with a line end), fast when that is safe."""
        if (
            not self._spoiled
            and len(region) <= self._max_line
            and self._size + len(region) <= self._max_event + 1
        ):
            try:
                text = region.decode()
            except UnicodeDecodeError:
                pass
            else:
                ascii_only = len(text) == len(region)
                if has_cr:
                    text = text.replace("\r\n", "\n").replace("\r", "\n")
                self._text(text, ascii_only, events)
                return
        if has_cr:
            region = region.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = region.split(b"\n")
        lines.pop()
        n = self._lines
        for raw in lines:
            n += 1
            if raw:
                self._checked_line(raw, n)
            else:
                self._blank(n, events)
        self._lines = n

    def _text(self, text: str, ascii_only: bool, events: list[SSEEvent]) -> None:
        """Process LF-terminated lines known to be within every limit.

        Splitting on blank lines gives one piece per event; a piece of the usual shape becomes an
        event at once, any other goes through ``_apply`` line by line.
        """
        pieces = text.split("\n\n")
        rest = pieces.pop()  # the lines after the last blank line: an event still open
        n = self._lines
        append = events.append
        todo = iter(pieces)
        if pieces and self._start <= n:
            # The first piece finishes an event that earlier chunks began.
            n = self._apply(next(todo).split("\n"), n, ascii_only, events) + 1
            self._blank(n, events)
        for piece in todo:
            if piece[:6] == "data: " and "\n" not in piece:
                append(SSEEvent("message", piece[6:], self._id, self._retry, n + 1))
                self._retry = None
                n += 2
                continue
            if piece[:7] == "event: ":
                head, sep, data = piece.partition("\ndata: ")
                if sep and "\n" not in data and "\n" not in head:
                    append(SSEEvent(head[7:] or "message", data, self._id, self._retry, n + 1))
                    self._retry = None
                    n += 3
                    continue
            self._start = n + 1
            n = self._apply(piece.split("\n"), n, ascii_only, events) + 1
            self._blank(n, events)
        if pieces:
            self._start = n + 1
        if rest:
            lines = rest.split("\n")
            lines.pop()
            n = self._apply(lines, n, ascii_only, events)
        self._lines = n

    def _apply(self, lines: list[str], n: int, ascii_only: bool, events: list[SSEEvent]) -> int:
        """Apply lines that follow line ``n``; return the number of the last one."""
        for line in lines:
            n += 1
            if line:
                self._field(line, n, ascii_only)
            else:
                self._blank(n, events)
        return n

    def _checked_line(self, raw: bytes, n: int) -> None:
        """Apply one line that may be too long or not UTF-8."""
        if len(raw) > self._max_line:
            self._too_long(n, len(raw), raw[:1] == b":")
            return
        try:
            line = raw.decode()
        except UnicodeDecodeError:
            line = raw.decode(errors="replace")
            self._report(
                "LS-SSE-1",
                n,
                f"line {n} is not valid UTF-8; the bad bytes were read as U+FFFD",
            )
        self._field(line, n, raw.isascii())

    def _field(self, line: str, n: int, ascii_only: bool) -> None:
        """Apply one non-blank line; ``ascii_only`` spares encoding a value to measure it."""
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
            self._size += (len(value) if ascii_only else len(value.encode())) + 1
            if self._size > self._max_event + 1:
                self._report(
                    "LS-LIMIT-2",
                    n,
                    f"the event starting at line {self._start} has more than "
                    f"{self._max_event} bytes of data by line {n}, so it was discarded",
                )
                self._spoil()
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _blank(self, n: int, events: list[SSEEvent]) -> None:
        """Dispatch the current event, if there is one, at the blank line ``n``."""
        if self._data:
            events.append(
                SSEEvent(
                    self._type or "message",
                    "\n".join(self._data),
                    self._id,
                    self._retry,
                    self._start,
                )
            )
            self._retry = None
        self._type = ""
        self._data = []
        self._size = 0
        self._spoiled = False
        self._start = n + 1
