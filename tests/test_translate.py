"""The stream translators against what users of gateways hit: each case of the translation issue
is a test here, and every vendor stream of spec/examples/vendor translates the same in any
chunking into the LLM-Stream body beside it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from translate_helpers import (
    CREATED,
    check,
    encode,
    errors,
    event_cuts,
    named,
    sse,
    translate,
    types,
)

from llm_stream import aggregate
from llm_stream.translate import FORMATS, encode_events, gemini_call_id, stream_translator
from llm_stream_codegen.load import load

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
VENDOR_EXAMPLES = [e for e in load(ROOT).examples if e.translation is not None]

CHAT = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741570283,
        "model": "gpt-4o"}


def chat(*choices: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**CHAT, "choices": list(choices), **extra}


def delta(index: int = 0, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"index": index, "delta": fields, "finish_reason": finish}


def gemini(*parts: dict[str, Any], finish: str | None = None, index: int = 0,
           **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"},
                                 "index": index}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash",
            "responseId": "resp-1", **extra}


def stop_reasons(events: list[dict[str, Any]]) -> set[str]:
    return {e["stop_reason"] for e in events if e["type"] == "content.stop"}


# -- the recorded vendor streams --------------------------------------------------------------


def test_every_format_has_recorded_streams() -> None:
    assert {e.translation["format"] for e in VENDOR_EXAMPLES if e.translation} == set(FORMATS)


@pytest.mark.parametrize("example", VENDOR_EXAMPLES, ids=lambda e: e.file)
def test_a_recorded_stream_translates_the_same_in_every_chunking(example: Any) -> None:
    assert example.translation is not None
    fmt = example.translation["format"]
    body = (EXAMPLES / example.file).read_bytes()
    expected = (EXAMPLES / example.translation["into"]).read_bytes()
    whole, diagnostics = translate(fmt, body)
    assert encode(whole) == expected == encode_events(whole)
    assert errors(check(whole)) == []
    generator = random.Random(example.file)
    for size in (1, 2, 3, 7):
        cuts = range(size, len(body), size)
        assert translate(fmt, body, cuts) == (whole, diagnostics)
    for _ in range(20):
        cuts = generator.sample(range(1, len(body)), k=min(12, len(body) - 1))
        assert translate(fmt, body, cuts) == (whole, diagnostics)


@pytest.mark.parametrize("example", VENDOR_EXAMPLES, ids=lambda e: e.file)
def test_one_event_per_chunk_and_the_encoded_output_give_the_same_stream(example: Any) -> None:
    """A chunk that is one whole event is taken from its bytes (the fast path): the events, the
    diagnostics and their lines are those of the general path, and `feed_encoded` writes the
    bytes `encode_events` writes."""
    assert example.translation is not None
    fmt = example.translation["format"]
    body = (EXAMPLES / example.file).read_bytes()
    expected = translate(fmt, body, range(1, len(body)))
    assert translate(fmt, body, event_cuts(body)) == expected
    translator = stream_translator(fmt, created=CREATED)
    start, encoded = 0, b""
    for cut in [*event_cuts(body), len(body)]:
        encoded += translator.feed_encoded(body[start:cut])
        start = cut
    encoded += translator.close_encoded()
    assert encoded == encode_events(expected[0]) == encode(expected[0])
    assert translator.diagnostics == expected[1]


@pytest.mark.parametrize("fmt, chunk", [
    ("openai-chat", b'data: {"choices": [{"index": 0, "delta": {"content": "\xff"}}]}\n\n'),
    ("openai-chat", b'data: {"choices": [{"index": 0, "delta": {"content": "\\ud800"}}]}\n\n'),
    ("openai-chat", b"data: [1, 2]\n\n"),
    ("openai-chat", b"data: [DONE]\n\n"),
    ("gemini", b'data: {"candidates": [}\n\n'),
    ("anthropic", b"event: ping\ndata: not json\n\n"),
    ("anthropic", b'event: message_start\ndata: {"message": \xff}\n\n'),
    ("openai-responses", b"event: response.created\ndata: NaN\n\n"),
    ("openai-responses", b'event: \xff\ndata: {"type": "response.created"}\n\n'),
])
def test_a_whole_event_chunk_the_fast_path_refuses_reads_as_the_general_path(
        fmt: str, chunk: bytes) -> None:
    """Bad bytes in a chunk of the usual shape (not UTF-8, not JSON, no object) end or skip as
    they do in any other chunking, diagnostics and lines alike."""
    lead = {"openai-chat": sse(chat(delta(content="a"))),
            "gemini": sse(gemini({"text": "a"})),
            "anthropic": named(("message_start", {"type": "message_start",
                                                  "message": {"model": "m"}})),
            "openai-responses": named(("response.created", {"type": "response.created",
                                                            "response": {"model": "m"}}))}[fmt]
    body = lead + chunk + lead
    cuts = [len(lead), len(lead) + len(chunk)]
    assert translate(fmt, body, cuts) == translate(fmt, body, range(1, len(body)))


# -- tool calls -----------------------------------------------------------------------------


def test_interleaved_fragments_of_parallel_calls_add_up_to_each_call() -> None:
    body = (EXAMPLES / "vendor/openai-chat/parallel-tool-calls.sse").read_bytes()
    events, _ = translate("openai-chat", body)
    calls = aggregate(events).tool_calls
    assert [(c.id, c.parsed) for c in calls] == [
        ("call_vienna", {"city": "Vienna"}), ("call_graz", {"city": "Graz"})]
    deltas = [e["index"] for e in events if e["type"] == "tool.call.delta"]
    assert deltas == [0, 1, 0, 1]


def test_responses_argument_deltas_name_the_item_and_the_call_keeps_its_call_id() -> None:
    body = (EXAMPLES / "vendor/openai-responses/function-calls.sse").read_bytes()
    events, diagnostics = translate("openai-responses", body)
    assert [(c.id, c.arguments) for c in aggregate(events).tool_calls] == [
        ("call_vienna", '{"city":"Vienna"}'), ("call_graz", '{"city":"Graz"}')]
    assert diagnostics == []


def test_arguments_only_in_the_done_event_make_one_whole_tool_call() -> None:
    body = named(
        ("response.created", {"type": "response.created",
                              "response": {"model": "o4-mini", "created_at": 1}}),
        ("response.output_item.added", {"item": {"type": "function_call", "id": "fc_1",
                                                 "call_id": "call_1", "name": "f"}}),
        ("response.function_call_arguments.done", {"item_id": "fc_1", "arguments": '{"a":1}'}),
        ("response.completed", {"response": {"status": "completed"}}),
    )
    events, _ = translate("openai-responses", body)
    assert types(events) == ["stream.start", "tool.call", "content.stop", "stream.end"]
    assert events[1]["arguments"] == '{"a":1}'


def test_gemini_calls_without_id_get_a_stable_id_apart_per_response() -> None:
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Vienna"}}}
    first, _ = translate("gemini", sse(gemini(call, call, finish="STOP")))
    again, _ = translate("gemini", sse(gemini(call, call, finish="STOP")))
    other, _ = translate("gemini", sse(gemini(call, finish="STOP", responseId="resp-2")))
    ids = [e["id"] for e in first if e["type"] == "tool.call"]
    assert ids == [e["id"] for e in again if e["type"] == "tool.call"]
    assert len(set(ids)) == 2
    assert ids[0] == gemini_call_id("resp-1", 0, "get_weather", '{"city":"Vienna"}')
    assert ids[0] not in [e["id"] for e in other if e["type"] == "tool.call"]
    given = {"functionCall": {"id": "abc", "name": "f", "args": {}}}
    events, _ = translate("gemini", sse(gemini(given, finish="STOP")))
    assert [e["id"] for e in events if e["type"] == "tool.call"] == ["abc"]


@pytest.mark.parametrize("fmt, body", [
    ("gemini", sse(gemini({"functionCall": {"name": "f", "args": {}}}, finish="STOP"))),
    ("openai-chat", sse(
        chat(delta(tool_calls=[{"index": 0, "id": "c1", "type": "function",
                                "function": {"name": "f", "arguments": "{}"}}])),
        chat(delta(finish="stop")), "[DONE]")),
    ("anthropic", named(
        ("message_start", {"message": {"model": "claude", "usage": {}}}),
        ("content_block_start", {"index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}}),
        ("message_stop", {}))),
])
def test_a_turn_that_ends_in_tool_calls_ends_with_tool_use(fmt: str, body: bytes) -> None:
    events, _ = translate(fmt, body)
    assert stop_reasons(events) == {"tool_use"}
    assert errors(check(events)) == []
    stop = next(e for e in events if e["type"] == "content.stop")
    assert stop["vendor_stop_reason"] in ("STOP", "stop", "end_turn")


def test_tool_arguments_cut_at_max_tokens_stay_fragments() -> None:
    body = sse(chat(delta(tool_calls=[{"index": 0, "id": "c1", "type": "function",
                                       "function": {"name": "f", "arguments": '{"ci'}}])),
               chat(delta(finish="length")), "[DONE]")
    events, _ = translate("openai-chat", body)
    assert "tool.call" not in types(events)
    assert stop_reasons(events) == {"max_tokens"}
    assert errors(check(events)) == []


# -- choices --------------------------------------------------------------------------------


def _two_choices() -> bytes:
    return sse(chat(delta(0, content="Vienna"), delta(1, content="Graz")),
               chat(delta(0, finish="stop"), delta(1, finish="stop")), "[DONE]")


def test_a_second_choice_is_refused_rather_than_merged() -> None:
    events, diagnostics = translate("openai-chat", _two_choices())
    assert aggregate(events).output_text == "Vienna"
    assert aggregate(events).error is not None
    assert types(events)[-2:] == ["error", "stream.end"]
    assert [d.rule for d in diagnostics] == ["vendor-refused"]
    assert errors(check(events)) == []


def test_each_choice_is_kept_apart_when_asked_for() -> None:
    for choice, text in ((0, "Vienna"), (1, "Graz")):
        events, diagnostics = translate("openai-chat", _two_choices(), choice=choice)
        assert aggregate(events).output_text == text
        assert diagnostics == [] and errors(check(events)) == []
    with pytest.raises(ValueError, match="choice is for openai-chat and gemini"):
        stream_translator("anthropic", choice=1)


def test_a_second_gemini_candidate_is_refused() -> None:
    body = sse({"candidates": [
        {"content": {"parts": [{"text": "a"}]}, "index": 0},
        {"content": {"parts": [{"text": "b"}]}, "index": 1}]})
    events, diagnostics = translate("gemini", body)
    assert aggregate(events).output_text == "a"
    assert [d.rule for d in diagnostics] == ["vendor-refused"]


# -- usage ----------------------------------------------------------------------------------


def test_counts_not_reported_stay_absent() -> None:
    events, _ = translate("openai-chat", sse(chat(delta(content="hi", finish="stop")),
                                             "[DONE]"))
    assert "usage" not in types(events)
    partial = {"promptTokenCount": 7, "totalTokenCount": 7}
    events, _ = translate("gemini", sse(gemini({"text": "hi"}, finish="STOP",
                                               usageMetadata=partial)))
    assert "usage" not in types(events)
    events, _ = translate("openai-chat", sse(
        chat(delta(content="hi", finish="stop")),
        chat(usage={"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}), "[DONE]"))
    (usage,) = (e for e in events if e["type"] == "usage")
    assert set(usage) == {"v", "seq", "type", "input_tokens", "output_tokens"}


def test_counts_written_as_integral_numbers_are_those_integers() -> None:
    """A vendor count written 3.0 is 3, as in our own streams (decision D-INTEGERS)."""
    events, _ = translate("openai-chat", sse(
        chat(delta(content="hi", finish="stop")),
        chat(usage={"prompt_tokens": 3.0, "completion_tokens": 1e0, "total_tokens": 4}), "[DONE]"))
    (usage,) = (e for e in events if e["type"] == "usage")
    assert (usage["input_tokens"], usage["output_tokens"]) == (3, 1)
    assert type(usage["input_tokens"]) is int


def test_anthropic_usage_totals_replace_never_add_and_keep_cache_counts() -> None:
    body = named(
        ("message_start", {"message": {"model": "claude", "usage": {
            "input_tokens": 10, "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 50, "output_tokens": 1}}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
        ("message_delta", {"delta": {"stop_reason": None}, "usage": {"output_tokens": 5}}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 9, "cache_read_input_tokens": 100}}),
        ("message_stop", {}))
    events, _ = translate("anthropic", body)
    (usage,) = (e for e in events if e["type"] == "usage")
    assert usage["input_tokens"] == 160  # D-USAGE-INPUT: cached reads and writes included
    assert usage["output_tokens"] == 9  # the last total, not 1 + 5 + 9
    assert usage["cached_input_tokens"] == 100
    assert usage["cache_creation_input_tokens"] == 50


def test_gemini_usage_metadata_totals_replace() -> None:
    body = sse(gemini({"text": "a"}, usageMetadata={"promptTokenCount": 4,
                                                    "candidatesTokenCount": 1}),
               gemini({"text": "b"}, finish="STOP", usageMetadata={
                   "promptTokenCount": 4, "candidatesTokenCount": 2,
                   "cachedContentTokenCount": 3}))
    events, _ = translate("gemini", body)
    (usage,) = (e for e in events if e["type"] == "usage")
    assert (usage["input_tokens"], usage["output_tokens"], usage["cached_input_tokens"]) == (
        4, 2, 3)


def test_the_openai_usage_chunk_has_no_choices_and_is_read() -> None:
    body = (EXAMPLES / "vendor/openai-chat/text.sse").read_bytes()
    events, _ = translate("openai-chat", body)
    assert aggregate(events).usage is not None
    assert aggregate(events).usage.cached_input_tokens == 1024  # type: ignore[union-attr]


# -- reasoning ------------------------------------------------------------------------------


def test_anthropic_thinking_signature_and_redacted_thinking_survive() -> None:
    body = (EXAMPLES / "vendor/anthropic/thinking-tool-use.sse").read_bytes()
    result = aggregate(translate("anthropic", body)[0])
    assert result.reasoning == {0: "The user wants the weather in Vienna; get_weather answers "
                                   "that."}
    assert result.reasoning_signatures[0].startswith("EqQB")
    body = (EXAMPLES / "vendor/anthropic/redacted-thinking.sse").read_bytes()
    result = aggregate(translate("anthropic", body)[0])
    assert result.reasoning == {} and result.reasoning_signatures[0].startswith("EmwK")


def test_gemini_thought_signature_goes_just_before_its_part() -> None:
    body = sse(gemini({"text": "plan", "thought": True, "thoughtSignature": "sig-1"}),
               gemini({"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "sig-2"},
                      finish="STOP"))
    events, _ = translate("gemini", body)
    kinds = [(e["type"], e.get("index")) for e in events
             if e["type"] in ("reasoning.delta", "reasoning.signature", "tool.call")]
    assert kinds == [("reasoning.delta", 0), ("reasoning.signature", 0),
                     ("reasoning.signature", 1), ("tool.call", 2)]
    assert errors(check(events)) == []


def test_responses_summary_and_encrypted_content_survive() -> None:
    body = (EXAMPLES / "vendor/openai-responses/reasoning-and-text.sse").read_bytes()
    result = aggregate(translate("openai-responses", body)[0])
    assert result.reasoning == {0: "**Checking the forecast** for Vienna."}
    assert result.reasoning_signatures == {0: "gAAAAABoISQ24OyVRYbkYfukuAQqA2X9i8Q"}
    assert result.output_text == "Vienna: 24°C and sunny."


# -- errors and cuts ------------------------------------------------------------------------


@pytest.mark.parametrize("name, code, vendor_code", [
    ("openai-chat/error-mid-stream", "rate_limited", "rate_limit_exceeded"),
    ("openai-responses/failed", "internal_error", "server_error"),
    ("anthropic/error", "overloaded", "overloaded_error"),
    ("gemini/error", "overloaded", "UNAVAILABLE"),
])
def test_a_mid_stream_vendor_error_becomes_error_then_stream_end(
        name: str, code: str, vendor_code: str) -> None:
    fmt = name.split("/")[0]
    events, diagnostics = translate(fmt, (EXAMPLES / f"vendor/{name}.sse").read_bytes())
    error = next(e for e in events if e["type"] == "error")
    assert (error["code"], error["vendor_code"]) == (code, vendor_code)
    assert types(events)[-1] == "stream.end"
    assert "content.stop" not in types(events)
    assert [d.rule for d in diagnostics] == ["vendor-error"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cut_stream_ends_with_truncated_never_a_clean_finish(fmt: str) -> None:
    events, diagnostics = translate(fmt, (EXAMPLES / f"vendor/{fmt}/cut.sse").read_bytes()
                                    if (EXAMPLES / f"vendor/{fmt}/cut.sse").exists()
                                    else b"event: response.created\ndata: {}\n\n")
    assert [e["code"] for e in events if e["type"] == "error"] == ["truncated"]
    assert types(events)[-1] == "stream.end"
    assert [d.rule for d in diagnostics] == ["vendor-cut"]
    assert errors(check(events)) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_body_is_a_cut_stream_that_still_conforms(fmt: str) -> None:
    events, diagnostics = translate(fmt, b"")
    assert types(events) == ["stream.start", "error", "stream.end"]
    assert errors(check(events)) == []
    assert [d.rule for d in diagnostics] == ["vendor-cut"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_data_that_is_not_json_ends_the_stream_with_an_error(fmt: str) -> None:
    events, diagnostics = translate(fmt, b"event: message_start\ndata: {not json\n\n")
    assert types(events) == ["stream.start", "error", "stream.end"]
    assert diagnostics[0].rule == "vendor-not-json" and diagnostics[0].line == 1


# -- keep-alives, the vendor's own values, bytes ---------------------------------------------


def test_pings_and_comments_are_no_events() -> None:
    plain = named(
        ("message_start", {"message": {"model": "claude", "usage": {}}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": "a"}}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}}),
        ("message_stop", {}))
    parts = plain.split(b"\n\n")
    noisy = b"\n\n".join(p + b"\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n: keep-alive"
                         for p in parts[:-1]) + b"\n\n"
    assert translate("anthropic", noisy) == translate("anthropic", plain)
    chat_body = sse(chat(delta(content="a", finish="stop")), "[DONE]")
    assert translate("openai-chat", b": OPENROUTER PROCESSING\n\n" + chat_body) == translate(
        "openai-chat", chat_body)


def test_the_vendors_own_stop_reason_is_kept_beside_the_mapped_one() -> None:
    body = sse(gemini({"text": "a"}, finish="RECITATION"))
    events, _ = translate("gemini", body)
    stop = next(e for e in events if e["type"] == "content.stop")
    assert (stop["stop_reason"], stop["vendor_stop_reason"]) == ("content_filter", "RECITATION")
    events, _ = translate("gemini", sse(gemini({"text": "a"}, finish="SOMETHING_NEW")))
    stop = next(e for e in events if e["type"] == "content.stop")
    assert (stop["stop_reason"], stop["vendor_stop_reason"]) == ("end_turn", "SOMETHING_NEW")


def test_text_split_inside_a_utf8_sequence_crlf_and_empty_deltas() -> None:
    body = sse(chat(delta(role="assistant", content="")), chat(delta(content="日本 ☀️")),
               chat(delta(content="")), chat(delta(finish="stop")), "[DONE]", eol="\r\n")
    cut = body.index("本".encode()) + 1  # inside the three bytes of 本
    events, diagnostics = translate("openai-chat", body, [cut, cut + 1])
    assert aggregate(events).output_text == "日本 ☀️"
    assert types(events).count("content.delta") == 1
    assert diagnostics == [] and errors(check(events)) == []


def test_request_id_is_echoed_and_the_vendor_time_kept() -> None:
    events, _ = translate("openai-chat", sse(chat(delta(content="a", finish="stop")), "[DONE]"),
                          request_id="req-1")
    assert events[0]["request_id"] == events[-1]["request_id"] == "req-1"
    assert events[0]["created"] == CHAT["created"]
    events, _ = translate("anthropic", b"")
    assert events[0]["created"] == CREATED


def test_a_complete_call_beside_one_cut_at_max_tokens() -> None:
    body = sse(chat(delta(content="hi")),
               chat(delta(tool_calls=[{"index": 0, "id": "a", "type": "function",
                                       "function": {"name": "f", "arguments": "{}"}}])),
               chat(delta(tool_calls=[{"index": 1, "id": "b", "type": "function",
                                       "function": {"name": "g", "arguments": '{"x'}}])),
               chat(delta(finish="length")), "[DONE]")
    events, _ = translate("openai-chat", body)
    stops = [(e["index"], e["stop_reason"]) for e in events if e["type"] == "content.stop"]
    assert stops == [(0, "tool_use"), (1, "tool_use"), (2, "max_tokens")]
    assert [c.id for c in aggregate(events).tool_calls] == ["a"]
    assert errors(check(events)) == []
