"""Properties of the stream translators: any chunking of a vendor stream gives the same events,
and any valid vendor stream (random turns of text, reasoning and tool calls, rendered in each
vendor's wire format) gives a conforming LLM-Stream stream with the same content."""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from depth import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from translate_helpers import check, errors, event_cuts, named, sse, translate

from llm_stream import aggregate
from llm_stream.translate import FORMATS, VALUE_MAPS
from llm_stream_codegen.load import load

ROOT = Path(__file__).resolve().parent.parent
VENDOR_EXAMPLES = [e for e in load(ROOT).examples if e.translation is not None]
SETTINGS = settings(max_examples=examples(60), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@given(data=st.data())
@SETTINGS
def test_every_chunking_gives_the_same_events(data: st.DataObject) -> None:
    example = data.draw(st.sampled_from(VENDOR_EXAMPLES))
    assert example.translation is not None
    body = (ROOT / "spec/examples" / example.file).read_bytes()
    cuts = data.draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=40))
    fmt = example.translation["format"]
    assert translate(fmt, body, cuts) == translate(fmt, body)


# -- random turns -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    kind: str  # text, reasoning or tool
    text: str = ""
    name: str = ""
    arguments: Any = None


TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
ITEMS = st.one_of(
    st.builds(Item, st.just("text"), TEXT),
    st.builds(Item, st.just("reasoning"), TEXT),
    st.builds(Item, st.just("tool"), name=st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
              arguments=st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True),
                                        st.one_of(st.integers(-9, 99), TEXT), max_size=3)),
)


def pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points) if b > a]


def chat_body(items: list[Item], reason: str, usage: tuple[int, int] | None,
              cuts: list[int]) -> bytes:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out: list[Any] = [chunk({"role": "assistant", "content": ""})]
    calls = 0
    for item in items:
        if item.kind == "tool":
            arguments = json.dumps(item.arguments)
            parts = pieces(arguments, cuts)
            out.append(chunk({"tool_calls": [{"index": calls, "id": f"call_{calls}",
                                              "type": "function", "function": {
                                                  "name": item.name, "arguments": parts[0]}}]}))
            out += [chunk({"tool_calls": [{"index": calls, "function": {"arguments": p}}]})
                    for p in parts[1:]]
            calls += 1
        else:
            field = "content" if item.kind == "text" else "reasoning_content"
            out += [chunk({field: p}) for p in pieces(item.text, cuts)]
    out.append(chunk({}, reason))
    if usage:
        out.append({**head, "choices": [], "usage": {"prompt_tokens": usage[0],
                                                     "completion_tokens": usage[1]}})
    return sse(*out, "[DONE]")


def anthropic_body(items: list[Item], reason: str, usage: tuple[int, int] | None,
                   cuts: list[int]) -> bytes:
    start_usage = {"input_tokens": usage[0], "output_tokens": 1} if usage else {}
    events: list[tuple[str, Any]] = [
        ("message_start", {"type": "message_start", "message": {"model": "claude",
                                                                "usage": start_usage}})]
    for index, item in enumerate(items):
        if item.kind == "tool":
            block = {"type": "tool_use", "id": f"toolu_{index}", "name": item.name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p}
                      for p in pieces(json.dumps(item.arguments), cuts)]
        elif item.kind == "text":
            block = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(item.text, cuts)]
        else:
            block = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(item.text, cuts)]
            deltas.append({"type": "signature_delta", "signature": f"sig{index}"})
        events.append(("content_block_start", {"index": index, "content_block": block}))
        events += [("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"index": index}))
    events.append(("message_delta", {"delta": {"stop_reason": reason},
                                     "usage": {"output_tokens": usage[1]} if usage else {}}))
    events.append(("message_stop", {}))
    return named(*events)


def responses_body(items: list[Item], reason: str, usage: tuple[int, int] | None,
                   cuts: list[int]) -> bytes:
    events: list[tuple[str, Any]] = [
        ("response.created", {"response": {"model": "o4", "created_at": 1}})]
    for n, item in enumerate(items):
        item_id = f"item_{n}"
        if item.kind == "tool":
            events.append(("response.output_item.added", {"item": {
                "type": "function_call", "id": item_id, "call_id": f"call_{n}",
                "name": item.name}}))
            arguments = json.dumps(item.arguments)
            events += [("response.function_call_arguments.delta",
                        {"item_id": item_id, "delta": p}) for p in pieces(arguments, cuts)]
            events.append(("response.output_item.done", {"item": {
                "type": "function_call", "id": item_id, "call_id": f"call_{n}",
                "name": item.name, "arguments": arguments}}))
        elif item.kind == "text":
            events += [("response.output_text.delta",
                        {"item_id": item_id, "content_index": 0, "delta": p})
                       for p in pieces(item.text, cuts)]
        else:
            events += [("response.reasoning_summary_text.delta",
                        {"item_id": item_id, "summary_index": 0, "delta": p})
                       for p in pieces(item.text, cuts)]
            events.append(("response.output_item.done", {"item": {
                "type": "reasoning", "id": item_id, "encrypted_content": f"enc{n}"}}))
    response: dict[str, Any] = {"status": "completed" if reason == "completed" else "incomplete"}
    if reason != "completed":
        response["incomplete_details"] = {"reason": reason}
    if usage:
        response["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
    kind = "response.completed" if reason == "completed" else "response.incomplete"
    events.append((kind, {"response": response}))
    return named(*events)


def gemini_body(items: list[Item], reason: str, usage: tuple[int, int] | None,
                cuts: list[int]) -> bytes:
    chunks: list[list[dict[str, Any]]] = []
    for item in items:
        if item.kind == "tool":
            chunks.append([{"functionCall": {"name": item.name, "args": item.arguments}}])
        else:
            thought = {"thought": True} if item.kind == "reasoning" else {}
            chunks += [[{"text": p, **thought}] for p in pieces(item.text, cuts)]
    chunks = chunks or [[]]
    out = []
    for n, parts in enumerate(chunks):
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "responseId": "r",
                                 "modelVersion": "gemini"}
        if n == len(chunks) - 1:
            candidate["finishReason"] = reason
            if usage:
                chunk["usageMetadata"] = {"promptTokenCount": usage[0],
                                          "candidatesTokenCount": usage[1]}
        out.append(chunk)
    return sse(*out, eol="\r\n")


RENDER = {"openai-chat": chat_body, "anthropic": anthropic_body,
          "openai-responses": responses_body, "gemini": gemini_body}


@given(data=st.data())
@SETTINGS
def test_random_valid_vendor_streams_conform_and_keep_their_content(
        data: st.DataObject) -> None:
    fmt = data.draw(st.sampled_from(FORMATS))
    items = data.draw(st.lists(ITEMS, max_size=6))
    stops = VALUE_MAPS[fmt]["stop-reasons"]
    readable = sorted(stops.from_vendor)
    if fmt == "openai-responses":
        readable = ["completed", "max_output_tokens", "content_filter"]
    reason = data.draw(st.sampled_from(readable))
    usage = data.draw(st.none() | st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)))
    cuts = data.draw(st.lists(st.integers(0, 40), max_size=4))
    body = RENDER[fmt](items, reason, usage, cuts)
    events, diagnostics = translate(fmt, body, data.draw(st.lists(st.integers(1, len(body)))))
    assert translate(fmt, body, event_cuts(body)) == (events, diagnostics)
    assert errors(check(events)) == [], body
    assert [d for d in diagnostics if d.severity == "error"] == []
    result = aggregate(events)
    assert result.output_text == "".join(i.text for i in items if i.kind == "text")
    assert "".join(result.reasoning.values()) == "".join(
        i.text for i in items if i.kind == "reasoning")
    tools = [i for i in items if i.kind == "tool"]
    assert [(c.name, c.parsed) for c in result.tool_calls] == [
        (t.name, t.arguments) for t in tools]
    # the generated arguments are whole, so every call completes: D-TOOL-USE-STOP
    assert result.stop_reason == ("tool_use" if tools else stops.read(reason))
    assert (result.usage is not None) == (usage is not None)
    if usage and result.usage:
        assert (result.usage.input_tokens, result.usage.output_tokens) == usage
