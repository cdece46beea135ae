"""OpenAIChatWriter: LLM-Stream into Chat Completions chunks that the real `openai` SDK reads
(served from a loopback HTTP server), and back into LLM-Stream with the same text, tool calls,
stop reasons and usage."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest
from translate_helpers import check, errors, translate

from llm_stream import Decoder, aggregate
from llm_stream.translate import OpenAIChatWriter

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
STREAMS = sorted(
    p.relative_to(EXAMPLES).as_posix() for folder in ("complete", "valid-extra", "vendor")
    for p in (EXAMPLES / folder).rglob("*.sse")
    if folder != "vendor" or p.name.endswith("-llm-stream.sse")
)


def events_of(path: str) -> list[dict[str, Any]]:
    decoder = Decoder(typed=False)
    events = decoder.feed((EXAMPLES / path).read_bytes()) + decoder.close()
    return events


def written(events: list[dict[str, Any]], **options: Any) -> bytes:
    writer = OpenAIChatWriter(**options)
    return writer.write(events) + writer.close()


def chunks_of(body: bytes) -> list[Any]:
    return [json.loads(line[6:]) for line in body.split(b"\n\n")
            if line[6:] not in (b"", b"[DONE]")]


@pytest.mark.parametrize("path", STREAMS)
def test_the_round_trip_keeps_text_tool_calls_stop_reasons_and_usage(path: str) -> None:
    events = events_of(path)
    body = written(events)
    assert body.endswith(b"data: [DONE]\n\n")
    back, diagnostics = translate("openai-chat", body)
    assert errors(check(back)) == []
    before, after = aggregate(events), aggregate(back)
    assert after.output_text == before.output_text
    assert [(c.id, c.name, c.arguments) for c in after.tool_calls] == [
        (c.id, c.name, c.arguments) for c in before.tool_calls]
    assert "".join(after.reasoning.values()) == "".join(before.reasoning.values())
    assert list(after.reasoning_signatures.values()) == list(
        before.reasoning_signatures.values())
    assert diagnostics == [] or before.error is not None or not before.ended
    if before.error is None and before.ended:
        lossy = {"stop_sequence": "end_turn"}  # Chat Completions says stop for both
        assert after.stop_reason == lossy.get(before.stop_reason or "", before.stop_reason)
        assert diagnostics == []
    else:
        assert after.error is not None and after.error[0] == (
            before.error[0] if before.error else "truncated")
    if before.usage is not None:
        assert after.usage is not None
        for name in ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens"):
            assert getattr(after.usage, name) == getattr(before.usage, name)
    else:
        assert after.usage is None


def test_the_chunks_have_the_shape_clients_rely_on() -> None:
    events = events_of("vendor/openai-chat/parallel-tool-calls-llm-stream.sse")
    chunks = chunks_of(written(events, completion_id="chatcmpl-9", created=7))
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert {c["id"] for c in chunks} == {"chatcmpl-9"} and {c["created"] for c in chunks} == {7}
    first = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
    assert first == {"index": 0, "id": "call_vienna", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"ci'}}
    later = chunks[3]["choices"][0]["delta"]["tool_calls"][0]
    assert later == {"index": 0, "function": {"arguments": 'ty": "Vienna"}'}}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == {
        "prompt_tokens": 82, "completion_tokens": 36, "total_tokens": 118}


def test_reasoning_goes_in_reasoning_content_and_its_signature_in_reasoning_details() -> None:
    """D-OPENAI-CHAT-REASONING: the text as compatible gateways send it, the continuity data
    as a reasoning.encrypted detail; read back, each signature closes its own block."""
    events = [
        {"type": "stream.start", "model": "m", "created": 1},
        {"type": "reasoning.delta", "index": 0, "delta": {"text": "think"}},
        {"type": "reasoning.signature", "index": 0, "signature": "sig-A"},
        {"type": "reasoning.signature", "index": 1, "signature": "redacted-B"},
        {"type": "reasoning.delta", "index": 2, "delta": {"text": "more"}},
        {"type": "reasoning.signature", "index": 2, "signature": "sig-C"},
        {"type": "content.delta", "index": 3, "role": "assistant", "delta": {"text": "hi"}},
        *({"type": "content.stop", "index": i, "stop_reason": "end_turn"} for i in range(4)),
        {"type": "stream.end"},
    ]
    body = written(events)
    deltas = [c["choices"][0]["delta"] for c in chunks_of(body) if c["choices"]]
    assert [d["reasoning_details"] for d in deltas if "reasoning_details" in d] == [
        [{"type": "reasoning.encrypted", "index": n, "data": data}]
        for n, data in enumerate(["sig-A", "redacted-B", "sig-C"])]
    assert [d["reasoning_content"] for d in deltas if "reasoning_content" in d] == [
        "think", "more"]
    back, diagnostics = translate("openai-chat", body)
    assert diagnostics == [] and errors(check(back)) == []
    result = aggregate(back)
    assert list(result.reasoning.values()) == ["think", "more"]
    assert list(result.reasoning_signatures.values()) == ["sig-A", "redacted-B", "sig-C"]


def test_no_usage_chunk_without_usage_and_done_always_last() -> None:
    events = events_of("vendor/openai-chat/cut-llm-stream.sse")
    body = written(events)
    assert all("error" in c or c["choices"] for c in chunks_of(body))
    assert body.endswith(b"data: [DONE]\n\n")
    error = chunks_of(body)[-1]["error"]
    assert error["code"] == "truncated" and error["type"] == "truncated"


def test_a_stream_without_stream_end_closes_with_an_error_and_done() -> None:
    events = events_of("complete/complete-example.sse")[:-1]
    body = written(events)
    assert chunks_of(body)[-1]["error"]["type"] == "truncated"
    assert body.endswith(b"data: [DONE]\n\n") and body.count(b"[DONE]") == 1


# -- the real openai SDK over loopback HTTP -------------------------------------------------


@pytest.fixture
def serve() -> Iterator[Any]:
    """Serve a body as the response to POST /v1/chat/completions on 127.0.0.1."""
    servers: list[ThreadingHTTPServer] = []

    def start(body: bytes) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def sdk_stream(base_url: str) -> Any:
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    return client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Weather in Vienna?"}], stream=True)


def test_the_openai_sdk_reads_text_and_tool_calls_whole(serve: Any) -> None:
    events = events_of("vendor/anthropic/thinking-tool-use-llm-stream.sse")
    text, calls, finish, usage = "", {}, None, None
    for chunk in sdk_stream(serve(written(events))):
        assert isinstance(chunk, openai.types.chat.ChatCompletionChunk)
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += call.id or ""
                entry["name"] += (call.function.name or "") if call.function else ""
                entry["arguments"] += (call.function.arguments or "") if call.function else ""
            finish = choice.finish_reason or finish
    assert text == "Let me check."
    assert calls == {0: {"id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
                         "arguments": '{"city": "Vienna"}'}}
    assert finish == "tool_calls"
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (472, 89)


def test_the_openai_sdk_raises_the_error_chunk(serve: Any) -> None:
    events = events_of("vendor/anthropic/error-llm-stream.sse")
    received = ""
    with pytest.raises(openai.APIError, match="Overloaded") as caught:
        for chunk in sdk_stream(serve(written(events))):
            received += "".join(c.delta.content or "" for c in chunk.choices)
    assert received == "Vienna"
    assert caught.value.body == {"message": "Overloaded", "type": "overloaded",
                                 "code": "overloaded"}
