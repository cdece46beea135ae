"""The aggregator on every conforming response body of spec/examples, typed and raw alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from depth import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_stream import Aggregate, Decoder, aggregate
from llm_stream.aggregate import ToolCall, Usage

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"

VIENNA = "The weather in Vienna is 24C and sunny."
START = {"model": "example-model", "created": 1749292800}
REQUEST_ID = "550e8400-..."
COMPLETE = Aggregate(
    **START, request_id=REQUEST_ID, text={0: VIENNA}, stop_reasons={0: "end_turn"},
    usage=Usage(42, 8), ended=True,
)

EXPECTED: dict[str, Aggregate] = {
    "complete/complete-example.sse": COMPLETE,
    "complete/content-delta-events.sse": Aggregate(
        text={0: "The weather in Vienna is currently 24C and sunny."}),
    "complete/stream-start-event.sse": Aggregate(**START, request_id=REQUEST_ID),
    "complete/tool-flow-response-1.sse": Aggregate(
        **START,
        tool_calls=[ToolCall(0, "call_1", "get_weather", '{"city":"Vienna"}', {"city": "Vienna"})],
        stop_reasons={0: "tool_use"}, usage=Usage(64, 18), ended=True,
    ),
    "complete/tool-flow-response-2.sse": Aggregate(
        model="example-model", created=1749292803, text={0: "The weather in Vienna is 24C."},
        stop_reasons={0: "end_turn"}, usage=Usage(97, 9), ended=True,
    ),
    "valid-extra/complete-example-crlf.sse": COMPLETE,
    "valid-extra/error-then-stream-end.sse": Aggregate(
        **START, text={0: "The weather in Vienna"}, usage=Usage(42, 3), ended=True,
        error=("overloaded", "The endpoint is over capacity; retry later."),
    ),
    "valid-extra/text-then-tool-call.sse": Aggregate(
        **START, text={0: "Let me look up the weather in Vienna."},
        tool_calls=[ToolCall(1, "call_1", "get_weather", '{"city":"Vienna"}', {"city": "Vienna"})],
        stop_reasons={0: "tool_use", 1: "tool_use"}, usage=Usage(64, 27), ended=True,
    ),
    "valid-extra/reasoning-then-text.sse": Aggregate(
        **START,
        reasoning={0: "The user asks for the weather in Vienna. I have no live data, so I "
                      "should say so."},
        reasoning_signatures={0: "EqQBCkgIBhABGAIiQGxsbS1zdHJlYW0gZXhhbXBsZSBzaWduYXR1cmUsIG5vdCBh"
                                 "IHJlYWwgb25l"},
        text={1: "I cannot look up live weather without a weather tool."},
        stop_reasons={0: "end_turn", 1: "end_turn"}, usage=Usage(31, 42, reasoning_tokens=25),
        ended=True,
    ),
    "valid-extra/reasoning-redacted.sse": Aggregate(
        **START,
        reasoning_signatures={0: "RW5jcnlwdGVkIHJlYXNvbmluZywga2VwdCBieSB0aGUgZW5kcG9pbnQ="},
        text={1: "Here is the answer."}, stop_reasons={0: "end_turn", 1: "end_turn"},
        usage=Usage(12, 30, reasoning_tokens=22), ended=True,
    ),
    "valid-extra/unknown-fields.sse": COMPLETE,
    "valid-extra/unregistered-event-type.sse": COMPLETE,
    "valid-extra/usage-running-totals.sse": COMPLETE,
}


def events(name: str, *, typed: bool) -> list[Any]:
    decoder = Decoder(typed=typed, lifecycle=name not in {
        "complete/content-delta-events.sse", "complete/stream-start-event.sse"})
    found = decoder.feed((EXAMPLES / name).read_bytes()) + decoder.close()
    assert decoder.conforming, decoder.diagnostics
    return found


BODIES = sorted(str(p.relative_to(EXAMPLES)) for folder in ("complete", "valid-extra")
                for p in (EXAMPLES / folder).glob("*.sse"))


def test_the_expected_results_name_existing_bodies() -> None:
    assert set(EXPECTED) <= set(BODIES)


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "raw"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_aggregate_of_each_example(name: str, typed: bool) -> None:
    result = aggregate(events(name, typed=typed))
    assert result == EXPECTED[name]


@pytest.mark.parametrize("name", BODIES)
def test_typed_and_raw_events_aggregate_alike(name: str) -> None:
    """Every conforming body, those added after this table too."""
    typed = aggregate(events(name, typed=True))
    assert typed == aggregate(events(name, typed=False))


def test_derived_values() -> None:
    result = aggregate(events("valid-extra/text-then-tool-call.sse", typed=True))
    assert result.output_text == "Let me look up the weather in Vienna."
    assert result.stop_reason == "tool_use"
    assert result.tool_calls[0].parsed == {"city": "Vienna"}
    empty = aggregate([])
    assert (empty.output_text, empty.stop_reason, empty.usage) == ("", None, None)
    assert not empty.ended


def test_text_is_joined_per_index_in_index_order() -> None:
    def delta(index: int, text: str) -> dict[str, Any]:
        return {"type": "content.delta", "index": index, "delta": {"text": text}}

    result = aggregate([delta(2, "c"), delta(0, "a"), delta(2, "d"), delta(0, "b")])
    assert result.text == {2: "cd", 0: "ab"}
    assert result.output_text == "abcd"


def test_usage_keeps_the_last_running_totals_and_absent_counts_stay_none() -> None:
    result = aggregate([
        {"type": "usage", "input_tokens": 10, "output_tokens": 1, "cached_input_tokens": 4},
        {"type": "usage", "input_tokens": 10, "output_tokens": 5},
    ])
    assert result.usage == Usage(10, 5, None, None)
    typed = aggregate(events("complete/complete-example.sse", typed=True))
    assert typed.usage is not None
    assert (typed.usage.cached_input_tokens, typed.usage.reasoning_tokens) == (None, None)
    assert aggregate([{"type": "stream.end"}]).usage is None


START_EVENT = {"type": "stream.start", **START}


def test_tool_arguments_that_are_not_json_keep_their_text() -> None:
    call = {"type": "tool.call", "index": 0, "id": "c", "name": "f", "arguments": "{'a': 1}"}
    (tool_call,) = aggregate([START_EVENT, call]).tool_calls
    assert (tool_call.arguments, tool_call.parsed) == ("{'a': 1}", None)
    assert aggregate([START_EVENT, {**call, "arguments": None}]).tool_calls == []


def test_a_tool_call_out_of_its_place_is_no_call_to_make() -> None:
    """Before stream.start, after an error or after stream.end (decision D-TOOL-CALL-CHECKS)."""
    call = {"type": "tool.call", "index": 0, "id": "c", "name": "f", "arguments": "{}"}
    error = {"type": "error", "code": "overloaded", "message": "m"}
    end = {"type": "stream.end"}
    assert aggregate([call, START_EVENT]).tool_calls == []
    assert aggregate([START_EVENT, error, call]).tool_calls == []
    assert aggregate([START_EVENT, end, call]).tool_calls == []
    assert len(aggregate([START_EVENT, call, end]).tool_calls) == 1


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=6,
)
MEMBERS = ["index", "delta", "text", "signature", "id", "name", "arguments", "stop_reason",
           "input_tokens", "output_tokens", "cached_input_tokens", "model", "request_id",
           "created", "code", "message"]
HOSTILE_EVENTS = st.builds(
    lambda kind, members: {"type": kind, **members},
    st.sampled_from(["content.delta", "reasoning.delta", "reasoning.signature", "tool.call",
                     "content.stop", "usage", "stream.start", "error", "stream.end", "x"]),
    st.dictionaries(st.sampled_from(MEMBERS), JSON_VALUES | st.fixed_dictionaries(
        {"text": JSON_VALUES}), max_size=6),
)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(HOSTILE_EVENTS | st.sampled_from([START_EVENT]), max_size=8))
def test_aggregate_never_raises_on_any_shape_the_fast_path_returns(events: list[Any]) -> None:
    """`Decoder(typed=False, validate=False)` checks only the envelope, so a hostile server's
    members can be of any type ({"delta": {"text": 5}}, {"index": [0]}); what is of the wrong
    type is left out, and every call listed is one of strings at an integer index."""
    result = aggregate(events)
    assert all(type(text) is str for text in result.text.values())
    for call in result.tool_calls:
        assert type(call.index) is int
        assert all(type(v) is str for v in (call.id, call.name, call.arguments))


def test_the_fast_path_of_a_hostile_server_aggregates() -> None:
    body = b"".join(
        f"event: {e['type']}\ndata: {json.dumps({'v': '1.0', 'seq': seq, **e})}\n\n".encode()
        for seq, e in enumerate([
            START_EVENT,
            {"type": "content.delta", "index": 0, "role": "assistant", "delta": {"text": 5}},
            {"type": "content.delta", "index": 0, "role": "assistant", "delta": {"text": "a"}},
            {"type": "content.stop", "index": [0], "stop_reason": "end_turn"},
            {"type": "stream.end"},
        ]))
    decoder = Decoder(typed=False, validate=False)
    events = decoder.feed(body) + decoder.close()
    assert len(events) == 5
    assert aggregate(events).text == {0: "a"}


def test_events_can_be_added_one_by_one_as_they_arrive() -> None:
    result = Aggregate()
    decoder = Decoder()
    for byte in (EXAMPLES / "complete" / "complete-example.sse").read_bytes():
        for event in decoder.feed(bytes([byte])):
            result.add(event)
    for event in decoder.close():
        result.add(event)
    assert result == COMPLETE
