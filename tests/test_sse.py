"""The SSE layer (llm_stream.sse) against WHATWG's event stream interpretation.

Three oracles: the WHATWG rules case by case; a plain line-by-line reading of the same rules
(``reference`` below), which every chunking of every generated body must agree with; and
httpx-sse, where its reading and WHATWG's coincide.
"""

from __future__ import annotations

import codecs
import copy
import pickle
import re
import tracemalloc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import pairwise
from typing import Any

import pytest
from depth import examples
from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
from httpx_sse._decoders import SSELineDecoder as HttpxSSELineDecoder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_stream.diagnostics import Diagnostic, Severity
from llm_stream.sse import SSEDecoder, SSEEvent

BOM = b"\xef\xbb\xbf"
WARNING = Severity.WARNING


def decode(chunks: Iterable[bytes], **limits: int) -> tuple[list[SSEEvent], list[Diagnostic]]:
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    events += decoder.close()
    return events, decoder.diagnostics


def whole(body: bytes, **limits: int) -> tuple[list[SSEEvent], list[Diagnostic]]:
    return decode([body], **limits)


def events_of(body: bytes, **limits: int) -> list[SSEEvent]:
    return whole(body, **limits)[0]


def rules(diagnostics: Sequence[Diagnostic]) -> list[tuple[str, int]]:
    return [(d.rule, d.line) for d in diagnostics]


def bytewise(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def cut(body: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in pairwise(points)]


def at_blank_lines(body: bytes) -> list[bytes]:
    """Chunks that each end just after a blank line, as servers that flush every event send."""
    return cut(body, (m.end() for m in re.finditer(rb"\r\n\r\n|\n\n|\r\r", body)))


def ev(
    data: str, type: str = "message", id: str = "", retry: int | None = None, line: int = 1
) -> SSEEvent:
    return SSEEvent(type, data, id, retry, line)


# -- line ends and the BOM ------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_each_line_end(eol: bytes) -> None:
    body = b"event: a" + eol + b"data: x" + eol + eol + b"data: y" + eol + b"data: z" + eol + eol
    assert events_of(body) == [ev("x", "a"), ev("y\nz", line=4)]


def test_mixed_line_ends() -> None:
    body = b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r"
    assert events_of(body) == [ev("a\nb\nc"), ev("d", line=5)]


def test_crlf_cut_between_cr_and_lf_is_one_line_end() -> None:
    events, diagnostics = decode([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"])
    assert events == [ev("a\nb")]
    assert diagnostics == []


def test_cr_then_lf_in_the_next_chunk_after_a_blank_line() -> None:
    # The LF after CR must not make another blank line, nor be lost when it starts a line.
    assert decode([b"data: a\r\r", b"\ndata: b\r\n\r\n"])[0] == [ev("a"), ev("b", line=3)]


@pytest.mark.parametrize(("chunks", "ends_at"), [
    ([b"data: a\r\n", b"\r", b"\n"], 1),  # the CR alone ends the blank line
    ([b"data: a\r\n", b"x", b"\r", b"\n\r\n"], 3),  # x is a line; its LF ends no other
    ([b"data: a\r", b"\r"], 1),
    ([b"data: a\n", b"\r"], 1),
    ([b"data: a\r", b"\n", b"\n"], 2),
    ([b"data: a\r\n\r", b"\n"], 0),
    ([b"data: a\r\ndata: b\r\n", b"\r\n"], 1),
])
def test_an_event_ends_in_the_chunk_that_ends_its_blank_line(
    chunks: list[bytes], ends_at: int
) -> None:
    """Small chunks in which no event ends are held; one that ends the blank line, in whatever
    line ends and however it is cut, gives the event at once."""
    decoder = SSEDecoder()
    decoder.feed(b"data: 0\n\n")
    got = [decoder.feed(chunk) for chunk in chunks]
    assert [i for i, events in enumerate(got) if events] == [ends_at]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 21, 64])
def test_small_chunks_in_each_line_end(eol: bytes, size: int) -> None:
    body = b"".join([
        b"event: a\ndata: 1\n\n", b": c\nid: 2\ndata: 2\n\n", b"data: \xc3\xa9\n\n", b"\n",
        b"event: b\ndata: 3\ndata: 4\n\n", b"data: 5\n\n",
    ]).replace(b"\n", eol)
    assert decode(cut(body, range(size, len(body), size))) == whole(body)
    assert as_tuples(whole(body)[0]) == Reference().run(body).events


def test_bom_dropped_at_the_start() -> None:
    assert events_of(BOM + b"data: x\n\n") == [ev("x")]


@pytest.mark.parametrize("cuts", [[1], [2], [1, 2], [1, 2, 3], [3]])
def test_bom_split_over_chunks(cuts: list[int]) -> None:
    body = BOM + b"data: x\n\n"
    assert decode(cut(body, cuts)) == ([ev("x")], [])


def test_only_the_first_bom_is_dropped() -> None:
    # A second BOM is part of the first line, which makes the field name "\ufeffdata".
    assert events_of(BOM + BOM + b"data: x\n\n") == []
    assert events_of(b"data: x\n\n" + BOM + b"data: y\n\n") == [ev("x")]


def test_bom_alone_or_in_part() -> None:
    assert whole(BOM) == ([], [])
    assert rules(whole(BOM[:2])[1]) == [("LS-SSE-1", 1)]


# -- fields -----------------------------------------------------------------------------------


def test_comments_are_ignored() -> None:
    body = b": hello\n:\ndata: x\n: between\ndata: y\n\n:only a comment\n\n"
    assert events_of(body) == [ev("x\ny", line=3)]


def test_one_leading_space_is_removed() -> None:
    body = b"data:x\n\ndata: x\n\ndata:  x\n\ndata:\tx\n\n"
    assert [e.data for e in events_of(body)] == ["x", "x", " x", "\tx"]


def test_value_after_the_first_colon() -> None:
    assert events_of(b"data: a: b:c\n\n") == [ev("a: b:c")]


def test_line_without_colon_is_a_field_with_empty_value() -> None:
    assert events_of(b"data\n\n") == [ev("")]
    assert events_of(b"data\ndata\n\n") == [ev("\n")]
    assert events_of(b"event\ndata: x\n\n") == [ev("x")]


def test_events_are_frozen_sse_events_built_at_the_cost_of_a_plain_object() -> None:
    """Compiled or not, an event is an ordinary SSEEvent, equal to the one its constructor
    builds and as frozen, but not built by the constructor, which costs several times more."""
    from dataclasses import FrozenInstanceError

    from llm_stream import sse

    assert sse._event is not SSEEvent
    events = SSEDecoder().feed(b"event: a\ndata: b\nid: c\nretry: 5\n\n")
    assert events == [SSEEvent("a", "b", "c", 5, 1)] and type(events[0]) is SSEEvent
    assert hash(events[0]) == hash(SSEEvent("a", "b", "c", 5, 1))
    assert replace(events[0], data="x") == SSEEvent("a", "x", "c", 5, 1)
    with pytest.raises(FrozenInstanceError):
        events[0].data = "x"  # type: ignore[misc]


def test_data_lines_join_with_newline() -> None:
    assert events_of(b"data: a\ndata: b\ndata: c\n\n") == [ev("a\nb\nc")]
    assert events_of(b"data: a\ndata:\n\n") == [ev("a\n")]
    assert events_of(b"data:\n\n") == [ev("")]


def test_empty_data_dispatches_nothing_and_resets_the_type() -> None:
    assert events_of(b"event: a\n\n") == []
    assert events_of(b"event: a\n\ndata: x\n\n") == [ev("x", line=3)]
    assert events_of(b"\n\n\n") == []


def test_event_type() -> None:
    assert events_of(b"event: a\nevent: b\ndata: x\n\n") == [ev("x", "b")]
    assert events_of(b"event:\ndata: x\n\n") == [ev("x")]
    assert events_of("data: x\nevent: é\n\ndata: y\n\n".encode()) == [ev("x", "é"), ev("y", line=4)]


def test_id_persists_and_nul_is_ignored() -> None:
    body = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\x003\ndata: c\n\nid\ndata: d\n\n"
    assert events_of(body) == [
        ev("a", id="1"),
        ev("b", id="1", line=4),
        ev("c", id="1", line=6),
        ev("d", id="", line=9),
    ]


def test_id_without_data_still_sets_the_buffer() -> None:
    assert events_of(b"id: 7\n\ndata: x\n\n") == [ev("x", id="7", line=3)]


def test_retry_ascii_digits_only() -> None:
    arabic, fullwidth = "\u0661\u0662".encode(), "\uff11".encode()
    for value in (b"1x", b"-1", b"+1", b" 1", b"", b"1.5", arabic, fullwidth):
        assert events_of(b"retry: " + value + b"\ndata: x\n\n") == [ev("x")], value
    assert events_of(b"retry: 3000\ndata: x\n\n") == [ev("x", retry=3000)]
    assert events_of(b"retry:0012\ndata: x\n\n") == [ev("x", retry=12)]


def test_retry_belongs_to_the_next_event_only() -> None:
    body = b"retry: 10\ndata: a\n\ndata: b\n\n"
    assert events_of(body) == [ev("a", retry=10), ev("b", line=4)]


def test_retry_in_a_block_without_data_waits_for_the_next_event() -> None:
    # WHATWG applies a retry field at once; a reconnection time must not be lost because the
    # server sent it on its own, as servers commonly do.
    assert events_of(b"retry: 5\n\ndata: x\n\n") == [ev("x", retry=5, line=3)]
    body = b"retry: 5\n\nevent: a\ndata: 1\n\nevent: b\ndata: 2\n\ndata: 3\n\nid: 4\ndata: 4\n\n"
    expected = [
        ev("1", "a", retry=5, line=3),
        ev("2", "b", line=6),
        ev("3", line=9),
        ev("4", id="4", line=11),
    ]
    for eol in (b"\n", b"\r\n"):
        crlf = body.replace(b"\n", eol)
        assert events_of(crlf) == expected
        assert decode(at_blank_lines(crlf))[0] == expected
        assert decode(cut(crlf, [crlf.index(b"event: b")])) == (expected, [])


def test_unknown_fields_are_ignored() -> None:
    assert events_of(b"foo: bar\nData: y\ndata : z\ndata: x\n\n") == [ev("x")]


def test_event_line_is_its_first_field_line() -> None:
    body = b": c\n\n: c\n: c\nid: 1\n: c\ndata: x\n\n"
    assert [e.line for e in events_of(body)] == [5]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"event: a\rid: 1\r\ndata: x\r\n\r\n", [ev("x", "a", id="1")]),
        (b"event: a\r\ndata: x\ry\r\n\r\n", [ev("x", "a")]),
        (b"event: a\nid: 1\r\ndata: x\r\n\r\n", [ev("x", "a", id="1")]),
        (b"event: a\r\ndata: x\nid: 1\r\n\r\n", [ev("x", "a", id="1")]),
        (b"data: x\ry\r\n\r\n", [ev("x")]),
        (b"data: x\nid: 1\r\n\r\n", [ev("x", id="1")]),
        (b"event: a\ndata: x\r\r", [ev("x", "a")]),
    ],
)
def test_lines_ending_otherwise_inside_an_event(body: bytes, expected: list[SSEEvent]) -> None:
    # The usual shapes are looked for with CRLF wherever the text has a CR, and must not be
    # fooled by a line that ends in CR or LF alone, whether the event comes alone or not.
    first = b"event: z\r\ndata: 0\r\n\r\n"
    later = [replace(e, line=e.line + 3) for e in expected]
    assert events_of(body) == expected
    assert events_of(first + body) == [ev("0", "z"), *later]
    assert decode([first, body]) == ([ev("0", "z"), *later], [])


def test_an_event_begun_in_an_earlier_chunk() -> None:
    # The second chunk, alone, would be one event of the usual shape.
    for head in (b"data: p\n", b"id: 1\n", b"retry: 4\n", b": c\n", b"event: q\n"):
        got = decode([head, b"event: a\ndata: x\n\n", b"data: y\n\n"])
        assert got == decode([head + b"event: a\ndata: x\n\ndata: y\n\n"]), head
    assert decode([b"data: p\n", b"event: a\ndata: x\n\n"])[0] == [ev("p\nx", "a")]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b"event: a\n", b"data: x\n\n"], [ev("x", "a")]),
        ([b"event: a\r\n", b"data: x\r\n\r\n"], [ev("x", "a")]),
        ([b"event: a\r\n", b"data: x\ry\r\n\r\n"], [ev("x", "a")]),
        ([b"event: a\r\n", b"data: x\ny\r\n\r\n"], [ev("x", "a")]),
        ([b"data: p\n", b"data: x\n\n"], [ev("p\nx")]),
        ([b"retry: 3\n", b"data: x\n\ndata: y\n\n"], [ev("x", retry=3), ev("y", line=4)]),
    ],
)
def test_a_chunk_that_finishes_an_open_event(chunks: list[bytes], expected: list[SSEEvent]) -> None:
    assert decode(chunks) == (expected, [])


def test_a_chunk_that_finishes_a_spoiled_event() -> None:
    chunks = [b"event: a\nid: 0123456789ab\n", b"data: x\n\n", b"data: y\n\n"]
    events, diagnostics = decode(chunks, max_line_bytes=10)
    assert events == [ev("y", line=5)]
    assert rules(diagnostics) == [("LS-LIMIT-1", 2)]


def test_a_lone_cr_after_the_last_lf_ends_a_line() -> None:
    assert whole(b"data: x\n\r") == ([ev("x")], [])
    assert decode([b"data: x\n\r", b"\ndata: y\n\n"]) == ([ev("x"), ev("y", line=3)], [])


def test_events_of_the_usual_shapes_in_one_chunk() -> None:
    body = b"event: a\ndata: 1\n\ndata: 2\n\nevent: b\ndata: 3\n\n"
    assert events_of(body) == [ev("1", "a"), ev("2", line=4), ev("3", "b", line=6)]


# -- the end of the body ----------------------------------------------------------------------


def test_unterminated_event_is_discarded_with_a_warning() -> None:
    for tail in (b"data: x\n", b"data: x", b"data: x\r", b"event: a\n", b": c\ndata: x\n"):
        events, diagnostics = whole(b"data: a\n\n" + tail)
        assert events == [ev("a")], tail
        line = 4 if tail.startswith(b":") else 3
        assert [(d.rule, d.line, d.severity) for d in diagnostics] == [
            ("LS-SSE-5", line, WARNING)
        ], tail
        assert "discarded" in diagnostics[0].message


@pytest.mark.parametrize("tail", [b"", b"\n", b": comment", b": comment\n", b"\n\n", b"id: 1\n"])
def test_a_trailing_remainder_that_changes_nothing_is_not_reported(tail: bytes) -> None:
    assert whole(b"data: a\n\n" + tail) == ([ev("a")], [])


def test_feed_after_close_raises_and_close_is_idempotent() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: x\n\n")
    assert decoder.close() == []
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: y\n\n")


def test_diagnostics_can_be_drained() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: \xff\n\n")
    assert rules(decoder.diagnostics) == [("LS-SSE-1", 1)]
    decoder.diagnostics.clear()
    decoder.feed(b"data: \xfe\n\n")
    assert rules(decoder.diagnostics) == [("LS-SSE-1", 3)]


# -- invalid UTF-8 ----------------------------------------------------------------------------


def test_invalid_utf8_is_replaced_and_reported_once_a_line() -> None:
    body = b"data: a\xffb\xfe\ndata: ok\ndata: \xc3\n\n: \xed\xa0\x80\n\xe2\x82data: no\n\n"
    events, diagnostics = whole(body)
    assert events == [ev("a\ufffdb\ufffd\nok\n\ufffd")]
    assert [(d.rule, d.line, d.severity) for d in diagnostics] == [
        ("LS-SSE-1", 1, Severity.ERROR),
        ("LS-SSE-1", 3, Severity.ERROR),
        ("LS-SSE-1", 5, Severity.ERROR),
        ("LS-SSE-1", 6, Severity.ERROR),
    ]
    message = "line 1 is not valid UTF-8; its invalid bytes were read as U+FFFD"
    assert diagnostics[0].message == message


def test_replacement_follows_whatwg_maximal_subparts() -> None:
    # WHATWG's UTF-8 decoder (and Python's): one U+FFFD per maximal invalid subsequence.
    assert events_of(b"data: \xe2\x82\xf0\x9f\x98\n\n") == [ev("\ufffd\ufffd")]
    assert events_of(b"data: \xed\xa0\x80\n\n") == [ev("\ufffd\ufffd\ufffd")]


def test_a_character_cut_across_chunks_is_valid() -> None:
    body = "data: café ü 😀\n\n".encode()
    for i in range(1, len(body)):
        assert decode([body[:i], body[i:]]) == ([ev("café ü 😀")], []), i


# -- limits -----------------------------------------------------------------------------------


def test_line_over_the_limit_is_reported_and_its_event_discarded() -> None:
    body = b"data: a\n\nevent: x\ndata: " + b"y" * 100 + b"\ndata: z\n\ndata: b\n\n"
    for chunks in ([body], bytewise(body), cut(body, range(0, len(body), 7))):
        events, diagnostics = decode(chunks, max_line_bytes=50)
        assert events == [ev("a"), ev("b", line=7)]
        assert diagnostics == [
            Diagnostic("LS-LIMIT-1", 4, "line 4 is 106 bytes long, over the limit of 50")
        ]


def test_a_line_exactly_at_the_limit_is_fine() -> None:
    assert whole(b"data: " + b"x" * 44 + b"\n\n", max_line_bytes=50) == ([ev("x" * 44)], [])


def test_over_long_comment_costs_no_event() -> None:
    comment = b": " + b"p" * 100 + b"\n"
    body = b"data: a\n" + comment + b"data: b\n\n" + comment + b"data: c\n\n"
    for chunks in ([body], bytewise(body)):
        events, diagnostics = decode(chunks, max_line_bytes=50)
        assert events == [ev("a\nb"), ev("c", line=6)]
        assert rules(diagnostics) == [("LS-LIMIT-1", 2), ("LS-LIMIT-1", 5)]


def test_over_long_unterminated_line_at_the_end() -> None:
    events, diagnostics = decode([b"data: a\n\ndata: ", b"x" * 300], max_line_bytes=100)
    assert events == [ev("a")]
    assert diagnostics == [
        Diagnostic("LS-LIMIT-1", 3, "line 3 is 306 bytes long, over the limit of 100")
    ]


def test_event_over_the_limit_is_reported_once_and_discarded() -> None:
    body = b"data: 1234\ndata: 5678\ndata: 9\ndata: 0\n\ndata: ok\n\n"
    for chunks in ([body], bytewise(body)):
        events, diagnostics = decode(chunks, max_event_bytes=8)
        assert events == [ev("ok", line=6)]
        assert rules(diagnostics) == [("LS-LIMIT-2", 2)]
        assert "8 bytes" in diagnostics[0].message and "line 1" in diagnostics[0].message


def test_an_event_exactly_at_the_limit_is_fine() -> None:
    # "1234\n567" is 8 bytes of data.
    assert whole(b"data: 1234\ndata: 567\n\n", max_event_bytes=8) == ([ev("1234\n567")], [])
    assert whole("data: é\n\n".encode(), max_event_bytes=1)[1][0].rule == "LS-LIMIT-2"


def _peak_while(feed: Iterable[bytes], **limits: int) -> tuple[int, SSEDecoder]:
    decoder = SSEDecoder(**limits)
    tracemalloc.start()
    try:
        for chunk in feed:
            decoder.feed(chunk)
        decoder.close()
        return tracemalloc.get_traced_memory()[1], decoder
    finally:
        tracemalloc.stop()


def test_an_endless_line_takes_bounded_memory() -> None:
    chunk = b"x" * (1 << 16)
    peak, decoder = _peak_while(
        [b"data: ", *[chunk] * 300, b"\n\ndata: ok\n\n"], max_line_bytes=1 << 20
    )  # a line of about 20 MB
    assert peak < 4 << 20
    assert rules(decoder.diagnostics) == [("LS-LIMIT-1", 1)]
    assert "19660806 bytes long" in decoder.diagnostics[0].message


def test_an_endless_event_takes_bounded_memory() -> None:
    chunk = b"data: " + b"x" * 1000 + b"\n"
    chunk *= 64
    peak, decoder = _peak_while([*[chunk] * 300, b"\ndata: ok\n\n"], max_event_bytes=1 << 20)
    assert peak < 6 << 20  # the event had about 19 MB of data
    assert rules(decoder.diagnostics) == [("LS-LIMIT-2", 1048)]


# -- any chunking, against a plain reading of the rules -----------------------------------------


@dataclass
class Reference:
    """WHATWG's rules read line by line over the whole body, with our limits and diagnostics."""

    max_line: int = 1 << 20
    max_event: int = 8 << 20
    events: list[tuple[str, str, str, int | None, int]] = field(default_factory=list)
    diagnostics: list[tuple[str, int, Severity]] = field(default_factory=list)
    type: str = ""
    data: list[str] | None = None
    size: int = 0
    id: str = ""
    retry: int | None = None
    first: int | None = None
    spoiled: bool = False

    def run(self, body: bytes) -> Reference:
        body = body.removeprefix(BOM)
        lines, start, i = [], 0, 0
        while i < len(body):
            if body[i] in b"\r\n":
                lines.append(body[start:i])
                i += 2 if body[i : i + 2] == b"\r\n" else 1
                start = i
            else:
                i += 1
        for n, raw in enumerate(lines, 1):
            self.line(raw, n) if raw else self.blank()
        if body[start:]:
            self.line(body[start:], len(lines) + 1)
        if not self.spoiled and (self.data or self.type):
            self.diagnostics.append(("LS-SSE-5", self.first or 0, WARNING))
        return self

    def line(self, raw: bytes, n: int) -> None:
        comment = raw.startswith(b":")
        if not comment and self.first is None:
            self.first = n
        if len(raw) > self.max_line:
            self.diagnostics.append(("LS-LIMIT-1", n, Severity.ERROR))
            if not comment:
                self.spoiled, self.data, self.size = True, None, 0
            return
        text = raw.decode(errors="replace")
        if text.encode() != raw:
            self.diagnostics.append(("LS-SSE-1", n, Severity.ERROR))
        if comment:
            return
        name, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if name == "data" and not self.spoiled:
            self.data = [*(self.data or []), value]
            self.size += len(value.encode()) + 1
            if self.size - 1 > self.max_event:
                self.diagnostics.append(("LS-LIMIT-2", n, Severity.ERROR))
                self.spoiled, self.data, self.size = True, None, 0
        elif name == "event":
            self.type = value
        elif name == "id" and "\0" not in value:
            self.id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            self.retry = int(value)

    def blank(self) -> None:
        if self.data is not None and not self.spoiled:
            assert self.first is not None
            event = (self.type or "message", "\n".join(self.data), self.id, self.retry, self.first)
            self.events.append(event)
            self.retry = None
        self.type, self.data, self.size, self.first, self.spoiled = "", None, 0, None, False


def as_tuples(events: list[SSEEvent]) -> list[tuple[str, str, str, int | None, int]]:
    return [(e.type, e.data, e.id, e.retry, e.line) for e in events]


VALUE = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=8)
LINE = st.one_of(
    st.builds("event: {}".format, st.sampled_from(["content.delta", "a", "", "é", "x y"])),
    st.builds("data: {}".format, VALUE),
    st.builds("data:{}".format, VALUE),
    st.sampled_from(["data", "event", "id", ":", ": keep-alive", "retry: 10", "retry: 1x"]),
    st.builds("id: {}".format, VALUE),
    st.builds("{}: {}".format, VALUE, VALUE),
    st.just(""),
    st.just(""),
)
EOL = st.sampled_from(["\n", "\r\n", "\r"])
BAD = st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\xef\xbb"])


BLOCK_LINES = st.one_of(
    st.tuples(st.builds("event: {}".format, VALUE), st.builds("data: {}".format, VALUE)),
    st.tuples(st.builds("data: {}".format, VALUE)),
    st.tuples(st.sampled_from(["retry: 7", "id: 3", "event: e"])),
    st.tuples(st.sampled_from(["retry: 8", "id: 4"]), st.builds("data: {}".format, VALUE)),
    st.lists(LINE, max_size=5),
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Blocks of lines, often of the usual shapes, mostly in one line end, now and then broken."""
    main = draw(EOL)
    odd = draw(st.sampled_from([0, 4, 20]))  # one line end in `odd` is not the main one
    lines = [
        line
        for block in draw(st.lists(BLOCK_LINES, max_size=10))
        for line in [*block, *[""] * draw(st.sampled_from([1, 1, 1, 0, 2]))]
    ]
    text = "".join(
        line + (draw(EOL) if odd and draw(st.integers(1, odd)) == 1 else main) for line in lines
    )
    body = text.encode()
    if draw(st.booleans()):
        body = BOM + body
    for _ in range(draw(st.integers(0, 2))):
        i = draw(st.integers(0, len(body)))
        body = body[:i] + draw(BAD) + body[i:]
    if draw(st.booleans()):
        body += draw(st.sampled_from([b"data: open", b"event: x", b": c", b"\r", b"data: \xc3"]))
    return body


@st.composite
def chunkings(draw: st.DrawFn, body: bytes) -> list[bytes]:
    how = draw(st.sampled_from(["random", "bytewise", "blank lines", "line ends"]))
    if how == "bytewise":
        return bytewise(body)
    if how == "blank lines":
        return at_blank_lines(body)
    if how == "line ends":  # a chunk of whole lines may start in the middle of an event
        ends = [m.end() for m in re.finditer(rb"\r\n|\r|\n", body)]
        return cut(body, draw(st.lists(st.sampled_from(ends), max_size=12)) if ends else [])
    return cut(body, draw(st.lists(st.integers(0, len(body)), max_size=12)))


LIMITS: st.SearchStrategy[dict[str, int]] = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {"max_line_bytes": st.integers(1, 24), "max_event_bytes": st.integers(0, 40)}
    ),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bodies(), LIMITS)
def test_any_chunking_gives_what_the_whole_body_gives(
    data: st.DataObject, body: bytes, limits: dict[str, int]
) -> None:
    expected = whole(body, **limits)
    reference = Reference(
        limits.get("max_line_bytes", 1 << 20), limits.get("max_event_bytes", 8 << 20)
    ).run(body)
    assert as_tuples(expected[0]) == reference.events
    assert [(d.rule, d.line, d.severity) for d in expected[1]] == reference.diagnostics
    assert decode(data.draw(chunkings(body)), **limits) == expected


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bodies(), LIMITS)
def test_each_event_comes_out_of_the_chunk_that_completes_it(
    data: st.DataObject, body: bytes, limits: dict[str, int]
) -> None:
    """The layer holds back only bytes in which no event ends: after every chunk, the events so
    far are exactly those of the bytes so far."""
    decoder = SSEDecoder(**limits)
    reference = partial(Reference, limits.get("max_line_bytes", 1 << 20),
                        limits.get("max_event_bytes", 8 << 20))
    fed, events = b"", []
    for chunk in data.draw(chunkings(body)):
        events += decoder.feed(chunk)
        fed += chunk
        assert as_tuples(events) == reference().run(fed).events


def decode_taking(
    chunks: Iterable[bytes], **limits: int
) -> tuple[list[SSEEvent], list[Diagnostic]]:
    """As `decode`, but every chunk `whole_event` recognises is taken through it when its first
    line is an ``event:`` line and it is UTF-8, as a caller that checks events on their bytes
    does."""
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    for chunk in chunks:
        whole = decoder.whole_event(chunk)
        try:
            line, data = whole[0].decode(), whole[1].decode()  # type: ignore[index]
        except (TypeError, UnicodeDecodeError):
            line = ""
        if line.startswith("event: "):
            events.append(ev(data, line[7:] or "message", line=decoder.took_whole_event()))
        else:
            events += decoder.feed(chunk)
    events += decoder.close()
    return events, decoder.diagnostics


def without_id_and_retry(events: list[SSEEvent]) -> list[SSEEvent]:
    return [replace(e, id="", retry=None) for e in events]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bodies(), LIMITS)
def test_taking_whole_events_gives_what_feeding_them_gives(
    data: st.DataObject, body: bytes, limits: dict[str, int]
) -> None:
    """Whatever `whole_event` hands out is exactly the one event `feed` would have dispatched
    (type, data and line; a taker has no use for id and retry), and taking it leaves the
    decoder where feeding it would have."""
    chunks = data.draw(st.sampled_from([at_blank_lines(body), data.draw(chunkings(body))]))
    events, diagnostics = decode(chunks, **limits)
    taken, taken_diagnostics = decode_taking(chunks, **limits)
    assert without_id_and_retry(taken) == without_id_and_retry(events)
    assert taken_diagnostics == diagnostics


FIRST = b"event: s\ndata: 0\n\n"
HEAD = b"event: a\ndata: "


@pytest.mark.parametrize("chunk", [
    b"event: a\ndata: 1\n\n",
    b"event: a\r\ndata: 1\r\n\r\n",
    b"event: a\rdata: 1\r\n\n",
    b"event: a\ndata: \n\n",
])
def test_whole_event_finds_the_usual_shape_in_any_line_ends(chunk: bytes) -> None:
    assert SSEDecoder().whole_event(BOM + chunk) is None  # a BOM is for feed to take off
    nothing_yet = SSEDecoder()
    assert nothing_yet.whole_event(b"") is None  # nor does an empty chunk settle it
    assert nothing_yet.whole_event(BOM + chunk) is None
    first = SSEDecoder()  # a body that does not begin with a byte of a BOM has none
    assert first.whole_event(chunk) == (b"event: a", chunk.splitlines()[1][6:])
    assert first.took_whole_event() == 1
    decoder = SSEDecoder()
    assert decoder.feed(FIRST) == [ev("0", "s")]
    line, data = decoder.whole_event(chunk) or (b"", b"")
    assert (line, data) == (b"event: a", chunk.splitlines()[1][6:])
    assert decoder.took_whole_event() == 4
    assert decoder.whole_event(chunk) is not None
    assert decoder.took_whole_event() == 7
    assert decoder.feed(chunk) == [ev(data.decode(), "a", line=10)]
    # the first line is the caller's to judge: only an event: line may be taken
    assert decoder.whole_event(b"id: 7\ndata: 1\n\n") == (b"id: 7", b"1")


@pytest.mark.parametrize(("before", "chunk"), [
    (b"", b"event: a\ndata: 1\n\nevent: a\ndata: 2\n\n"),  # two events
    (b"", b"data: 1\n\n"),  # one line and a blank line
    (b"", b"event: a\nid: 1\ndata: 1\n\n"),  # another field
    (b"", b"event: a\ndata: 1\n"),  # no blank line
    (b"", b"event: a\ndata: 1\n\r"),  # a CR at the end may start a CRLF
    (b"event: b\n", b"event: a\ndata: 1\n\n"),  # an event is open
    (b"data: 1", b"event: a\ndata: 1\n\n"),  # a line is open
    (BOM[:2], b"event: a\ndata: 1\n\n"),  # the BOM is not settled
    (b"data: 1\r", b"event: a\ndata: 1\n\n"),  # an LF may still belong to the CR
    (b"x" * 40, b"event: a\ndata: 1\n\n"),  # over the line limit
])
def test_whole_event_refuses_anything_else(before: bytes, chunk: bytes) -> None:
    decoder = SSEDecoder(max_line_bytes=32)
    if before != BOM[:2]:
        decoder.feed(FIRST)
    decoder.feed(before)
    for whole in (decoder.whole_event, partial(whole_event_of, decoder)):
        assert whole(chunk) is None
        assert whole(b"event: a\ndata: " + b"1" * 40 + b"\n\n") is None  # too long
    decoder.close()
    assert decoder.event_of(b"event: a\ndata: 1\n\n", HEAD) is None  # closed


def whole_event_of(decoder: SSEDecoder, chunk: bytes) -> bytes | None:
    """The data that `event_of` finds in a chunk that is one whole event of `HEAD`, not taken,
    or None; a chunk it would hold or take (no test here leaves one) fails the test."""
    found = decoder.event_of(chunk, HEAD)
    assert found is None or type(found) is bytes
    return found


def decode_taking_data(
    chunks: Iterable[bytes], **limits: int
) -> tuple[list[SSEEvent], list[Diagnostic]]:
    """As `decode`, but every chunk `whole_data` recognises is taken through it when it is
    UTF-8, as the translators of formats whose events have no type do."""
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    for chunk in chunks:
        payload = decoder.whole_data(chunk)
        try:
            data = payload.decode()  # type: ignore[union-attr]
        except (AttributeError, UnicodeDecodeError):
            events += decoder.feed(chunk)
        else:
            events.append(ev(data, line=decoder.took_whole_data()))
    events += decoder.close()
    return events, decoder.diagnostics


USUAL = st.one_of(
    st.builds("event: {}\ndata: {}\n\n".format, st.sampled_from(["content.delta", "", "é"]), VALUE),
    st.builds("data: {}\n\n".format, VALUE),
)
BREAKER = st.sampled_from([
    ": keep-alive\n", "id: 7\n", "retry: 5\n", "\n", "data: a\ndata: b\n\n", "event: x\n",
    "id: 8\n\n", "retry: 6\n\n",  # for the events that follow
    "data: 1\n: c\n", "event: e\ndata: 1\n: c\n",  # a line where the blank one would be
    "data: " + "long " * 6 + "\n",  # over a line limit of up to 24 bytes
    "event: e\ndata: \ud800\n\n",  # not UTF-8 once encoded (see runs)
])


SAME = st.builds("event: content.delta\ndata: {}\n\n".format, VALUE)
"""Events of one type, as the events of a block are."""
ALMOST = st.sampled_from([
    "event: content.delta\ndata: 1\ndata: 2\n\n", "event: content.delta\ndata: 1\n: c\n\n",
    "event: content.delta\ndata: 1\rdata: 2\n\n", "event: content.delta\ndata: 1\n\n\n",
    "event: content.delta\ndata: 1\r\n\n", "event: content.delta\ndata:1\n\n",
])
"""Events that begin as those of a block do, but are not of the usual shape."""


@st.composite
def runs(draw: st.DrawFn, usual: st.SearchStrategy[str] = USUAL, min_size: int = 0) -> bytes:
    """Runs of events of the usual shapes, as servers send them, which the layer takes apart as
    columns or whole, now and then broken by other lines, a line over the limit, a byte that is
    not UTF-8, a BOM or another line end."""
    text = "".join(draw(st.lists(
        st.one_of(usual, usual, usual, BREAKER), min_size=min_size, max_size=24)))
    body = text.encode(errors="surrogatepass").replace(b"\n", draw(st.sampled_from(
        [b"\n", b"\n", b"\r\n", b"\r"]
    )))
    if draw(st.booleans()):
        body = BOM + body
    if draw(st.booleans()):
        body += draw(st.sampled_from([b"data: open", b"event: x\n", b"\r", b"data: \xc3"]))
    return body


@st.composite
def awkward_chunkings(draw: st.DrawFn, body: bytes) -> list[bytes]:
    """Chunks cut at a steady size, as reads of a socket are, and inside a CRLF, a character
    of several bytes, the BOM or a line."""
    awkward = [
        i for i in range(1, len(body))
        if body[i - 1 : i + 1] == b"\r\n" or body[i] & 0xC0 == 0x80 or i < 3
    ]
    cuts = draw(st.lists(st.sampled_from(awkward), max_size=8)) if awkward else []
    size = draw(st.sampled_from([0, 1, 2, 3, 7, 16, 64]))
    if size:
        cuts += range(size, len(body), size)
    return cut(body, cuts)


def decode_taking_heads(
    chunks: Iterable[bytes], **limits: int
) -> tuple[list[SSEEvent], list[Diagnostic]]:
    """As `decode`, but every chunk is first offered to `event_of` with the head of the type
    of the event that came last, as the LLM-Stream decoder offers it (taking what it finds
    whole once its data is found UTF-8); a chunk it neither takes nor holds is fed. After every
    chunk, the events so far must be those of the bytes so far."""
    decoder = SSEDecoder(**limits)
    reference = partial(Reference, limits.get("max_line_bytes", 1 << 20),
                        limits.get("max_event_bytes", 8 << 20))
    events: list[SSEEvent] = []
    head = b"event: content.delta\ndata: "
    fed = b""
    for chunk in chunks:
        kind = head[7:-7].decode() or "message"
        taken = decoder.event_of(chunk, head)
        if type(taken) is bytes:  # found, not taken: taken once found UTF-8, else fed
            try:
                text = taken.decode()
            except UnicodeDecodeError:
                taken = None
            else:
                events.append(ev(text, kind, line=decoder.took_whole_event()))
        if taken is None:
            new = decoder.feed(chunk)
            events += new
            if new:
                head = f"event: {new[-1].type}\ndata: ".encode()
        fed += chunk
        assert as_tuples(without_id_and_retry(events)) == as_tuples(
            without_id_and_retry([ev(*e[1::-1], line=e[4]) for e in reference().run(fed).events]))
    events += decoder.close()
    return events, decoder.diagnostics


@st.composite
def event_pieces(draw: st.DrawFn, body: bytes) -> list[bytes]:
    """Each event cut once or more anywhere in it, as reads of a steady size cut events of a
    steady size: most chunks end one event and begin the next."""
    ends = [0, *(m.end() for m in re.finditer(rb"\r\n\r\n|\n\n|\r\r", body)), len(body)]
    cuts = [
        draw(st.integers(a + 1, b - 1))
        for a, b in pairwise(ends) if b - a > 1
        for _ in range(draw(st.sampled_from([1, 1, 1, 2])))
    ]
    return cut(body, cuts)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.one_of(runs(st.one_of(SAME, SAME, USUAL)), runs(), bodies()), LIMITS)
def test_taking_events_by_their_head_gives_what_feeding_them_gives(
    data: st.DataObject, body: bytes, limits: dict[str, int]
) -> None:
    """Whatever `event_of` finds whole or takes after pieces held,
    in any chunking (a byte at a time, 64 bytes, at blank lines, inside every event, anywhere),
    is exactly the one event `feed` would have dispatched, out of the same chunk, and taking it
    leaves the decoder where feeding it would have."""
    chunks = data.draw(st.one_of(
        awkward_chunkings(body), chunkings(body), event_pieces(body), event_pieces(body)))
    events, diagnostics = decode(chunks, **limits)
    taken, taken_diagnostics = decode_taking_heads(chunks, **limits)
    assert without_id_and_retry(taken) == without_id_and_retry(events)
    assert taken_diagnostics == diagnostics


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.lists(st.integers(0, 6).flatmap(  # most of the events of one type
    lambda n: SAME if n < 4 else (USUAL, BREAKER, ALMOST)[n - 4]), min_size=4, max_size=24),
       st.sampled_from([{}, {}, {"max_line_bytes": 40, "max_event_bytes": 30},
                        {"max_line_bytes": 24, "max_event_bytes": 12}]))
def test_a_block_taken_by_the_head_of_its_events_gives_what_feeding_it_gives(
    data: st.DataObject, events: list[str], limits: dict[str, int]
) -> None:
    """A block of events of one type in LF line ends, now and then broken (by another line end,
    a byte that is not UTF-8, another event), in the chunkings that `event_of` is for (an
    event a chunk, every event cut, cuts at a steady size) as well as any other: the events and
    findings of feeding it."""
    body = "".join(events).encode(errors="surrogatepass")
    for _ in range(data.draw(st.sampled_from([0, 0, 1, 2]))):
        at = data.draw(st.integers(0, len(body)))
        body = body[:at] + data.draw(st.one_of(BAD, st.sampled_from([b"\r", b"\r\n"]))) + body[at:]
    chunks = data.draw(st.one_of(
        st.just(at_blank_lines(body)), event_pieces(body), awkward_chunkings(body),
        chunkings(body)))
    events_fed, diagnostics = decode(chunks, **limits)
    taken, taken_diagnostics = decode_taking_heads(chunks, **limits)
    assert without_id_and_retry(taken) == without_id_and_retry(events_fed)
    assert taken_diagnostics == diagnostics


HELD = b"event: a\nda"  # the start of an event, held as it came


@pytest.mark.parametrize(("before", "chunk"), [
    ([], b"event: a\ndata: 2\n\nevent: a\nd"),  # an event ends, nothing held
    ([b"event: a\ndata: 1\n"], b"\n"),  # an event open, no piece held
    ([b"event: b\n", b"event: a\ndata: 1"], b"\n\n"),  # a piece held inside an event
    ([b"event: a\ndata: 1\r"], b"\n\n"),  # a CR held, whose LF may follow
    ([b"event: b\nda"], b"ta: 2\n\n"),  # another type
    ([b"event: a\nid: 1\nda"], b"ta: 2\n\n"),  # another field
    ([HELD], b"ta: 2\ndata: 3\n\n"),  # two data lines
    ([HELD], b"ta: 2\rdata: 3\n\n"),  # a CR ends the data line
    ([HELD], b"ta: 2\n\ndata: 3\r\r"),  # an event ends in the rest, at CRs
    ([HELD], b"ta: 2\n\ndata: 3\n\n"),  # an event ends in the rest
    ([HELD], b"ta: 2\n\n\n"),  # a blank line ends the rest
    ([HELD, b"ta: 2\n"], b"\nevent: a\ndata: 3\n\nev"),  # a blank line after a line end held,
    ([HELD, b"ta: 2\n"], b"\n\nev"),  # then an event that ends in the rest, or a blank line
    ([HELD], b"ta: " + b"2" * 40 + b"\n\n"),  # over the line limit
    ([HELD, "close"], b"ta: 2\n\n"),  # closed
    ([b"event: a", "close"], b"\ndata: 2\n\n"),  # closed, with a line held
    ([], b"event: a\n"),  # lines that end, with nothing held: taken apart at once
    ([], b"event: a\ndata: 1\rdata: 2\n\n"),  # a whole event with a CR
    ([], b"event: a\ndata: 1\ndata: 2\n\n"),  # a whole event with two data lines
    ([HELD], b"ta: " + b"2" * 70000),  # too much to hold
])
def test_event_of_refuses_anything_else(before: list[Any], chunk: bytes) -> None:
    """Only a chunk that ends no event, held as feed holds it, or one that ends an event of the
    head begun in the pieces held since the last event, its data one line, the rest of the chunk
    ending none, within the limits, is fed so; anything else is left to feed."""
    decoder = SSEDecoder(max_line_bytes=32)
    decoder.feed(FIRST)
    for piece in before:
        decoder.close() if piece == "close" else decoder.feed(piece)
    lines, start, tail = decoder._lines, decoder._start, list(decoder._tail)
    assert decoder.event_of(chunk, HEAD) is None
    assert (decoder._lines, decoder._start, decoder._tail) == (lines, start, tail)


def test_event_of_holds_what_ends_no_event_and_finds_the_event_that_ends() -> None:
    """An event that ends in a chunk is found, not taken: taken, what follows it is held."""
    decoder = SSEDecoder()
    assert decoder.feed(FIRST + b"event: a\ndata: 1\n\nev") == [ev("0", "s"), ev("1", "a", line=4)]
    assert decoder.event_of(b"ent: a\nda", HEAD) == ()
    assert decoder.event_of(b"ta: caf\xc3\xa9\n\nevent: a\nd", HEAD) == "caf\u00e9".encode()
    assert decoder.took_whole_event() == 7
    assert decoder.event_of(b"ata: 3", HEAD) == ()
    assert decoder.event_of(b"\n\n", HEAD) == b"3"
    assert decoder.took_whole_event() == 10
    assert decoder.event_of(b"event: a\ndata: 4", HEAD) == ()  # nothing held before
    assert decoder.event_of(b"\n\n", HEAD) == b"4"
    assert decoder.took_whole_event() == 13
    assert decoder.event_of(b"event: a\ndata: 5\n\n", HEAD) == b"5"  # found whole
    assert decoder.took_whole_event() == 16  # and taken by the caller
    assert decoder.event_of(b"event: b\ndata: 6", HEAD) == ()
    assert decoder.feed(b"\n\n") == [ev("6", "b", line=19)]


@pytest.mark.parametrize("chunk", [
    b"ta: \xff\n\nevent: a\nd",  # not UTF-8: the caller, which checks it, feeds it
    b"ta: 2\n\nevent: a\ndata: 3",  # or leaves it for any other reason
])
def test_an_event_found_ending_in_a_chunk_and_not_taken_is_fed(chunk: bytes) -> None:
    decoder, fed = SSEDecoder(), SSEDecoder()
    assert decoder.feed(FIRST + b"ev") == fed.feed(FIRST + b"ev")
    assert decoder.event_of(b"ent: a\nda", HEAD) == () and fed.feed(b"ent: a\nda") == []
    lines, start, tail = decoder._lines, decoder._start, list(decoder._tail)
    assert decoder.event_of(chunk, HEAD) == chunk[4:chunk.index(b"\n")]
    assert (decoder._lines, decoder._start, decoder._tail) == (lines, start, tail)
    for piece in (chunk, b"ta: 4\n\n"):
        assert decoder.feed(piece) == fed.feed(piece)
    assert decoder.close() == fed.close() and decoder.diagnostics == fed.diagnostics


def test_event_of_holds_an_empty_chunk_as_nothing() -> None:
    """An empty chunk between a line end and an LF changes nothing: the LF, after the line end
    held, makes the blank line that ends the event."""
    decoder = SSEDecoder()
    assert decoder.feed(FIRST + b"ev") == [ev("0", "s")]
    assert decoder.event_of(b"ent: a\ndata: 1\n", HEAD) == ()
    assert decoder.event_of(b"", HEAD) == ()
    assert decoder.event_of(b"\nev", HEAD) == b"1"
    assert decoder.took_whole_event() == 4
    assert decoder.event_of(b"ent: a\ndata: 2\n", HEAD) == ()
    assert decoder.feed(b"\n") == [ev("2", "a", line=7)]


TYPED = b"event: a\ndata: 1\n\n"
UNTYPED = b"data: 2\n\n"


@pytest.mark.parametrize(("run", "odd"), [
    (TYPED, b"event: b\ndata: 3\n: c\n"),  # a line where the blank one would be
    (TYPED, b"event: b\nid: 4\n\n"),  # a line where the data line would be
    (TYPED, b"data: 3\nevent: b\n\n"),  # the lines the other way round
    (TYPED, b"event: b\ndata: 3\ndata: 4\n\n"),  # two data lines
    (TYPED, b"event: \ndata: 3\n\n"),  # an empty type
    (TYPED, b"event:b\ndata:3\n\n"),  # no space after the colon
    (TYPED, UNTYPED),  # the other usual shape
    (TYPED, b"\n"),  # one more blank line
    (UNTYPED, b"data: 3\n: c\n"),
    (UNTYPED, b"id: 4\n\n"),
    (UNTYPED, b"event: b\ndata: 3\n\n"),
    (UNTYPED, b"retry: 5\n\n"),
])
def test_a_run_of_usual_events_with_one_of_another_shape(run: bytes, odd: bytes) -> None:
    body = run * 3 + odd + run * 3
    expected = Reference().run(body)
    for chunks in ([body], cut(body, range(0, len(body), 64)), bytewise(body)):
        events, diagnostics = decode(chunks)
        assert as_tuples(events) == expected.events
        assert diagnostics == []


@pytest.mark.parametrize("bytes_data", [False, True])
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), runs(), LIMITS)
def test_runs_of_usual_events_in_any_chunking(
    bytes_data: bool, data: st.DataObject, body: bytes, limits: dict[str, int]
) -> None:
    """However the body is cut, and after every chunk, the events and the findings are those of
    the plain reading of the rules, with the data of a run taken apart as bytes or as str."""
    reference = partial(Reference, limits.get("max_line_bytes", 1 << 20),
                        limits.get("max_event_bytes", 8 << 20))
    expected = reference().run(body)
    chunks = data.draw(st.one_of(awkward_chunkings(body), chunkings(body)))
    decoder = SSEDecoder(**limits, bytes_data=bytes_data)
    fed, events = b"", []
    for chunk in chunks:
        events += decoder.feed(chunk)
        fed += chunk
        assert as_tuples(events) == reference().run(fed).events
    events += decoder.close()
    assert as_tuples(events) == expected.events
    assert [(d.rule, d.line, d.severity) for d in decoder.diagnostics] == expected.diagnostics


TYPED_RUN = st.lists(st.tuples(
    st.one_of(VALUE, st.sampled_from(["tool.call", "usage", ":", " x", "a:b", "", "é"])),
    st.one_of(VALUE, st.just('{"a":"caf\u00e9 \U0001F600"}'))), min_size=1, max_size=40)
"""Events of the shape of LLM-Stream's, an ``event:`` line, a ``data:`` line and a blank line,
of types of any text: those seen before and new ones, more than `sse._KNOWN` holds."""


@pytest.mark.parametrize("bytes_data", [False, True])
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), TYPED_RUN, st.sampled_from([
    "", "\n", "id: 9\n\n", ": c\n", "data: 1\n\n", "event:a\ndata: 1\n\n", "event: a\ndata:1\n\n",
    "event: a\nid: 3\ndata: 1\n\n", "event: a\ndata: 1\ndata: 2\n\n", "event: a\ndata: 1\n: c\n\n",
    "event: a\ndata: 1\n:event: b\ndata: 2\n\n",  # a line where the blank one would be
]))
def test_a_run_cut_at_its_line_ends_gives_what_the_rules_give(
    bytes_data: bool, data: st.DataObject, run: list[tuple[str, str]], odd: str
) -> None:
    """The events of a run cut at the line ends it finds (`SSEDecoder._run`), as str or as
    bytes, are those of the plain reading of the rules, and so those of the general path, in
    one chunk or in reads of a steady size, whatever types the table of ``event:`` lines holds,
    and with another line or event (`odd`) somewhere in the run, which leaves it to the general
    path."""
    events = [f"event: {kind}\ndata: {value}\n\n" for kind, value in run]
    events.insert(data.draw(st.integers(0, len(events))), odd)
    body = "".join(events).encode()
    expected = Reference().run(body).events
    size = data.draw(st.sampled_from([len(body), 64, 256]))
    for chunks in ([body], cut(body, range(size, len(body), size))):
        decoder = SSEDecoder(bytes_data=bytes_data)
        fields = [field for chunk in chunks for field in decoder.feed_fields(chunk)]
        assert [(kind, value if isinstance(value, str) else value.decode(), *rest)
                for kind, value, *rest in fields] == expected
        assert decoder.close() == [] and decoder.diagnostics == []


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.one_of(runs(), bodies()), LIMITS)
def test_taking_whole_data_gives_what_feeding_it_gives(
    data: st.DataObject, body: bytes, limits: dict[str, int]
) -> None:
    """Whatever `whole_data` hands out is exactly the one event `feed` would have dispatched,
    and taking it leaves the decoder where feeding it would have."""
    chunks = data.draw(st.sampled_from([at_blank_lines(body), data.draw(chunkings(body))]))
    events, diagnostics = decode(chunks, **limits)
    taken, taken_diagnostics = decode_taking_data(chunks, **limits)
    assert without_id_and_retry(taken) == without_id_and_retry(events)
    assert taken_diagnostics == diagnostics


def test_bytes_data_is_the_utf8_of_the_data_of_a_run() -> None:
    """With `bytes_data`, a run taken apart as columns gives its data as the bytes it came as,
    after an event begun in an earlier chunk too; the events of `feed` are the same either way."""
    body = "event: a\ndata: caf\u00e9\n\nevent: b\ndata: \U0001f600\n\n".encode() * 2
    chunks = [b"event: a\ndata: x", b"\n\n" + body]
    decoder = SSEDecoder(bytes_data=True)
    fields = [field for chunk in chunks for field in decoder.feed_fields(chunk)]
    assert [value for _, value, _, _, _ in fields][1:] == [
        "caf\u00e9".encode(), "\U0001f600".encode()] * 2
    raw, plain = SSEDecoder(bytes_data=True), SSEDecoder()
    assert [e for c in chunks for e in raw.feed(c)] == [e for c in chunks for e in plain.feed(c)]


def test_whole_data_takes_one_data_line_between_events() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(FIRST) == [ev("0", "s")]
    assert decoder.whole_data(b"data: 1\n\n") == b"1"
    assert decoder.took_whole_data() == 4
    for chunk in (b"data: 1\r\n\r\n", b"data: 1\ndata: 2\n\n", b"data: 1\r\n\n", b"data: 1\n"):
        assert decoder.whole_data(chunk) is None
    assert decoder.feed(b"data: 2\n\n") == [ev("2", line=6)]


# -- against httpx-sse -----------------------------------------------------------------------


def httpx_sse(body: bytes) -> list[tuple[str, str, str, int | None]]:
    text = codecs.getincrementaldecoder("utf-8")()
    lines = HttpxSSELineDecoder()
    decoder = HttpxSSEDecoder()
    found = []
    for line in [*lines.decode(text.decode(body, final=True)), *lines.flush()]:
        event = decoder.decode(line.rstrip("\n"))
        if event is not None:
            found.append((event.event, event.data, event.id, event.retry))
    return found


# httpx-sse departs from WHATWG where a block has no data (it dispatches one), on extra blank
# lines once an id was set (likewise), and on retry values int() takes but WHATWG does not
# (" 1", "+1", Arabic-Indic digits); so these blocks all have data, end in one blank line, and
# keep to ASCII digits in retry.
ORACLE_LINE = st.one_of(
    st.builds("event: {}".format, VALUE),
    st.builds("data: {}".format, VALUE),
    st.builds("id: {}".format, VALUE),
    st.builds("retry: {}".format, st.from_regex(r"[0-9]{1,6}|[a-z]{1,3}", fullmatch=True)),
    st.sampled_from([": comment", "foo: bar", "data"]),
)
BLOCK = st.builds(
    lambda lines, data: "\n".join([*lines, f"data: {data}"]) + "\n\n",
    st.lists(ORACLE_LINE, max_size=4),
    VALUE,
)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(BLOCK, max_size=8), st.data())
def test_lf_bodies_agree_with_httpx_sse(blocks: list[str], data: st.DataObject) -> None:
    body = "".join(blocks).encode()
    chunks = data.draw(chunkings(body))
    events = [(e.type, e.data, e.id, e.retry) for e in decode(chunks)[0]]
    assert events == httpx_sse(body)


def test_the_benchmark_body_agrees_with_httpx_sse() -> None:
    event = (
        "event: content.delta\n"
        'data: {"v":"1.0","seq":17,"type":"content.delta","index":0,"role":"assistant",'
        '"delta":{"text":" caf\u00e9 \\"q\\" ü"}}\n\n'
    ).encode()
    body = event * 50
    expected = httpx_sse(body)
    for eol in (b"\n", b"\r\n"):
        crlf = body.replace(b"\n", eol)
        one_event = [event.replace(b"\n", eol)] * 50
        for chunks in ([crlf], cut(crlf, range(0, len(crlf), 4096)), one_event):
            got = decode(chunks)
            assert [(e.type, e.data, e.id, e.retry) for e in got[0]] == expected
            assert got[1] == []


def test_events_pickle_and_copy_as_equal_events() -> None:
    event = SSEDecoder().feed(b"event: a\ndata: x\nid: 7\nretry: 5\n\n")[0]
    assert event == SSEEvent("a", "x", "7", 5, 1)
    for again in (pickle.loads(pickle.dumps(event)), copy.copy(event), copy.deepcopy(event)):
        assert again == event and type(again) is SSEEvent


def test_a_run_of_types_read_before_is_read_alike() -> None:
    """The types of the event lines of a run are kept for the next runs, of any decoder: an
    empty one stays "message", in str and in bytes, and a line kept is never taken for
    another."""
    region = b"event: a\ndata: 1\n\nevent: \ndata: 2\n\nevent: b\ndata: 3\n\n"
    for bytes_data in (False, True, False, True):
        fields = SSEDecoder(bytes_data=bytes_data).feed_fields(region)
        assert [(kind, bytes(data) if bytes_data else data) for kind, data, *_ in fields] == (
            [("a", b"1"), ("message", b"2"), ("b", b"3")] if bytes_data
            else [("a", "1"), ("message", "2"), ("b", "3")])
        other = region.replace(b"event: b", b"event: ab")
        again = SSEDecoder(bytes_data=bytes_data).feed_fields(other)
        assert [kind for kind, *_ in again] == ["a", "message", "ab"]


def test_a_stream_of_ever_new_types_keeps_the_table_of_types_bounded() -> None:
    """Every region naming types never seen: the table of known lines stays within its bound,
    emptied when full rather than closed to the types that come after."""
    from llm_stream import sse

    decoder = SSEDecoder()
    for n in range(300):
        region = f"event: t{n}\ndata: 1\n\nevent: t{n}b\ndata: 2\n\n".encode()
        assert [kind for kind, *_ in decoder.feed_fields(region)] == [f"t{n}", f"t{n}b"]
        assert len(sse._KNOWN) <= sse._KNOWN_MAX + 2
    usual = b"event: content.delta\ndata: 1\n\nevent: usage\ndata: 2\n\n"
    SSEDecoder().feed_fields(usual)
    assert "event: usage" in sse._KNOWN
