"""The decoder against a hostile or careless server: numbers that only look like integers, member
names written twice, JSON past the limits, tool calls where none may come, warnings, and state
that a stream could grow without bound. Each case runs typed, raw and on the fastest path, whole
and one event a chunk (the hot paths), and off the hot paths (`general_only`), which must agree.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from depth import examples
from general_path import general_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_stream import Decoder, LLMStreamError, Severity, aggregate
from llm_stream.sse import SSEDecoder
from llm_stream_codegen.cli import main as bindings_main

ROOT = Path(__file__).resolve().parent.parent
MAX_DEPTH, MAX_DIGITS = 128, 4300  # as D-LIMITS documents them
REQUEST = json.loads((ROOT / "spec/examples/complete/tool-flow-request-1.json").read_text())
MODES = [{}, {"typed": False}, {"typed": False, "validate": False}]


def event(kind: str, seq: Any, **fields: Any) -> str:
    """One SSE event; `seq` and field values that are `Raw` are written as given."""
    members = ['"v":"1.0"', f'"seq":{seq}', f'"type":"{kind}"']
    members += [f'"{name}":{value if isinstance(value, Raw) else json.dumps(value)}'
                for name, value in fields.items()]
    return f"event: {kind}\ndata: {{{','.join(members)}}}\n\n"


class Raw(str):
    """JSON text written into an event as it is."""


def start(seq: Any = 0) -> str:
    return event("stream.start", seq, model="m", created=1)


def delta(seq: Any, text: str = "a", index: Any = 0, **extra: Any) -> str:
    return event("content.delta", seq, index=Raw(index), role="assistant",
                 delta={"text": text}, **extra)


def stop(seq: Any, index: Any = 0, reason: str = "end_turn") -> str:
    return event("content.stop", seq, index=Raw(index), stop_reason=reason)


def call(seq: Any, name: str = "get_weather", index: Any = 0, call_id: str = "c1",
         arguments: str = '{"city":"Vienna"}') -> str:
    return event("tool.call", seq, index=Raw(index), id=call_id, name=name, arguments=arguments)


def usage(seq: Any, inp: Any = 1, out: Any = 1) -> str:
    return event("usage", seq, input_tokens=Raw(inp), output_tokens=Raw(out))


def end(seq: Any) -> str:
    return event("stream.end", seq)


def ends(body: bytes) -> list[int]:
    return [m.end() for m in re.finditer(rb"\n\n", body)]


def run(body: bytes, cuts: list[int], general: bool, **options: Any) -> tuple[list[Any], Any]:
    decoder = general_only(**options) if general else Decoder(**options)
    events: list[Any] = []
    bounds = [0, *cuts, len(body)]
    try:
        for a, b in itertools.pairwise(bounds):
            events += decoder.feed(body[a:b])
        events += decoder.close()
    except LLMStreamError as error:
        return ["raised", *error.events], error.diagnostic
    return events, decoder.diagnostics


def as_json(events: list[Any]) -> list[str]:
    """Events as JSON text, which tells 9 from 9.0."""
    return [e if isinstance(e, str) else json.dumps(e) if isinstance(e, dict)
            else e.model_dump_json(exclude_unset=True) for e in events]


def decode_everywhere(text: str, **options: Any) -> tuple[list[Any], list[Any]]:
    """The events and diagnostics of a body, the same on every path and in every chunking."""
    body = text.encode()
    events, found = run(body, [], False, **options)
    for cuts, general in itertools.product(([], ends(body)), (False, True)):
        other_events, other_found = run(body, cuts, general, **options)
        assert as_json(other_events) == as_json(events), (cuts, general)
        assert other_found == found, (cuts, general)
    return events, found


def rules(found: Any) -> list[str]:
    return [d.rule for d in found]


def seqs(events: list[Any]) -> list[Any]:
    return [e["seq"] if isinstance(e, dict) else e.seq for e in events]


# -- item 1: integral numbers are integers (decision D-INTEGERS) ------------------------------


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
@pytest.mark.parametrize("written", ["9.0", "9e0", "0.9e1", "90e-1"])
def test_a_seq_written_as_an_integral_number_is_that_integer(options: dict[str, Any],
                                                             written: str) -> None:
    """seq 9.0 after seq 1 is a gap, as seq 9 is; the event comes back with seq 9."""
    body = start() + delta(1) + delta(written) + delta(10) + stop(11) + usage(12) + end(13)
    events, found = decode_everywhere(body, **options)
    assert rules(found) == ["LS-SEQ-2"]
    assert seqs(events) == list(range(2)) + list(range(9, 14))
    assert all(type(seq) is int for seq in seqs(events))


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
def test_every_lifecycle_check_sees_the_integer_an_index_or_count_equals(
    options: dict[str, Any]
) -> None:
    body = (start() + delta(1) + stop(2) + delta(3, index="0.0")  # content after content.stop
            + call(4, index="1e0") + stop(5, index=1.0)  # a tool call's block closes with tool_use
            + delta(6, index="2.0") + usage(7, "5.0", "5.0") + usage(8, "4.0", "5")  # falling
            + end(9))  # block 2 never closed
    _, found = decode_everywhere(body, tools=["get_weather"], **options)
    assert rules(found) == ["LS-LIFE-2", "LS-FLOW-1", "LS-USAGE-3", "LS-LIFE-1"]


def test_a_stream_of_integral_numbers_conforms_and_aggregates_as_integers() -> None:
    body = (start() + delta("1.0", "Hi", index="0e0") + stop(2, index="0.0")
            + usage(3, "4.2e1", "8.0") + end(4))
    for options in MODES:
        events, found = decode_everywhere(body, **options)
        assert found == []
        result = aggregate(events)
        assert result.text == {0: "Hi"} and result.stop_reasons == {0: "end_turn"}
        assert result.usage is not None
        assert (type(result.usage.input_tokens), result.usage.input_tokens) == (int, 42)


# -- item 2: declared tools are always enforced ----------------------------------------------


def test_tools_are_names_or_the_requests_tools_array() -> None:
    body = start() + call(1, "get_forecast") + stop(2, reason="tool_use") + usage(3) + end(4)
    for tools in (["get_weather"], REQUEST["tools"], ("get_weather",)):
        events, found = decode_everywhere(body, tools=tools)
        assert rules(found) == ["LS-CALL-4"]
        assert "tool.call" not in [e.type for e in events]  # not a call to make
    for wrong in ("get_weather", b"get_weather", [{"name": 1}], [{"title": "x"}], [None]):
        with pytest.raises(TypeError, match="tool"):
            Decoder(tools=wrong)


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
def test_tool_calls_are_checked_without_the_lifecycle(options: dict[str, Any]) -> None:
    body = (call(1, "get_forecast", call_id="a") + call(2, call_id="a")
            + call(3, call_id="b", arguments="{'city': 1}") + call(4, call_id="c"))
    events, found = decode_everywhere(body, tools=["get_weather"], lifecycle=False, **options)
    assert rules(found) == ["LS-CALL-4", "LS-CALL-3", "LS-CALL-2"]
    assert seqs(events) == [4]
    events, first = decode_everywhere(body, tools=["get_weather"], lifecycle=False, strict=True,
                                      **options)
    assert events == ["raised"] and first.rule == "LS-CALL-4"


@pytest.mark.parametrize("where", ["before stream.start", "after error", "after stream.end"])
def test_a_tool_call_out_of_place_is_checked_and_not_returned(where: str) -> None:
    error = event("error", 2, code="overloaded", message="m")
    body = {
        "before stream.start": call(0, "rm") + start(1) + usage(2) + end(3),
        "after error": start() + delta(1) + error + call(3, "rm") + end(4),
        "after stream.end": start() + usage(1) + end(2) + call(3, "rm"),
    }[where]
    for options in MODES:
        events, found = decode_everywhere(body, tools=["get_weather"], **options)
        assert "LS-CALL-4" in rules(found)
        assert aggregate(events).tool_calls == []
        assert not [e for e in events if (e["type"] if isinstance(e, dict) else e.type)
                    == "tool.call"]


# -- item 4: warnings never drop events -----------------------------------------------------

SAFE = 2**53 - 1


@pytest.mark.parametrize("options", [*MODES, {"strict": True}, {"typed": False, "strict": True}],
                         ids=["typed", "raw", "fast", "excerpt-strict", "excerpt-strict-raw"])
def test_an_event_whose_only_finding_is_a_warning_is_returned(options: dict[str, Any]) -> None:
    body = delta(SAFE - 1) + delta(SAFE) + delta(SAFE + 1) + delta(SAFE + 2)
    events, found = decode_everywhere(body, lifecycle=False, **options)
    assert seqs(events) == [SAFE - 1, SAFE, SAFE + 1, SAFE + 2]
    assert [(d.rule, d.severity) for d in found] == [("LS-SEC-6", Severity.WARNING)] * 2


def test_decode_prints_every_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capture = tmp_path / "capture.sse"
    capture.write_text(start() + delta(1) + stop(2) + event("vendor.x", SAFE + 1) + end(SAFE + 2))
    assert bindings_main(["decode", str(capture)]) == 1  # the seq gap is an error
    assert len(capsys.readouterr().out.splitlines()) == 5


# -- item 5: diagnostics that say what was expected -----------------------------------------


def test_what_a_missing_member_breaks_is_the_rule_that_requires_it() -> None:
    body = (start() + delta(1) + event("content.stop", 2, index=0) + usage(3)
            + event("error", 4, message="m") + end(5))
    _, found = decode_everywhere(body)
    assert [(d.rule, d.message) for d in found] == [
        ("LS-STOP-1", "/stop_reason is required"), ("LS-ERR-1", "/code is required")]


@pytest.mark.parametrize("last", [
    'event: stream.end\ndata: {"v":"1.0","seq":3,"type":"stream.end"\n\n',
    'event: stream.end\ndata: {"v":"1.0","seq":3}\n\n',
    'event: stream.end\ndata: {"v":"1.0","seq":3,"type":"stream.end","a":1,"a":2}\n\n',
], ids=["not-json", "no-type", "duplicate-name"])
def test_a_rejected_stream_end_is_not_also_reported_missing(last: str) -> None:
    _, found = decode_everywhere(start() + delta(1) + stop(2) + last)
    assert len(found) == 1 and found[0].rule != "LS-END-2", found
    _, found = decode_everywhere(start() + delta(1) + stop(2) + last + delta(4))
    assert rules(found)[-1] == "LS-END-2"  # the stream went on after it: still unfinished


def test_an_empty_body_lacks_stream_start_and_stream_end() -> None:
    for body in ("", ": keep-alive\n\n"):
        _, found = decode_everywhere(body)
        assert [(d.rule, d.line) for d in found] == [("LS-START-1", 1), ("LS-END-2", 1)]
    _, found = decode_everywhere(delta(0))  # already reported for its place: once is enough
    assert rules(found) == ["LS-START-1", "LS-END-2"]


def test_json_past_a_limit_is_named_by_its_rule() -> None:
    deep = delta(2, x=Raw("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)))
    deeper = delta(3, x=Raw("[" * MAX_DEPTH + "]" * MAX_DEPTH))
    long_number = delta(4, x=Raw("7" * (MAX_DIGITS + 1)))
    body = start() + delta(1) + deep + deeper + long_number + stop(5) + usage(6) + end(7)
    for options in MODES:
        events, found = decode_everywhere(body, **options)
        assert [(d.rule, d.line, d.message) for d in found] == [
            ("LS-LIMIT-3", 10, f"data is refused: arrays and objects nest more than "
                               f"{MAX_DEPTH} deep"),
            ("LS-LIMIT-4", 13, f"data is refused: a number's integer part has more than "
                               f"{MAX_DIGITS} digits"),
        ]
        assert seqs(events) == [0, 1, 2, 5, 6, 7]


# -- items 6 and 7: duplicate names and a depth limit the same everywhere --------------------


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
@pytest.mark.parametrize("data", [
    '{"v":"1.0","seq":2,"type":"tool.call","type":"content.delta","index":0,"role":"assistant",'
    '"delta":{"text":"a"}}',
    '{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
    '"delta":{"text":"hello","text":"evil"}}',
    '{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
    '"delta":{"text":"a"},"x":{"q\\u0022":1,"q\\"":2}}',
    # a colon escaped within the text stands in for the colon of the member written twice
    '{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
    '"role":"assistant","delta":{"text":"\\u003a"}}',
], ids=["type", "nested", "escaped", "colon escaped"])
def test_a_member_name_written_twice_is_refused(options: dict[str, Any], data: str) -> None:
    body = start() + delta(1) + f"event: content.delta\ndata: {data}\n\n" + delta(3)
    body += stop(4) + usage(5) + end(6)
    events, found = decode_everywhere(body, **options)
    assert rules(found) == ["LS-SSE-6"]
    assert seqs(events) == [0, 1, 3, 4, 5, 6]


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
@pytest.mark.parametrize("arguments", ['{\\"a\\u003a\\":1}', '{\\"a\\u003A\\":1}'])
def test_a_tool_call_that_writes_a_name_twice_is_refused_whatever_its_arguments_hold(
        options: dict[str, Any], arguments: str) -> None:
    """A tool call's arguments hold colons, which the decoder counts to rule out a member name
    written twice; one escaped within them must not stand in for the colon of a member."""
    data = ('{"v":"1.0","seq":1,"type":"tool.call","index":0,"id":"c1","name":"get_weather",'
            f'"arguments":"{arguments}","id":"c2"}}')
    assert json.loads(json.loads(data)["arguments"]) == {"a:": 1}
    body = start() + f"event: tool.call\ndata: {data}\n\n" + call(2, index=1)
    body += stop(3, reason="tool_use") + stop(4, index=1, reason="tool_use") + usage(5) + end(6)
    events, found = decode_everywhere(body, **options)
    assert rules(found) == ["LS-SSE-6"]
    assert seqs(events) == [0, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
@pytest.mark.parametrize("extra", ['"x":NaN', '"x":[-Infinity]', '"x":{"q":Infinity}'])
def test_a_tool_call_with_a_number_json_has_not_is_refused(options: dict[str, Any],
                                                          extra: str) -> None:
    """A tool call's model types every member its schema names, so a text of just those is
    taken without looking for NaN or Infinity; one with a member more is looked at."""
    data = ('{"v":"1.0","seq":1,"type":"tool.call","index":0,"id":"c1","name":"get_weather",'
            f'"arguments":"{{\\"city\\":\\"Vienna\\"}}",{extra}}}')
    body = start() + f"event: tool.call\ndata: {data}\n\n" + call(2, index=1)
    body += stop(3, reason="tool_use") + stop(4, index=1, reason="tool_use") + usage(5) + end(6)
    events, found = decode_everywhere(body, **options)
    assert rules(found) == ["LS-SSE-2"]
    assert seqs(events) == [0, 2, 3, 4, 5, 6]


def test_only_models_that_take_no_float_are_trusted_by_their_members() -> None:
    """`_Typed.members` lets a typed text of just the members its type's required fields make
    skip the search for NaN, Infinity and null: only models whose required fields no float or
    null slips through qualify, and only their required fields are counted."""
    from enum import Enum, StrEnum
    from typing import Literal

    from pydantic import BaseModel

    from llm_stream.decoder import _members, _takes_no_float, _typed_tables

    class Reason(StrEnum):
        DONE = "done"

    class Numbered(Enum):
        ONE = 1.0

    class Stop(BaseModel):
        reason: Reason
        note: float | None = None

    class ByNumber(BaseModel):
        reason: Numbered

    class Nullable(BaseModel):
        reason: str | None

    class Inner(BaseModel):
        text: str

    class Plain(BaseModel):
        v: Literal["1.0"]
        seq: int
        flag: bool
        inner: Inner

    class Number(BaseModel):
        inner: Inner
        score: float

    class Loose(BaseModel):
        value: Any

    assert _takes_no_float(Plain) and _members(Plain) == 5  # inner.text among them
    assert _takes_no_float(Stop) and _members(Stop) == 1  # the optional note is not counted
    assert not _takes_no_float(Number) and not _takes_no_float(Loose)
    assert not _takes_no_float(ByNumber) and not _takes_no_float(Nullable)
    assert {"content.delta", "tool.call", "content.stop", "usage"} <= set(_typed_tables().members)


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1, 150])
def test_tool_call_arguments_past_the_depth_limit_are_not_json_text(
        options: dict[str, Any], depth: int) -> None:
    """Arguments are parsed as every JSON text is, within the limits (D-LIMITS), whichever path
    the tool call takes: nested past the limit, they are not JSON text (LS-CALL-2)."""
    arguments = "[" * depth + "]" * depth
    body = start() + call(1, arguments=arguments) + stop(2, reason="tool_use") + usage(3) + end(4)
    events, found = decode_everywhere(body, **options)
    assert rules(found) == ([] if depth <= MAX_DEPTH else ["LS-CALL-2"])
    assert seqs(events) == ([0, 1, 2, 3, 4] if depth <= MAX_DEPTH else [0, 2, 3, 4])


@pytest.mark.parametrize("options", MODES, ids=["typed", "raw", "fast"])
@pytest.mark.parametrize(("arguments", "json_text"), [
    ('{"n":1234567890123456789}', True), ('{"x":1e400}', True), ('{"x":1E-100}', True),
    ('{"s":"\\ud83d\\ude00"}', True), ('{"s":"caf\u00e9 \u4e2d \U0001f600"}', True),
    ('{"n":' + "1" * 5000 + "}", False), ('{"s":"\\ud800"}', False), ('{"x":NaN}', False),
    ('{"x":-Infinity}', False), ("[1,]", False), ('{"s":"\\u12"}', False), ("", False),
    ("[1] 2", False),
])
def test_tool_call_arguments_the_scanner_leaves_to_the_parse_are_judged_by_it(
        options: dict[str, Any], arguments: str, json_text: bool) -> None:
    """Arguments the JSON text scanner is not sure of (long integers, big exponents, escaped
    surrogate pairs, anything not JSON) are parsed as before, on every path."""
    body = start() + call(1, arguments=arguments) + stop(2, reason="tool_use") + usage(3) + end(4)
    events, found = decode_everywhere(body, **options)
    assert rules(found) == ([] if json_text else ["LS-CALL-2"])
    assert seqs(events) == ([0, 1, 2, 3, 4] if json_text else [0, 2, 3, 4])


def test_the_depth_limit_does_not_depend_on_the_callers_stack() -> None:
    at_limit = delta(2, x=Raw("[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1)))
    body = (start() + delta(1) + at_limit + stop(3) + usage(4) + end(5)).encode()

    def deep_caller(frames: int) -> Any:
        return run(body, [], True, typed=False) if frames == 0 else deep_caller(frames - 1)

    events, found = deep_caller(sys.getrecursionlimit() - 80)
    assert found == [] and len(events) == 6


# -- item 10 and beyond: state bounded in what a stream can send -----------------------------


def test_block_indexes_past_the_limit_are_refused() -> None:
    body = "".join([start(), *(delta(i + 1, index=i) for i in range(4)), usage(5), end(6)])
    for options in MODES:
        _, found = decode_everywhere(body, max_blocks=3, **options)
        assert [(d.rule, d.line) for d in found] == [("LS-LIMIT-5", 13), ("LS-LIFE-1", 19),
                                                     ("LS-LIFE-1", 19), ("LS-LIFE-1", 19)]
    with pytest.raises(ValueError, match="max_blocks"):
        Decoder(max_blocks=0)


@pytest.mark.parametrize("options", [
    {"max_blocks": 2.0}, {"max_blocks": "3"}, {"typed": 1}, {"strict": "yes"},
    {"lifecycle": None}, {"typed": False, "validate": 0}, {"max_line_bytes": 1e6},
    {"max_event_bytes": "8"},
])
def test_arguments_of_other_types_are_refused(options: dict[str, Any]) -> None:
    """As the compiled decoder refuses them at the call, so that either decides alike."""
    with pytest.raises(TypeError):
        Decoder(**options)
    if "max_line_bytes" in options or "max_event_bytes" in options:
        with pytest.raises(TypeError):
            SSEDecoder(**options)
    with pytest.raises(TypeError):
        SSEDecoder(bytes_data=1)  # type: ignore[arg-type]
    assert Decoder(max_blocks=True)._max_blocks == 1  # an int, to isinstance and compiled code


def _heap_after(body: list[bytes], **options: Any) -> int:
    decoder = Decoder(typed=False, **options)
    tracemalloc.start()
    try:
        for chunk in body:
            decoder.feed(chunk)
            decoder.diagnostics.clear()  # taken by the caller, as the commands take them
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("shape", ["blocks", "tool-ids", "event-types"])
def test_per_stream_state_is_bounded(shape: str) -> None:
    """Distinct block indexes, tool call ids and unregistered event types: what the decoder
    remembers stays within its limit however many a stream sends (ratios in one run)."""
    def body(count: int) -> list[bytes]:
        make = {
            "blocks": lambda i: delta(i + 1, "x" * 40, index=i),
            "tool-ids": lambda i: call(i + 1, index=0, call_id=f"call-{i:08}-" + "x" * 40),
            "event-types": lambda i: event(f"vendor.type-{i:08}", i + 1),
        }[shape]
        return [start().encode(), *(make(i).encode() for i in range(count))]

    # past 16384 distinct strings pydantic-core's string cache, shared and bounded, is full
    small, large = _heap_after(body(20_000), max_blocks=1000), \
        _heap_after(body(40_000), max_blocks=1000)
    assert large < 1.2 * small + 50_000, (small, large)


# -- the same class elsewhere: a request body with a member name twice ----------------------


def test_a_request_with_a_member_name_twice_is_refused() -> None:
    from llm_stream.request import check_request_text

    text = (ROOT / "spec/examples/complete/request-messages.json").read_text()
    assert check_request_text(text) == []
    twice = text.replace('"stream": true,', '"stream": true,\n  "model": "other",', 1)
    assert [(d.rule, d.line) for d in check_request_text(twice)] == [("LS-REQ-6", 5)]


LARGE_BODY_STREAM = (Path(__file__).parent.parent / "spec" / "examples" / "valid-extra"
                     / "text-then-tool-call.sse").read_bytes()


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("options", [{}, {"max_line_bytes": 100_000}, {"typed": True}],
                         ids=["default", "line-limit", "typed"])
def test_a_chunk_past_the_slice_or_a_limit_decodes_as_small_ones_do(
    line_end: bytes, options: dict[str, Any],
) -> None:
    """A body in one chunk larger than the SSE layer's slice (64 KiB), than the line limit, and
    than 1 MiB, after a BOM: the same events and diagnostics as the body fed in small chunks."""
    body = b"\xef\xbb\xbf" + LARGE_BODY_STREAM.replace(b"\n", line_end) * 2000

    def decoded(chunk_size: int) -> tuple[list[Any], list[tuple[str, int | None]]]:
        decoder = Decoder(**options)
        events = [event for at in range(0, len(body), chunk_size)
                  for event in decoder.feed(body[at:at + chunk_size])] + decoder.close()
        return events, [(d.rule, d.line) for d in decoder.diagnostics]

    assert len(body) > 1 << 20
    assert decoded(len(body)) == decoded(4096)


@pytest.mark.parametrize("bytes_data", [False, True])
def test_the_sse_layer_takes_a_chunk_past_its_slice_as_small_ones(bytes_data: bool) -> None:
    body = b"\xef\xbb\xbf" + LARGE_BODY_STREAM * 1000
    whole, small = SSEDecoder(bytes_data=bytes_data), SSEDecoder(bytes_data=bytes_data)
    pieces = [event for at in range(0, len(body), 1000) for event in small.feed(body[at:at + 1000])]
    assert len(body) > 1 << 16
    assert whole.feed(body) == pieces


# -- a body read in small pieces: the events a piece ends, taken from its bytes ---------------

PIECE_TEXTS = ["a", " caf\u00e9", " \u65e5\u672c", " \U0001F600", "\n", ' "q"', "x" * 40, "x" * 90]
"""Texts of deltas: ASCII, characters of two to four bytes (which pieces cut), an escaped line
end, and two whose events are past the small limits below: the event's, and the line's."""
PIECE_NOISE = [
    b"\xff",  # not UTF-8, inside or outside the data
    b"\xc3",  # the first byte of a character whose second never comes
    b"\r",  # a CR: a line end of its own
    b"\n",  # a line end more: a blank line ends the event early, or a third LF follows one
    b": keep-alive\n",  # a comment
    b"id: 7\n",  # another field
    b"data: {}\n",  # a second data line
    b"event: content.stop\n",  # another type
    b"data: " + b"y" * 200 + b"\n",  # a line over the small limit
]


@st.composite
def pieces_of_a_block(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """A block of deltas, now and then broken by noise anywhere or near the end of an event,
    and where to cut it: at a steady size, as reads of a socket are, or anywhere, or at the
    same place around some of the blank lines (between the two LFs, just before or after
    them), so that a piece may end one event and others."""
    texts = draw(st.lists(st.sampled_from(PIECE_TEXTS), min_size=1, max_size=16))
    body = (start() + "".join(delta(seq, text) for seq, text in enumerate(texts, 1))
            + stop(len(texts) + 1) + end(len(texts) + 2)).encode()
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 3]))):
        at = draw(st.one_of(st.integers(0, len(body)), st.sampled_from(ends(body)).map(
            lambda blank: blank - draw(st.integers(0, 24)))))
        body = body[:at] + draw(st.sampled_from(PIECE_NOISE)) + body[at:]
    size = draw(st.integers(1, 160))
    shift = draw(st.sampled_from([-2, -1, -1, 1]))
    cuts = {
        "steady": list(range(size, len(body), size)),
        "anywhere": sorted(set(draw(st.lists(st.integers(1, len(body) - 1), max_size=40)))),
        "blank lines": sorted({at + shift for at in ends(body)
                               if 2 <= at < len(body) - 1 and draw(st.booleans())}),
    }[draw(st.sampled_from(["steady", "steady", "anywhere", "blank lines", "blank lines"]))]
    return body, cuts


@pytest.mark.parametrize("options", [
    *MODES, {"strict": True}, {"typed": False, "max_line_bytes": 160, "max_event_bytes": 120},
    {"max_line_bytes": 160, "max_event_bytes": 120}],
    ids=["typed", "raw", "fast", "strict", "raw-limits", "typed-limits"])
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces_of_a_block())
def test_a_block_in_small_pieces_decodes_as_the_body_in_one(
    options: dict[str, Any], cut_body: tuple[bytes, list[int]],
) -> None:
    """Most pieces of a body read in small pieces end no event and are held; the next ends the
    event they began, which is taken from the bytes held and the piece (`SSEDecoder.event_of`).
    Wherever the pieces are cut, with whatever noise in them, the events and the diagnostics
    are those of the body in one piece, on the hot paths and off them, and each event comes
    out of the piece that ends it."""
    body, cuts = cut_body
    events, found = run(body, [], True, **options)
    for decoded in (run(body, [], False, **options), run(body, cuts, False, **options),
                    run(body, cuts, True, **options)):
        assert decoded[1] == found, cuts  # strict: the same first error, which was raised
        if "strict" not in options:  # (where the events before it came out of other chunks)
            assert as_json(decoded[0]) == as_json(events), cuts
    if "strict" not in options and len(cuts) <= 40:
        decoder, out = Decoder(**options), []
        for a, b in itertools.pairwise([0, *cuts, len(body)]):
            out += decoder.feed(body[a:b])
            assert as_json(out) == as_json(Decoder(**options).feed(body[:b])), (cuts, b)
