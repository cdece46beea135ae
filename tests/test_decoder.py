"""The decoder, layer by layer: SSE framing, envelope, schema, lifecycle, typed events, limits.

The property tests build bodies from random event lists (valid, mutated, not JSON, split, with
any line ends, non-ASCII text and a BOM) and check that every way of cutting a body into chunks
gives the events and diagnostics of the whole body fed at once. The resource tests bound memory
with tracemalloc and compare work between chunkings as ratios measured in the same run.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from depth import examples
from general_path import general_only
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from llm_stream import Decoder, LLMStreamError, Severity, encode_event
from llm_stream.diagnostics import Diagnostic
from llm_stream.models import (
    ContentDeltaEvent,
    ContentStopEvent,
    StreamEndEvent,
    StreamStartEvent,
    UnknownEvent,
    UsageEvent,
)
from llm_stream.rules import RULES
from llm_stream.sse import SSEDecoder, SSEEvent
from llm_stream_codegen.cli import main as cli_main
from llm_stream_codegen.examples import decoder_options

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
MANIFEST = yaml.safe_load((EXAMPLES / "examples.yaml").read_text(encoding="utf-8"))["examples"]
COMPLETE = EXAMPLES / "complete" / "complete-example.sse"


def decode(body: bytes, chunks: int | None = None, **options: Any) -> tuple[list[Any], Decoder]:
    """Decode a whole body (fed at once, or `chunks` bytes at a time); events and the decoder."""
    decoder = Decoder(**options)
    events: list[Any] = []
    size = chunks or max(len(body), 1)
    for start in range(0, len(body), size):
        events.extend(decoder.feed(body[start : start + size]))
    events.extend(decoder.close())
    return events, decoder


def rules(decoder: Decoder) -> list[str]:
    return [d.rule for d in decoder.diagnostics]


def sse(kind: str | None, obj: Any) -> bytes:
    """One event as the encoder would write it, or `data:` only when kind is None."""
    data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False,
                                                       separators=(",", ":"))
    head = f"event: {kind}\n" if kind is not None else ""
    return f"{head}data: {data}\n\n".encode()


def start(seq: int = 0, **extra: Any) -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "stream.start", "model": "m", "created": 1, **extra}


def delta(seq: int, text: Any, index: int = 0, **extra: Any) -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "content.delta", "index": index,
            "role": "assistant", "delta": {"text": text}, **extra}


def stop(seq: int, index: int = 0, reason: str = "end_turn") -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "content.stop", "index": index, "stop_reason": reason}


def call(seq: int, name: str, index: int = 0, call_id: str = "c1") -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "tool.call", "index": index, "id": call_id,
            "name": name, "arguments": '{"city":"Vienna"}'}


def usage(seq: int, inp: int = 1, out: int = 1) -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "usage", "input_tokens": inp, "output_tokens": out}


def end(seq: int) -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "stream.end"}


def stream(*events: dict[str, Any]) -> bytes:
    return b"".join(sse(e["type"], e) for e in events)


# -- layer 1: SSE framing ---------------------------------------------------------------------


def sse_events(body: bytes, **options: Any) -> tuple[list[SSEEvent], list[Diagnostic]]:
    decoder = SSEDecoder(**options)
    events = decoder.feed(body) + decoder.close()
    return events, decoder.diagnostics


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_sse_layer_reads_every_line_end(newline: bytes) -> None:
    body = newline.join([b"event: a", b"data: 1", b"", b"data: 2", b"", b""])
    events, diagnostics = sse_events(body)
    assert [(e.type, e.data, e.line) for e in events] == [("a", "1", 1), ("message", "2", 4)]
    assert diagnostics == []


def test_sse_layer_follows_whatwg() -> None:
    body = (b"\xef\xbb\xbf: a comment\n"  # a BOM is dropped, comments ignored
            b"data:no space\n"
            b"data:  two spaces\n"  # only one space after the colon is dropped
            b"id: 7\n"
            b"retry: 1000\n"
            b"unknown: field\n"
            b"data\n"  # a field name alone has an empty value
            b"\n"
            b"event: only-type\n"  # an event with no data dispatches nothing
            b"\n")
    events, diagnostics = sse_events(body)
    assert events == [SSEEvent("message", "no space\n two spaces\n", "7", 1000, 2)]
    assert diagnostics == []


def test_sse_layer_reports_invalid_utf8_and_an_unterminated_event() -> None:
    events, diagnostics = sse_events(b"data: caf\xe9\n\ndata: cut")
    assert [e.data for e in events] == ["caf\ufffd"]
    assert [(d.rule, d.line, d.severity) for d in diagnostics] == [
        ("LS-SSE-1", 1, Severity.ERROR),
        ("LS-SSE-5", 3, Severity.WARNING),
    ]


# -- the decoder on the spec's examples -------------------------------------------------------

INVALID_STREAMS = [e for e in MANIFEST
                   if e["file"].startswith("invalid/") and e["file"].endswith(".sse")]


def _options(entry: dict[str, Any]) -> dict[str, Any]:
    options = decoder_options(entry.get("options") or {}, EXAMPLES)
    options["lifecycle"] = entry["kind"] != "events"
    return options


@pytest.mark.parametrize("entry", INVALID_STREAMS, ids=lambda e: e["file"])
def test_strict_mode_raises_the_first_error_with_its_rule(entry: dict[str, Any]) -> None:
    body = (EXAMPLES / entry["file"]).read_bytes()
    options = _options(entry)
    _, lenient = decode(body, **options)
    assert sorted(rules(lenient)) == sorted(entry["expect"])
    errors = [d for d in lenient.diagnostics if d.severity is Severity.ERROR]
    for size in (None, 1, 7):
        if not errors:  # a warning only: strict mode decodes on
            assert decode(body, size, strict=True, **options)[1].diagnostics == lenient.diagnostics
            continue
        with pytest.raises(LLMStreamError) as raised:
            decode(body, size, strict=True, **options)
        assert raised.value.diagnostic == errors[0]
        assert raised.value.diagnostic.rule in entry["expect"]
        assert str(raised.value).startswith(f"{errors[0].line}: {errors[0].rule} ")


def test_default_mode_collects_every_problem_and_goes_on() -> None:
    body = stream(start(), delta(1, "a"), delta(2, 5), stop(4), usage(5), end(6))
    body += b"data: [1]\n\n"
    events, decoder = decode(body)
    assert [type(e).__name__ for e in events] == [
        "StreamStartEvent", "ContentDeltaEvent", "ContentStopEvent", "UsageEvent",
        "StreamEndEvent",
    ]
    assert [(d.rule, d.line) for d in decoder.diagnostics] == [
        ("LS-DELTA-2", 7), ("LS-SEQ-2", 10), ("LS-SSE-2", 19),
    ]
    assert not decoder.conforming


def test_events_are_typed_models_by_default_and_dicts_on_request() -> None:
    body = COMPLETE.read_bytes()
    typed, decoder = decode(body)
    assert decoder.conforming
    assert [type(e) for e in typed] == [
        StreamStartEvent, *[ContentDeltaEvent] * 4, ContentStopEvent, UsageEvent, StreamEndEvent,
    ]
    assert typed[1].delta.text == "The"
    assert typed[6].output_tokens == 8
    raw, _ = decode(body, typed=False)
    assert all(type(e) is dict for e in raw)
    assert raw == [json.loads(line[6:]) for line in body.decode().splitlines()
                   if line.startswith("data: ")]
    assert [e.model_dump(mode="json", exclude_unset=True) for e in typed] == raw


def test_unknown_fields_are_ignored_and_kept() -> None:
    body = (EXAMPLES / "valid-extra" / "unknown-fields.sse").read_bytes()
    typed, decoder = decode(body)
    assert decoder.diagnostics == []
    assert typed[0].model_extra == {"system_fingerprint": "fp_44709d6fcb"}
    assert typed[2].model_extra == {"logprob": -0.0312}
    raw, _ = decode(body, typed=False)
    assert raw[2]["logprob"] == -0.0312
    assert b"".join(encode_event(e) for e in typed) == body


def test_unknown_event_types_pass_through_with_a_warning() -> None:
    body = (EXAMPLES / "valid-extra" / "unregistered-event-type.sse").read_bytes()
    typed, decoder = decode(body)
    (unknown,) = [e for e in typed if isinstance(e, UnknownEvent)]
    kind = unknown.type
    assert kind not in {"stream.start", "content.delta", "usage", "stream.end"}
    (diagnostic,) = decoder.diagnostics
    assert (diagnostic.rule, diagnostic.severity) == ("LS-TYPE-1", Severity.WARNING)
    assert decoder.conforming
    raw, _ = decode(body, typed=False)
    assert [e for e in raw if e["type"] == kind] == [unknown.model_dump(mode="json")]
    strict, _ = decode(body, strict=True)  # a warning never raises
    assert len(strict) == len(typed)


def test_line_limit() -> None:
    long_comment = b": " + b"x" * 300 + b"\n"
    long_data = sse("content.delta", delta(2, "y" * 300))
    body = stream(start(), delta(1, "a")) + long_comment + long_data + stream(
        delta(3, "b"), stop(4), usage(5), end(6))
    events, decoder = decode(body, typed=False, max_line_bytes=256)
    assert [(d.rule, d.line) for d in decoder.diagnostics] == [
        ("LS-LIMIT-1", 7), ("LS-LIMIT-1", 9), ("LS-SEQ-2", 11),
    ]
    assert [e["seq"] for e in events] == [0, 1, 3, 4, 5, 6]
    for size in (1, 10, 255, 256, 257):
        assert decode(body, size, typed=False, max_line_bytes=256)[1].diagnostics == \
            decoder.diagnostics


def test_event_limit() -> None:
    lines = "data: " + "\ndata: ".join(json.dumps(delta(2, "z" * 100), indent=1).splitlines())
    body = (stream(start(), delta(1, "a")) + f"event: content.delta\n{lines}\n\n".encode()
            + stream(stop(3), usage(4), end(5)))
    events, decoder = decode(body, typed=False, max_event_bytes=128)
    assert [d.rule for d in decoder.diagnostics] == ["LS-LIMIT-2", "LS-SEQ-2"]
    assert decoder.diagnostics[0].line > 7
    assert [e["seq"] for e in events] == [0, 1, 3, 4, 5]
    with pytest.raises(LLMStreamError, match="LS-LIMIT-2"):
        decode(body, 3, strict=True, max_event_bytes=128)


def test_tool_calls_are_checked_against_the_declared_tools() -> None:
    body = stream(start(), call(1, "get_weather"), stop(2, reason="tool_use"),
                  call(3, "rm_rf", index=1, call_id="c2"), stop(4, 1, "tool_use"),
                  usage(5), end(6))
    assert rules(decode(body)[1]) == []  # no tools given: nothing to check against
    assert rules(decode(body, tools=["get_weather", "rm_rf"])[1]) == []
    _, decoder = decode(body, tools=["get_weather"])
    (diagnostic,) = decoder.diagnostics
    assert (diagnostic.rule, diagnostic.line) == ("LS-CALL-4", 10)
    assert "'rm_rf'" in diagnostic.message and "get_weather" in diagnostic.message
    assert rules(decode(body, tools=[])[1]) == ["LS-CALL-4", "LS-CALL-4"]
    with pytest.raises(LLMStreamError, match="LS-CALL-4"):
        decode(body, strict=True, tools=frozenset({"get_weather"}))


def test_seq_resynchronises_after_a_gap() -> None:
    body = stream(start(), delta(1, "a"), delta(2, "b"), delta(5, "c"), delta(6, "d"),
                  stop(7), usage(8), end(9))
    events, decoder = decode(body)
    assert [(d.rule, d.line) for d in decoder.diagnostics] == [("LS-SEQ-2", 10)]
    assert "seq is 5, expected 3" in decoder.diagnostics[0].message
    assert len(events) == 8
    # a repeat is one breach too, and so is going backwards; the count then follows the stream
    body = stream(start(), delta(1, "a"), delta(1, "b"), delta(2, "c"), stop(3), usage(4), end(5))
    assert rules(decode(body)[1]) == ["LS-SEQ-2"]


def test_lifecycle_false_checks_events_one_by_one() -> None:
    body = stream(delta(7, "a"), usage(3))
    events, decoder = decode(body, lifecycle=False)
    assert len(events) == 2 and decoder.diagnostics == []
    assert rules(decode(body)[1]) == [
        "LS-SEQ-2", "LS-START-1", "LS-SEQ-2", "LS-START-1", "LS-END-2"]


@pytest.mark.parametrize("body", [b"", b": a comment\n\n"])
def test_a_body_without_events_is_reported_on_its_first_line(body: bytes) -> None:
    events, decoder = decode(body)
    assert events == []
    assert [(d.rule, d.line) for d in decoder.diagnostics] == [("LS-START-1", 1), ("LS-END-2", 1)]


@pytest.mark.parametrize("make", [bytearray, memoryview])
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
def test_any_bytes_like_object_can_be_fed(make: Any, typed: bool) -> None:
    """One event a chunk, so that the chunks take the hot path too."""
    body = stream(start(), delta(1, "a"), delta(2, "b"), stop(3), end(4))
    decoder = Decoder(typed=typed)
    events = []
    for a, b in itertools.pairwise([0, *event_ends(body)]):
        events += decoder.feed(make(body[a:b]))
    events += decoder.close()
    assert normal(events) == normal(decode(body, typed=typed)[0])
    assert [d.rule for d in decoder.diagnostics] == ["LS-USAGE-2"]


def test_nesting_too_deep_to_parse_is_reported_not_raised() -> None:
    deep = "[" * 5000 + "]" * 5000
    body = stream(start(), usage(1)) + sse("usage", deep) + stream(end(3))
    for options in ({}, {"typed": False}, {"strict": True}):
        if options.get("strict"):
            with pytest.raises(LLMStreamError):
                decode(body, **options)
        else:
            assert rules(decode(body, **options)[1]) == ["LS-LIMIT-3"]


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
def test_the_request_id_of_the_request_is_echoed(typed: bool) -> None:
    metadata = {"request_id": "r-1", "user_id": "u"}
    echoed = stream(start(request_id="r-1"), delta(1, "a"), stop(2), usage(3),
                    {**end(4), "request_id": "r-1"})
    assert decode(echoed, typed=typed, request_metadata=metadata)[1].diagnostics == []
    wrong = stream(start(request_id="r-2"), delta(1, "a"), stop(2), usage(3), end(4))
    _, decoder = decode(wrong, typed=typed, request_metadata=metadata)
    assert [(d.rule, d.line, d.severity) for d in decoder.diagnostics] == [
        ("LS-META-2", 1, Severity.WARNING), ("LS-META-2", 13, Severity.WARNING)]
    assert decoder.conforming
    assert decode(wrong, typed=typed)[1].diagnostics == []  # no request, nothing to echo
    assert decode(wrong, typed=typed, request_metadata={})[1].diagnostics == []


def test_feed_after_close_is_an_error() -> None:
    decoder = Decoder()
    decoder.close()
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: {}\n\n")


def test_an_http_capture_with_headers_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A capture as `curl -i` saves it: status line and headers, then the body; line numbers
    count from the top of the file."""
    head = (EXAMPLES / "draft" / "complete-example.http").read_bytes().split(b"\n\n", 1)[0]
    head = head.replace(b"\n", b"\r\n") + b"\r\nX-Extra: 1\r\n\r\n"  # 5 lines
    capture = tmp_path / "capture.http"
    capture.write_bytes(head + COMPLETE.read_bytes())
    assert cli_main(["check", "--json", str(capture)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "conforming": True, "events": 8, "diagnostics": []}
    capture.write_bytes(head + COMPLETE.read_bytes().replace(b'"seq":3', b'"seq":9'))
    assert cli_main(["check", str(capture)]) == 1
    lines = capture.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if '"seq":9' in text) - 1
    assert lines[line - 1] == "event: content.delta"
    assert capsys.readouterr().out.splitlines() == [
        f"{capture}:{line}: LS-SEQ-2 seq is 9, expected 3",
        f"{capture}:{line + 3}: LS-SEQ-2 seq is 4, expected 10",
    ]
    # the draft prints its example with the JSON wrapped over several lines: not conforming
    assert cli_main(["check", str(EXAMPLES / "draft" / "complete-example.http")]) == 1
    assert "LS-SSE-2" in capsys.readouterr().out


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
def test_integers_beyond_64_bits_stay_exact(typed: bool) -> None:
    """Parsers that read them as floats lose digits; even in an unknown field they come back as
    they were, on the general path and on the hot paths alike."""
    big = 90071992547409931749292800
    body = stream(start(created=big), delta(1, "a", x=-big), delta(2, "b", x=[big]), stop(3),
                  usage(4, big, big), end(5))
    for cuts in ([], event_ends(body)):
        events, diagnostics = feed_cut(body, cuts, typed=typed)
        assert diagnostics == []
        created = events[0].created if typed else events[0]["created"]
        assert type(created) is int and created == big
        extra = [e.x if typed else e["x"] for e in events[1:3]]
        assert extra == [-big, [big]] and type(extra[0]) is int


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
@pytest.mark.parametrize(("data", "rule"), [
    ('{"v":"1.0","seq":1,"type":[],"index":0}', "LS-ENV-3"),
    ('{"v":"1.0","seq":1,"type":{"a":1},"index":0}', "LS-ENV-3"),
    ('{"v":"1.0","seq":1,"type":"content.delta","index":[],"role":"assistant",'
     '"delta":{"text":"a"}}', "LS-DELTA-1"),
    ('{"v":"1.0","seq":1,"type":"content.delta","index":{},"role":"assistant",'
     '"delta":{"text":"a"}}', "LS-DELTA-1"),
    ('{"v":"1.0","seq":1,"type":"\\ud800content.delta"}', "LS-SSE-2"),
    ('{"v":"1.0","seq":1,"type":"content.delta","index":0,"role":"assistant",'
     '"delta":{"text":"\\udc00"}}', "LS-SSE-2"),
    ('{"v":"1.0","seq":1,"type":"usage","input_tokens":NaN,"output_tokens":1}', "LS-SSE-2"),
    ('{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
     '"delta":{"text":"a"},"x":NaN}', "LS-SSE-2"),
    ('{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
     '"delta":{"text":"a","x":[-Infinity]}}', "LS-SSE-2"),
    ('{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
     '"delta":{"text":"a"},"x":"\\x41"}', "LS-SSE-2"),
    ('{"v":"2.0","seq":2,"type":"content.delta","index":0,"role":"assistant",'
     '"delta":{"text":"a"}}', "LS-ENV-1"),
    ('{"v":1.0,"seq":2,"type":"content.delta","index":0,"role":"assistant",'
     '"delta":{"text":"a"}}', "LS-ENV-1"),
], ids=["type-array", "type-object", "index-array", "index-object", "lone-surrogate-type",
        "lone-surrogate-text", "nan", "nan-unknown-field", "infinity-nested-unknown-field",
        "bad-escape", "version", "version-number"])
def test_hostile_values_are_diagnosed_not_raised(data: str, rule: str, typed: bool) -> None:
    """Values of any JSON type where a string or an integer belongs, and text that is not
    JSON (NaN and Infinity are not, even in an unknown field) give diagnostics in every mode
    and every chunking (the event in a chunk of its own takes the decoder's fastest path),
    never an exception from deep inside."""
    body = stream(start(), delta(1, "a")) + f"event: content.delta\ndata: {data}\n\n".encode()
    body += stream(stop(3), usage(4), end(5))
    for cuts in ([], event_ends(body)):
        events, diagnostics = feed_cut(body, cuts, typed=typed)
        found = [d.rule for d in diagnostics]
        assert rule in found, found
        assert len(events) == 5  # the broken event is reported, not returned
        if rule == "LS-SSE-2":
            assert found == ["LS-SSE-2"]
    with pytest.raises(LLMStreamError):
        decode(body, strict=True, typed=typed)


# -- chunking: every cut gives the whole body's events and diagnostics -----------------------

TEXTS = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12) | \
    st.sampled_from(["caf\u00e9", "\u4e2d\u6587", "\U0001f600 ok", "24\u00b0C", "\u00e9\u00e9"])


@st.composite
def event_objects(draw: st.DrawFn, seq: int) -> dict[str, Any]:
    index = draw(st.integers(0, 2))
    return draw(st.sampled_from([
        start(seq),
        delta(seq, draw(TEXTS), index),
        stop(seq, index, draw(st.sampled_from(["end_turn", "tool_use", "max_tokens", "??"]))),
        call(seq, draw(st.sampled_from(["get_weather", "x"])), index, f"c{seq}"),
        usage(seq, draw(st.integers(0, 9)), draw(st.integers(0, 9))),
        {"v": "1.0", "seq": seq, "type": "error", "code": "overloaded", "message": "m"},
        end(seq),
        {"v": "1.0", "seq": seq, "type": "vendor.ping", "extra": draw(TEXTS)},
    ]))


def mutate(draw: st.DrawFn, obj: dict[str, Any]) -> dict[str, Any]:
    obj = dict(obj)
    how = draw(st.sampled_from(["drop", "retype", "seq", "version", "extra", "integral"]))
    key = draw(st.sampled_from(sorted(obj)))
    if how == "drop":
        del obj[key]
    elif how == "retype":
        obj[key] = draw(st.sampled_from([None, 1, "s", [], {}, 1.5, -1, True, 2.0, "1.0"]))
    elif how == "seq":
        obj["seq"] = draw(st.integers(-1, 2**53 + 2))
    elif how == "version":
        obj["v"] = "2.0"
    elif how == "integral":  # an integer written as 2.0 (decision D-INTEGERS)
        obj.update({k: float(v) for k, v in obj.items() if type(v) is int and abs(v) < 2**53})
    else:
        obj["vendor:" + draw(TEXTS)] = draw(TEXTS)
    return obj


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """A response body: random events, some broken, in random framing and line ends."""
    pieces: list[str] = []
    for seq in range(draw(st.integers(0, 8))):
        obj = draw(event_objects(seq))
        shape = draw(st.sampled_from(
            ["plain"] * 6 + ["mutated", "not-json", "split", "multi-data", "data-only",
                             "mismatch", "comment", "id-retry", "array", "raw", "twice",
                             "deep"]))
        kind = obj.get("type")
        text = json.dumps(obj, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
        if shape == "mutated":
            obj = mutate(draw, obj)
            text = json.dumps(obj, ensure_ascii=False)
        if shape == "not-json":
            text = text[: draw(st.integers(0, len(text) - 1))]
        if shape == "twice":  # a member name written twice (decision D-DUPLICATE-KEYS)
            name = draw(st.sampled_from(sorted(obj)))
            text = text[:-1] + "," + json.dumps(name) + ":" + json.dumps(draw(TEXTS)) + "}"
            if draw(st.booleans()):  # a colon within a string escaped: one colon fewer written
                text = text.replace('\\":', '\\"\\u003a', 1)
        if shape == "deep":  # at the depth limit, or past it (LS-LIMIT-3)
            depth = draw(st.sampled_from([126, 127, 128]))
            text = text[:-1] + ',"x":' + "[" * depth + "]" * depth + "}"
        if shape == "split":
            cut = draw(st.integers(1, len(text) - 1))
            pieces.append(f"event: {kind}\ndata: {text[:cut]}\n\ndata: {text[cut:]}\n\n")
        elif shape == "multi-data":
            lines = json.dumps(obj, indent=1, ensure_ascii=False).split("\n")
            pieces.append(f"event: {kind}\n" + "".join(f"data: {x}\n" for x in lines) + "\n")
        elif shape == "data-only":
            pieces.append(f"data: {text}\n\n")
        elif shape == "mismatch":
            pieces.append(f"event: usage\ndata: {text}\n\n")
        elif shape == "comment":
            pieces.append(f": keep-alive {draw(TEXTS)}\nevent: {kind}\ndata: {text}\n\n")
        elif shape == "id-retry":
            pieces.append(f"id: {seq}\nretry: 10\nevent: {kind}\ndata:{text}\n\n")
        elif shape == "array":
            pieces.append(f"data: [{text}]\n\n")
        elif shape == "raw":
            pieces.append(draw(st.text(st.sampled_from("data: {}\n\r:éx\"v1"), max_size=20)))
        else:
            pieces.append(f"event: {kind}\ndata: {text}\n\n")
    text = "".join(pieces)
    newline = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if newline == "mixed":
        parts = text.split("\n")
        text = "".join(part + draw(st.sampled_from(["\n", "\r\n", "\r"])) for part in parts[:-1])
        text += parts[-1]
    elif newline != "\n":
        text = text.replace("\n", newline)
    body = text.encode()
    if draw(st.booleans()):
        body = b"\xef\xbb\xbf" + body
    if draw(st.integers(0, 9)) == 0:  # an invalid byte somewhere
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3", b"\xe2\x82"])) + \
            body[at:]
    if draw(st.integers(0, 4)) == 0:  # cut off at the end
        body = body[: draw(st.integers(0, len(body)))]
    return body


def event_ends(body: bytes) -> list[int]:
    """Cut points just after every blank line, as servers that flush every event send."""
    return [m.end() for m in re.finditer(rb"\r\n\r\n|\n\n|\r\r", body)]


def tricky_cuts(body: bytes) -> list[int]:
    """Cut points inside a CRLF and inside every multi-byte UTF-8 character."""
    cuts = []
    for i in range(1, len(body)):
        if (body[i - 1] == 13 and body[i] == 10) or (body[i] & 0xC0 == 0x80):
            cuts.append(i)
    return cuts


def feed_cut(
    body: bytes, cuts: list[int], general: bool = False, **options: Any
) -> tuple[list[Any], Any]:
    """Events and diagnostics of `body` fed in pieces cut at `cuts`; the error in strict mode.
    `general` keeps every event off the decoder's hot paths."""
    decoder = general_only(**options) if general else Decoder(**options)
    events: list[Any] = []
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(body))), len(body)]
    try:
        for a, b in itertools.pairwise(bounds):
            events.extend(decoder.feed(body[a:b]))
        events.extend(decoder.close())
    except LLMStreamError as exc:
        return ["raised"], exc.diagnostic
    return events, decoder.diagnostics


def normal(events: list[Any]) -> list[Any]:
    """Events as text that tells an int from a float (2 == 2.0 in Python)."""
    return [e if isinstance(e, str) else json.dumps(e) if isinstance(e, dict)
            else (type(e), e.model_dump_json()) for e in events]


LIMITS = st.sampled_from([{}, {"max_line_bytes": 48}, {"max_event_bytes": 64},
                          {"max_line_bytes": 40, "max_event_bytes": 40}])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies(), data=st.data(), limits=LIMITS,
       options=st.sampled_from([{}, {"typed": False}, {"strict": True}, {"lifecycle": False},
                                {"tools": ["get_weather"]}]))
@example(body=b"data: []\n\ndata: \xff\n\n", data=None, limits={}, options={"strict": True})
@example(body=COMPLETE.read_bytes().replace(b"\n", b"\r\n"), data=None, limits={}, options={})
def test_any_chunking_gives_the_same_events_and_diagnostics(
    body: bytes, data: st.DataObject | None, limits: dict[str, int], options: dict[str, Any]
) -> None:
    options = {**options, **limits}
    whole = feed_cut(body, [], **options)
    cuttings = [list(range(len(body))), tricky_cuts(body), event_ends(body)]
    if data is not None:
        cuttings.append(data.draw(st.lists(st.integers(1, max(len(body) - 1, 1)), max_size=12)))
    for cuts in cuttings:
        events, found = feed_cut(body, cuts, **options)
        assert normal(events) == normal(whole[0])
        assert found == whole[1], f"cuts at {cuts}"
    if not isinstance(whole[1], Diagnostic):
        for diagnostic in whole[1]:
            assert diagnostic.rule in RULES and diagnostic.line >= 0


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies(), options=st.sampled_from(
    [{}, {"typed": False}, {"typed": False, "validate": False}, {"strict": True},
     {"typed": False, "validate": False, "max_blocks": 2},
     {"lifecycle": False, "tools": ["get_weather"]}]))
def test_the_hot_paths_decide_as_the_general_path_does(
    body: bytes, options: dict[str, Any]
) -> None:
    """An event that continues an open block skips most checks when its bytes show that
    nothing but seq changes, and a typed event may be built without the validators; whatever
    it is, whole, one a chunk or in small chunks, the result is that of checking it in full."""
    general = feed_cut(body, [], general=True, **options)
    for cuts in ([], event_ends(body), list(range(0, len(body), 61))):
        events, found = feed_cut(body, cuts, **options)
        assert normal(events) == normal(general[0])
        assert found == general[1]


ARGUMENT_TEXTS = st.sampled_from(['{"city":"Vienna"}', '{"a":[1,2.5,null]}', "[]", "{", "",
                                  '"caf\u00e9"', '{"a":1}x', "NaN", "null",
                                  "[" * 128 + "]" * 128, "[" * 129 + "]" * 129,
                                  '{"text":"' + "caf\u00e9 " * 900 + '"}'])  # hashed when joined


@st.composite
def block_events(draw: st.DrawFn, index: int) -> list[dict[str, Any]]:
    """The events of one content block, as a conforming stream has them, without seq."""
    kind = draw(st.sampled_from(["text", "reasoning", "call", "fragments"]))
    events: list[dict[str, Any]] = []
    if kind in ("text", "reasoning"):  # a reasoning block may open with its signature
        for _ in range(draw(st.integers(1 if kind == "text" else 0, 4))):
            events.append({"type": f"{'content' if kind == 'text' else 'reasoning'}.delta",
                           "index": index, "delta": {"text": draw(TEXTS)},
                           **({"role": "assistant"} if kind == "text" else {})})
        if kind == "reasoning" and draw(st.booleans()):
            events.append({"type": "reasoning.signature", "index": index, "signature": "c2ln"})
        reason = "end_turn"
    else:
        name = draw(st.sampled_from(["get_weather", "get_weather", "other"]))
        call_id = draw(st.sampled_from([f"call_{index}", "call_0"]))
        arguments = draw(ARGUMENT_TEXTS)
        if kind == "fragments":
            cut = draw(st.integers(0, len(arguments)))
            for n, piece in enumerate([arguments[:cut], arguments[cut:]]):
                carried = {"id": call_id, "name": name} if n == 0 else {}
                events.append({"type": "tool.call.delta", "index": index, **carried,
                               "arguments": piece})
        if kind == "call" or draw(st.integers(0, 5)):
            events.append({"type": "tool.call", "index": index, "id": call_id, "name": name,
                           "arguments": arguments})
        reason = "tool_use"
    events.append({"type": "content.stop", "index": index,
                   "stop_reason": draw(st.sampled_from([reason] * 5 + ["max_tokens"]))})
    return events


@st.composite
def near_conforming_bodies(draw: st.DrawFn) -> bytes:
    """A stream of text, reasoning and tool call blocks with running usage, as servers send
    them, with now and then one thing wrong: most events take the quick or the hot path."""
    events: list[dict[str, Any]] = [{"type": "stream.start", "model": "m", "created": 1}]
    tokens = 0
    for index in range(draw(st.integers(0, 4))):
        events.extend(draw(block_events(index)))
        if draw(st.booleans()):
            tokens += draw(st.integers(-1, 3))
            events.append({"type": "usage", "input_tokens": 3, "output_tokens": tokens})
    if draw(st.integers(0, 3)):
        events.append({"type": "usage", "input_tokens": 3, "output_tokens": tokens + 1})
    if draw(st.integers(0, 5)):
        events.append({"type": "stream.end"})
    how = ""
    if draw(st.booleans()):  # one thing wrong
        at = draw(st.integers(0, len(events) - 1))
        how = draw(st.sampled_from(["drop", "repeat", "again", "move", "null", "index", "error",
                                    "extra", "optional", "twice", "nan"]))
        if how == "drop":
            del events[at]
        elif how == "repeat":
            events.insert(at, dict(events[at]))
        elif how == "again":  # the same event but for its id
            events.insert(at, {**events[at], "id": "another"})
        elif how == "move":
            events.insert(draw(st.integers(at, len(events))), events.pop(at))
        elif how == "null":
            events[at] = {**events[at], draw(st.sampled_from(
                ["vendor_stop_reason", "id", "name", "stop_reason", "index"])): None}
        elif how == "index":
            events[at] = {**events[at], "index": draw(st.sampled_from([0, 1, 7, -1, "0", 1.0]))}
        elif how == "error":
            events.insert(at, {"type": "error", "code": "overloaded", "message": "m"})
        elif how == "optional":  # a member its type's schema has but does not require
            events[at] = {**events[at], draw(st.sampled_from(
                ["vendor_stop_reason", "reasoning_tokens", "request_id", "id", "name"])):
                draw(st.sampled_from(["x", 2, None]))}
        elif how == "extra":
            events[at] = {**events[at], "vendor:x": draw(TEXTS)}
    first = draw(st.sampled_from([0] * 5 + [-3, 9007199254740990]))  # seq from its start
    objects = [{"v": "1.0", "seq": first + seq, **event} for seq, event in enumerate(events)]
    if objects and draw(st.integers(0, 3)) == 0:  # a seq out of order
        objects[draw(st.integers(0, len(objects) - 1))]["seq"] = draw(st.integers(-1, 9))
    texts = [json.dumps(obj, ensure_ascii=False, separators=(",", ":")) for obj in objects]
    if how in ("twice", "nan"):  # what only the text shows: a name written twice, a NaN
        at = draw(st.integers(0, len(texts) - 1))
        name = draw(st.sampled_from(sorted(objects[at])))
        member = (f'"{name}":{json.dumps(objects[at][name], ensure_ascii=False)}'
                  if how == "twice" else '"vendor:x":NaN')
        texts[at] = texts[at][:-1] + "," + member + "}"
    return b"".join(sse(obj["type"], text) for obj, text in zip(objects, texts, strict=True))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=near_conforming_bodies(), data=st.data(), options=st.sampled_from(
    [{}, {"typed": False}, {"typed": False, "validate": False}, {"strict": True},
     {"tools": ["get_weather"]}, {"typed": False, "tools": []},
     {"request_metadata": {"request_id": "x"}},
     {"typed": False, "validate": False, "request_metadata": {"request_id": "x"}},
     {"typed": False, "request_metadata": {}}]))
def test_the_quick_path_decides_as_the_general_path_does(
    body: bytes, data: st.DataObject, options: dict[str, Any]
) -> None:
    """Events that do not continue an open block take the quick path, whole chunk or not;
    near-conforming streams of every block kind, one thing wrong or none, give the events and
    diagnostics of checking every event in full, in any chunking."""
    general = feed_cut(body, [], general=True, **options)
    cuts = data.draw(st.lists(st.integers(1, max(len(body) - 1, 1)), max_size=12))
    for cutting in ([], event_ends(body), list(range(0, len(body), 64)), cuts):
        events, found = feed_cut(body, cutting, **options)
        assert normal(events) == normal(general[0])
        assert found == general[1], f"cuts at {cutting}"


@st.composite
def in_line_ends(draw: st.DrawFn, body: bytes) -> bytes:
    """The body in LF line ends, as servers mostly send it, or CRLF, CR, or now one now another."""
    eol = draw(st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b"\r", b"mixed"]))
    if eol != b"mixed":
        return body.replace(b"\n", eol)
    lines = body.split(b"\n")
    return b"".join(line + draw(st.sampled_from([b"\n", b"\r\n", b"\r"])) for line in lines[:-1])


@st.composite
def event_pieces(draw: st.DrawFn, body: bytes) -> list[int]:
    """Cuts inside every event, once or twice, as reads of a steady size cut events of a
    steady size: most chunks end one event and begin the next."""
    ends = [0, *event_ends(body)]
    return [draw(st.integers(a + 1, b - 1)) for a, b in itertools.pairwise(ends) if b - a > 1
            for _ in range(draw(st.sampled_from([1, 1, 1, 2])))]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=near_conforming_bodies().flatmap(in_line_ends), data=st.data(),
       options=st.sampled_from([{}, {"typed": False}, {"typed": False, "validate": False},
                                {"strict": True}, {"tools": ["get_weather"]}]))
def test_events_taken_from_their_chunks_decide_as_the_general_path_does(
    body: bytes, data: st.DataObject, options: dict[str, Any]
) -> None:
    """An event a chunk, or ended by a chunk after pieces held, is taken from its bytes by its
    head (`SSEDecoder.event_of`) and checked inline; in any line ends and any chunking (an
    event a chunk, each event cut, 64 bytes or one byte at a time, anywhere),
    the events and the diagnostics are those of the general path and of the body in one chunk,
    and each event comes out of the chunk that completes it."""
    general = feed_cut(body, [], general=True, **options)
    assert normal(feed_cut(body, [], **options)[0]) == normal(general[0])
    pieces = data.draw(event_pieces(body))
    for cutting in (event_ends(body), pieces, list(range(0, len(body), 64)),
                    list(range(len(body))),
                    data.draw(st.lists(st.integers(1, max(len(body) - 1, 1)), max_size=12))):
        events, found = feed_cut(body, cutting, **options)
        assert normal(events) == normal(general[0])
        assert found == general[1], f"cuts at {cutting}"
    if "strict" not in options:
        decoder, out = Decoder(**options), []
        bounds = [0, *sorted(set(pieces)), len(body)]
        for a, b in itertools.pairwise(bounds):  # after each chunk, the events of the bytes so far
            out += decoder.feed(body[a:b])
            assert normal(out) == normal(Decoder(**options).feed(body[:b]))


@pytest.mark.parametrize(("field", "value"), [
    ("seq", True), ("seq", False), ("seq", 1.0), ("seq", 2.0), ("seq", "1"), ("v", "2.0"),
    ("v", 1.0), ("v", None), ("type", "content.delta "), ("index", 0.0), ("index", False)])
def test_an_envelope_that_only_looks_right_is_checked_in_full(field: str, value: object) -> None:
    """True == 1 and 1.0 == 1 in Python: the hot paths must not take them for seq 1 (or 2.0
    for seq 2); nor may they skip the version, the type or the block's index. Whole, an event a
    chunk, each event cut, or a byte at a time."""
    bodies = [  # the event in question comes where seq 1, and then seq 2, is next
        stream(start(), delta(0, "a"), {**delta(1, "b"), field: value}, stop(2), end(3)),
        stream(start(), delta(1, "a"), {**delta(2, "b"), field: value}, stop(3), end(4)),
    ]
    for body, options in itertools.product(
        bodies, [{}, {"typed": False}, {"typed": False, "validate": False}]
    ):
        pieces = [end - 9 for end in event_ends(body)]
        for cuts in ([], event_ends(body), pieces, list(range(len(body)))):
            events, found = feed_cut(body, cuts, **options)
            general = feed_cut(body, cuts, general=True, **options)
            assert normal(events) == normal(general[0]) and found == general[1]


@pytest.mark.parametrize("broken", [
    'event: content.delta\ndata: {"v":"1.0","seq":3,\n\n',  # the first half of an envelope
    'event: content.delta\ndata: {"v":"1.0","seq":3}x\n\n',  # not JSON
    'event: content.delta\ndata: [3]\n\n',  # not an object
])
def test_an_event_that_is_not_json_among_the_events_of_a_block_is_reported_in_place(
    broken: str,
) -> None:
    """Data that may be the first half of an envelope waits for the next event (LS-SSE-3): the
    events of the block that come next are checked in full, in every chunking, and the seq
    goes on from the event that is not JSON (or, wrongly, from the one before it)."""
    for after, options in itertools.product((3, 4), (
            {}, {"typed": False}, {"typed": False, "validate": False}, {"strict": True})):
        body = (stream(start(), delta(1, "a"), delta(2, "b")) + broken.encode() + stream(
            delta(after, "c"), delta(after + 1, "d"), stop(after + 2), usage(after + 3),
            end(after + 4)))
        pieces = [end - 9 for end in event_ends(body)]
        general = feed_cut(body, [], general=True, **options)
        for cuts in ([], event_ends(body), pieces, list(range(0, len(body), 64))):
            events, found = feed_cut(body, cuts, **options)
            assert normal(events) == normal(general[0]) and found == general[1]


def reasoning(seq: int, text: str, index: int = 0) -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "reasoning.delta", "index": index,
            "delta": {"text": text}}


def test_every_reasoning_delta_after_the_signature_is_reported() -> None:
    """The signature completes its block: the deltas after it leave the hot path, each one."""
    signature = {"v": "1.0", "seq": 3, "type": "reasoning.signature", "index": 0,
                 "signature": "c2ln"}
    body = stream(start(), reasoning(1, "a"), reasoning(2, "b"), signature, reasoning(4, "c"),
                  reasoning(5, "d"), stop(6), end(7))
    for options in ({}, {"typed": False}, {"typed": False, "validate": False}):
        for cuts in ([], event_ends(body)):
            events, found = feed_cut(body, cuts, **options)
            assert [(d.rule, d.line) for d in found if d.rule != "LS-USAGE-2"] == [
                ("LS-REASON-3", 13), ("LS-REASON-3", 16)]
            assert len(events) == 8


def fragment(seq: int, arguments: str, index: int = 0, **carried: Any) -> dict[str, Any]:
    return {"v": "1.0", "seq": seq, "type": "tool.call.delta", "index": index, **carried,
            "arguments": arguments}


ARGUMENTS = '{"city":"Vienna"}'
FIRST_FRAGMENT = {"id": "c1", "name": "get_weather"}
ONE_RULE_BROKEN = {  # each body breaks one rule the quick path checks before changing anything
    # (but the first, a cut the rule allows)
    "fragments cut off at max_tokens": stream(
        start(), fragment(1, "{", **FIRST_FRAGMENT), stop(2, reason="max_tokens"), usage(3),
        end(4)),
    "reasoning after its signature": stream(
        start(), reasoning(1, "a"), {"v": "1.0", "seq": 2, "type": "reasoning.signature",
                                     "index": 0, "signature": "c2ln"},
        reasoning(3, "b"), stop(4), usage(5), end(6)),
    "a fragment after its tool.call": stream(
        start(), fragment(1, "{", **FIRST_FRAGMENT), call(2, "get_weather"),
        fragment(3, "}", **FIRST_FRAGMENT), stop(4, reason="tool_use"), usage(5), end(6)),
    "two tool.calls in a block": stream(
        start(), call(1, "get_weather"), {**call(2, "get_weather"), "id": "c2"},
        stop(3, reason="tool_use"), usage(4), end(5)),
    "text in a tool call's block": stream(
        start(), call(1, "get_weather"), delta(2, "a"), stop(3, reason="tool_use"), usage(4),
        end(5)),
    "fragments that do not add up": stream(
        start(), fragment(1, '{"city":', **FIRST_FRAGMENT), fragment(2, '"Paris"}'),
        call(3, "get_weather"), stop(4, reason="tool_use"), usage(5), end(6)),
    "long fragments that do not add up": stream(  # past what is kept as text: hashed
        start(), fragment(1, '{"a":"' + "x" * 3000, **FIRST_FRAGMENT), fragment(2, "y" * 3000),
        {**call(3, "get_weather"), "arguments": '{"a":"' + "x" * 3000 + "y" * 2999 + 'z"}'},
        stop(4, reason="tool_use"), usage(5), end(6)),
    "fragments that carry another id": stream(
        start(), fragment(1, ARGUMENTS, id="c9", name="get_weather"), call(2, "get_weather"),
        stop(3, reason="tool_use"), usage(4), end(5)),
    "a first fragment without its name": stream(
        start(), fragment(1, ARGUMENTS, id="c1"), call(2, "get_weather"),
        stop(3, reason="tool_use"), usage(4), end(5)),
    "fragments cut off at end_turn": stream(
        start(), fragment(1, "{", **FIRST_FRAGMENT), stop(2, reason="tool_use"), usage(3),
        end(4)),
    "a tool call's block stopped at end_turn": stream(
        start(), call(1, "get_weather"), stop(2), usage(3), end(4)),
    "a block stopped twice": stream(start(), delta(1, "a"), stop(2), stop(3), usage(4), end(5)),
    "content after its block's stop": stream(
        start(), delta(1, "a"), stop(2), delta(3, "b"), usage(4), end(5)),
    "usage falling": stream(start(), usage(1, 3, 5), usage(2, 3, 4), end(3)),
    "no usage": stream(start(), delta(1, "a"), stop(2), end(3)),
    "a block left open": stream(start(), delta(1, "a"), usage(2), end(3)),
    "a block left open after an error": stream(
        start(), delta(1, "a"), {"v": "1.0", "seq": 2, "type": "error", "code": "overloaded",
                                 "message": "m"}, usage(3), end(4)),
    "an event after stream.end": stream(start(), usage(1), end(2), usage(3)),
    "a second stream.start": stream(start(), start(1), usage(2), end(3)),
    "a tool call id used twice": stream(
        start(), call(1, "get_weather"), stop(2, reason="tool_use"),
        call(3, "get_weather", index=1), stop(4, 1, "tool_use"), usage(5), end(6)),
    "an undeclared tool": stream(
        start(), call(1, "other"), stop(2, reason="tool_use"), usage(3), end(4)),
    "arguments that are not JSON": stream(
        start(), {**call(1, "get_weather"), "arguments": "{"}, stop(2, reason="tool_use"),
        usage(3), end(4)),
    "arguments nested deeper than pydantic-core reads": stream(
        start(), {**call(1, "get_weather"), "arguments": "[" * 300 + "]" * 300},
        stop(2, reason="tool_use"), usage(3), end(4)),
    "a null vendor_stop_reason": stream(
        start(), delta(1, "null"), {**stop(2), "vendor_stop_reason": None}, usage(3), end(4)),
    "a request_id not echoed": stream(start(request_id="r2"), usage(1), end(2)),
    "an event: line naming another type": stream(start(), delta(1, "a"))
    + sse("content.delta", stop(2)) + stream(usage(3), end(4)),
    "another version": stream(start(), {**usage(1), "v": "2.0"}, end(2)),
    "a seq that starts below zero": stream(
        {**start(), "seq": -2}, {**delta(0, "a"), "seq": -1}, {**stop(0), "seq": 0}, usage(1),
        end(2)),
}


@pytest.mark.parametrize("body", ONE_RULE_BROKEN.values(), ids=list(ONE_RULE_BROKEN))
def test_the_quick_path_leaves_every_broken_rule_to_the_general_path(body: bytes) -> None:
    """One rule broken, in every mode, whole and one event a chunk: the events and the
    diagnostics of checking every event in full."""
    for options in ({"tools": ["get_weather"], "request_metadata": {"request_id": "r1"}},
                    {"typed": False, "tools": ["get_weather"]},
                    {"typed": False, "validate": False}, {"strict": True}):
        general = feed_cut(body, [], general=True, **options)
        for cuts in ([], event_ends(body)):
            events, found = feed_cut(body, cuts, **options)
            assert normal(events) == normal(general[0]) and found == general[1]


@pytest.mark.parametrize("size", [10, 4096, 4097, 9000])
def test_fragments_are_compared_as_text_while_short_and_hashed_beyond(size: int) -> None:
    """A block's fragments are kept as text up to `_JOIN_KEPT` characters, then hashed: either
    way, they add up to the text they join to and to no other."""
    from llm_stream import lifecycle
    from llm_stream.decoder import _JOIN_KEPT, _Joining

    assert 10 < _JOIN_KEPT < 9000
    whole = "\u00e9" * size
    for cut in (0, size // 2, size):
        joining = _Joining("tool.call.delta", lifecycle.FRAGMENTS["tool.call.delta"], {})
        joining.add(whole[:cut])
        joining.add(whole[cut:])
        assert joining.adds_up_to(whole)
        assert not joining.adds_up_to(whole[:-1] + "e")
        assert not joining.adds_up_to(whole + "e")
        joining.add(None)  # a fragment that is no string: the join is unknowable
        assert joining.adds_up_to("anything")


def written(obj: dict[str, Any], member: str) -> str:
    """The text of an event with one member more written at its end, as JSON text has it."""
    return json.dumps(obj, separators=(",", ":"))[:-1] + "," + member + "}"


TEXT_ONLY_FAULTS = {  # (the text of the event at seq 2, the rule it breaks)
    "a stop_reason written twice": (
        "content.stop", written(stop(2), '"stop_reason":"end_turn"'), "LS-SSE-6"),
    "an index written twice": ("content.stop", written(stop(2), '"index":0'), "LS-SSE-6"),
    "output_tokens written twice": ("usage", written(usage(2), '"output_tokens":1'), "LS-SSE-6"),
    "arguments written twice": (
        "tool.call.delta", written(fragment(2, "}"), '"arguments":"}"'), "LS-SSE-6"),
    "a type written twice": ("stream.end", written(end(2), '"type":"stream.end"'), "LS-SSE-6"),
    "a NaN in a vendor member": ("usage", written(usage(2), '"vendor:x":NaN'), "LS-SSE-2"),
    "a null optional member": (
        "content.stop", written(stop(2), '"vendor_stop_reason":null'), "LS-STOP-1"),
}


@pytest.mark.parametrize("fault", TEXT_ONLY_FAULTS.values(), ids=list(TEXT_ONLY_FAULTS))
def test_what_only_the_text_shows_is_left_to_the_general_path(
    fault: tuple[str, str, str]
) -> None:
    """An event of a type with optional members whose text holds just as many colons as the
    members its required fields make, and another that the object parsed from it does not
    show (a name written twice, a NaN, a null), is trusted on no path."""
    kind, data, rule = fault
    opened = {"content.stop": [delta(1, "a")], "usage": [usage(1)],
              "tool.call.delta": [fragment(1, "{", **FIRST_FRAGMENT)], "stream.end": [usage(1)]}
    body = stream(start(), *opened[kind]) + sse(kind, data)
    for options in ({}, {"typed": False}, {"typed": False, "validate": False}):
        general = feed_cut(body, [], general=True, **options)
        schema = rule.startswith("LS-SSE") or options.get("validate", True)  # else unchecked
        assert (rule in [d.rule for d in general[1]]) == schema
        for cuts in ([], event_ends(body)):
            events, found = feed_cut(body, cuts, **options)
            assert normal(events) == normal(general[0]) and found == general[1]


STREAM_EXAMPLES = [entry for entry in MANIFEST if entry["kind"] == "stream"]


@pytest.mark.parametrize("entry", STREAM_EXAMPLES, ids=lambda entry: entry["file"])
def test_every_example_decodes_alike_on_every_path_and_in_every_chunking(
    entry: dict[str, Any]
) -> None:
    """The spec's examples, fed whole and one event a chunk, in each mode, against the decoder
    kept off its hot paths: the order checks within a block (reasoning, tool call fragments)
    included."""
    body = (EXAMPLES / entry["file"]).read_bytes()
    given = _options(entry)
    for options in ({}, {"typed": False}, {"typed": False, "validate": False}):
        general = feed_cut(body, [], general=True, **given, **options)
        for cuts in ([], event_ends(body)):
            events, found = feed_cut(body, cuts, **given, **options)
            assert normal(events) == normal(general[0]) and found == general[1]


def test_the_hot_paths_check_the_envelope_to_the_end_of_seq() -> None:
    """seq may not pass its largest value, even in the middle of a block."""
    last = 9007199254740991
    body = stream(start(), delta(last - 2, "a"), delta(last - 1, "b"), delta(last, "c"),
                  delta(last + 1, "d"), delta(last + 2, "e"), stop(last + 3), end(last + 4))
    for typed in (True, False):
        for cuts in ([], event_ends(body)):
            events, found = feed_cut(body, cuts, typed=typed, validate=typed)
            general = feed_cut(body, cuts, general=True, typed=typed, validate=typed)
            assert normal(events) == normal(general[0]) and found == general[1]
            assert [d.rule for d in found if d.rule == "LS-SEC-6"] == ["LS-SEC-6"] * 4


# -- resources: memory stays bounded, and no work is quadratic -------------------------------


def long_stream(events: int, per_chunk: int = 512) -> Iterator[bytes]:
    """A conforming stream of about `events` events, generated lazily in chunks."""
    yield sse("stream.start", start())
    seq = 1
    template = 'event: content.delta\ndata: {"v":"1.0","seq":%d,"type":"content.delta",' \
        '"index":0,"role":"assistant","delta":{"text":"tok "}}\n\n'
    while seq < events - 3:
        n = min(per_chunk, events - 3 - seq)
        yield "".join(template % s for s in range(seq, seq + n)).encode()
        seq += n
    yield stream(stop(seq), usage(seq + 1), end(seq + 2))


LONG_STREAM = 2_000_000 if os.environ.get("LLM_STREAM_SLOW") else 100_000
"""2 million events take minutes under tracemalloc; the default run checks 100 000 for growth."""


def test_memory_stays_bounded_on_a_long_stream() -> None:
    decoder = Decoder(typed=False)
    count = 0
    early: int | None = None
    tracemalloc.start()
    try:
        for chunk in long_stream(LONG_STREAM):
            count += len(decoder.feed(chunk))
            if early is None and count >= 20_000:  # from here, what is held per event shows
                early = tracemalloc.get_traced_memory()[0]
        count += len(decoder.close())
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert decoder.diagnostics == []
    assert count == LONG_STREAM
    assert peak < 1 << 20, f"peak {peak} bytes"
    assert early is not None
    assert held - early < 64 << 10, f"{held - early} bytes more held after {count} events"


def test_a_huge_line_is_bounded_by_the_limit() -> None:
    decoder = Decoder(typed=False, max_line_bytes=1 << 20)
    chunk = b"x" * (1 << 16)
    tracemalloc.start()
    try:
        decoder.feed(b"data: ")
        for _ in range(256):  # 16 MiB on one line
            decoder.feed(chunk)
        decoder.feed(b"\n\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    decoder.close()
    assert [d.rule for d in decoder.diagnostics][:1] == ["LS-LIMIT-1"]
    assert peak < 3 << 20, f"peak {peak} bytes"


def _feed_time(pieces: list[bytes], **options: Any) -> float:
    best = float("inf")
    for _ in range(3):
        decoder = Decoder(typed=False, lifecycle=False, **options)
        began = time.perf_counter()
        events = [e for piece in pieces for e in decoder.feed(piece)]
        events.extend(decoder.close())
        best = min(best, time.perf_counter() - began)
        assert len(events) == 1 and decoder.diagnostics == []
    return best


def test_an_8_mb_line_in_small_chunks_costs_what_it_costs_whole() -> None:
    body = sse("content.delta", delta(0, "w" * (8 << 20)))
    limits = {"max_line_bytes": 16 << 20, "max_event_bytes": 16 << 20}
    whole = _feed_time([body], **limits)
    kib = _feed_time([body[i : i + 1024] for i in range(0, len(body), 1024)], **limits)
    # Quadratic joining would copy ~32 GiB here, thousands of times the whole-body cost.
    # 8192 feed calls cost something of their own, hence the generous factor.
    assert kib < 25 * whole, (kib, whole)


def test_strict_mode_keeps_the_events_decoded_before_the_error() -> None:
    body = (EXAMPLES / "complete" / "complete-example.sse").read_bytes()
    broken = body.replace(b'"seq":5', b'"seq":50')
    decoder = Decoder(strict=True)
    with pytest.raises(LLMStreamError) as raised:
        decoder.feed(broken)
    assert raised.value.diagnostic.rule == "LS-SEQ-2"
    assert [event.seq for event in raised.value.events] == [0, 1, 2, 3, 4]


def test_every_state_of_the_decoder_is_weighed_by_the_quick_path() -> None:
    """The quick path (`decoder._QUICK`) checks what the general path checks and changes what
    it changes, all in one place; state added to the decoder must be weighed there (read if a
    check reads it, changed as the general path changes it), or the quick path would skip it."""
    weighed = {
        # configuration
        "typed", "_typed", "strict", "tools", "request_metadata", "lifecycle", "_validates",
        "_is_valid", "_errors", "_sse", "_max_blocks", "_kinds",
        # a guess at the type of the next chunk, which only chooses how it is cut out
        "_hot",
        # the record of a closed block kept for reuse, which no check reads (`_Block.reset`)
        "_spare",
        # what the general path reads or changes, and so the quick path too
        "diagnostics", "_state", "_first", "_expected_seq", "_last_line", "_pending", "_blocks",
        "_counts", "_seen", "_last_value", "_steady", "_failed", "_closed", "_placed",
        "_end_rejected",
    }
    # compiled (mypyc), a class declares its attributes as __mypyc_attrs__, not __slots__
    assert set(getattr(Decoder, "__mypyc_attrs__", None) or Decoder.__slots__) == weighed
    # and what the decoder remembers of each block (`_blocks`), which it reads and changes too
    from llm_stream.decoder import _Block

    attributes = getattr(_Block, "__mypyc_attrs__", None) or vars(_Block("open"))
    assert set(attributes) - {"__dict__"} == {
        "state", "kind", "counted", "count", "counts", "closes_with", "completed", "joining",
        "built"}


def test_a_reused_block_record_remembers_nothing_of_its_last_block() -> None:
    """The quick path reuses the record of the block it closed last for the next it opens
    (`decoder._Block`): once reset, it must be a fresh block's, whatever it held."""
    from llm_stream import lifecycle
    from llm_stream.decoder import _Block, _Joining

    attributes = ["state", "kind", "counted", "count", "counts", "closes_with", "completed",
                  "joining", "built"]
    used = _Block("closed")
    used.kind, used.completed = "tool-call", "reasoning.signature"
    used.hold("tool.call", 1)
    used.hold("reasoning.signature", 1)
    used.closes_with = ("tool.call", "tool_use")
    used.joining = _Joining("tool.call.delta", lifecycle.FRAGMENTS["tool.call.delta"], {})
    used.built = True
    assert all(getattr(used, name) != getattr(_Block("open"), name) for name in attributes)
    used.reset("open")
    assert [getattr(used, name) for name in attributes] == [
        getattr(_Block("open"), name) for name in attributes]
    assert used.held("tool.call") == used.held("reasoning.signature") == 0


def test_every_per_type_table_of_the_lifecycle_is_weighed_for_the_hot_paths() -> None:
    """An event continues a block on the hot paths only when its type has none of the
    lifecycle's per-type constraints (`decoder._STEADY_KINDS`); a table added to lifecycle.py
    must be weighed there, or the hot paths would skip what it checks, and in the quick path's
    plan of each type (`decoder._Plan`), which reads every one of them."""
    from llm_stream import lifecycle

    tables = {
        name for name, value in vars(lifecycle).items()
        if name.isupper() and isinstance(value, dict) and value
        and set(value) <= set(lifecycle.PLACES)
    }
    weighed = {"PLACES", "BLOCK_KINDS", "PER_BLOCK", "CLOSES_WITH", "EXPECTED", "FIELD_CHECKS",
               "COMPLETES_BLOCK", "FRAGMENTS",
               "INTEGER_MEMBERS"}  # the hot paths take seq and index as ints only
    assert tables == weighed
    from llm_stream.decoder import _STEADY_KINDS

    for kind in _STEADY_KINDS:  # an integral float anywhere else would pass them unconverted
        assert set(lifecycle.INTEGER_MEMBERS[kind]) <= {"index", "seq"}, kind
    for name in weighed - {"PLACES", "BLOCK_KINDS", "INTEGER_MEMBERS"}:
        assert not _STEADY_KINDS & set(getattr(lifecycle, name)), name


def test_every_registered_event_type_has_a_quick_path_of_its_own() -> None:
    """Each registered type gets its quick path from its plan at import (`decoder._QUICK`);
    a field check or block place the quick path does not know would leave every event of
    that type to the general path, unnoticed but for its speed."""
    from llm_stream import lifecycle
    from llm_stream.decoder import _QUICK, _never

    assert set(_QUICK) == set(lifecycle.PLACES)
    assert [kind for kind, quick in _QUICK.items() if quick is _never] == []
