"""The OpenAI-compatible route and the gateway in front of every vendor format, on loopback:
the official `openai` SDK against `serve`, recorded vendor streams replayed by a real upstream
server, and `conformance` through a gateway whose upstream is another `serve`'s OpenAI route."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from openai import APIError, BadRequestError, OpenAI
from servers import serving_upstream

from llm_stream import Decoder, aggregate
from llm_stream.registry import REQUEST_MEDIA_TYPE, RESPONSE_PROFILE_MEDIA_TYPE
from llm_stream_codegen.cli import main
from llm_stream_server.app import ServerOptions
from llm_stream_server.gateway import FORMATS, Gateway
from llm_stream_server.mock import MockModel, MockTiming
from llm_stream_server.relay import Deadlines
from llm_stream_server.replay import ReplayServer, Reply
from llm_stream_server.streaming import stop_streams

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "spec" / "examples" / "vendor"
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}


def test_the_openai_sdk_streams_text() -> None:
    options = ServerOptions(deadlines=Deadlines(keep_alive=0.05))
    with serving_upstream(MockModel(MockTiming(first_token_delay=0.3)), options) as url:
        client = OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(
            model="mock-1", messages=[{"role": "user", "content": "Hello there, world"}],
            stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "You said: Hello there, world"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 5
    assert {c.id for c in chunks} == {chunks[0].id} and chunks[0].model == "mock-1"


def test_the_openai_sdk_is_told_when_the_server_stops_mid_stream() -> None:
    """D-SERVER-STOP on the OpenAI route: an error chunk, which the SDK raises, then [DONE]."""
    with serving_upstream(MockModel(MockTiming(token_delay=30))) as url:
        client = OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(
            model="mock-1", messages=[{"role": "user", "content": "Hello"}], stream=True)
        first = next(iter(stream))  # the mock model now waits 30 s for its next token
        stop_streams()
        with pytest.raises(APIError, match="shutting down"):
            list(stream)
    assert first.choices[0].delta.role == "assistant"


def test_the_openai_sdk_receives_tool_calls_streaming_and_not() -> None:
    question = [{"role": "user", "content": "What is the weather? Use get_weather."}]
    with serving_upstream(MockModel()) as url:
        client = OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        chunks = list(client.chat.completions.create(
            model="mock-1", messages=question, tools=[WEATHER], stream=True))
        whole = client.chat.completions.create(model="mock-1", messages=question,
                                               tools=[WEATHER])
    calls = [call for c in chunks if c.choices for call in c.choices[0].delta.tool_calls or ()]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "example"})]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    message = whole.choices[0].message
    assert whole.object == "chat.completion" and whole.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.name == "get_weather"
    assert message.tool_calls[0].id == calls[0].id == "call_1"


def test_the_openai_sdk_gets_a_whole_completion_and_its_errors() -> None:
    with serving_upstream(MockModel()) as url:
        client = OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        whole = client.chat.completions.create(
            model="mock-1", messages=[{"role": "user", "content": "one two three"}],
            max_completion_tokens=2)
        with pytest.raises(BadRequestError) as refused:
            client.chat.completions.create(model="mock-1", messages=[
                {"role": "user", "content": [{"type": "image_url", "image_url": {
                    "url": "https://example.com/cat.png"}}]}])
    assert whole.choices[0].message.content == "You said:"
    assert whole.choices[0].finish_reason == "length"
    assert whole.usage is not None and whole.usage.completion_tokens == 2
    assert refused.value.status_code == 400
    assert "messages[0].content[0]" in str(refused.value)


def test_the_accept_profile_selects_llm_stream_for_an_openai_request() -> None:
    body = {"model": "mock-1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with serving_upstream(MockModel()) as url:
        response = httpx.post(f"{url}/v1/chat/completions", json=body,
                              headers={"Accept": RESPONSE_PROFILE_MEDIA_TYPE})
    decoder = Decoder(typed=False)
    events = [*decoder.feed(response.content), *decoder.close()]
    assert decoder.diagnostics == []
    assert aggregate(events).output_text == "You said: hi"


def _vendor_examples() -> list[tuple[str, Path]]:
    return [(path.parent.name, path) for path in sorted(VENDOR.glob("*/*.sse"))
            if not path.name.endswith("-llm-stream.sse")]


def _events(body: bytes) -> list[dict[str, object]]:
    decoder = Decoder(typed=False, lifecycle=True)
    events = [*decoder.feed(body), *decoder.close()]
    return [{k: v for k, v in e.items() if k not in ("created", "model")} for e in events]


@pytest.mark.parametrize(("fmt", "recorded"), _vendor_examples(),
                         ids=lambda v: v if isinstance(v, str) else v.stem)
def test_the_gateway_translates_every_recorded_vendor_stream(fmt: str, recorded: Path) -> None:
    data = recorded.read_bytes()
    upstream = ReplayServer(lambda _: Reply(chunks=[data[i:i + 7]
                                                    for i in range(0, len(data), 7)]))
    expected_body = recorded.with_name(recorded.stem + "-llm-stream.sse").read_bytes()
    expected = _events(expected_body)
    tools = sorted({str(e["name"]) for e in expected if e["type"] == "tool.call"})
    request = {"version": "1.0", "stream": True, "model": "vendor-model",
               "messages": [{"role": "user", "content": "Hello"}],
               "parameters": {"max_tokens": 256},
               "tools": [{"name": n, "description": n, "parameters": {"type": "object"}}
                         for n in tools]}
    with upstream.running() as upstream_url:
        gateway = Gateway(FORMATS[fmt], base_url=upstream_url, api_key="k", silence=10)
        with serving_upstream(gateway) as url:
            response = httpx.post(f"{url}/v1/stream", content=json.dumps(request),
                                  headers={"Content-Type": REQUEST_MEDIA_TYPE}, timeout=20)
    assert response.status_code == 200
    decoder = Decoder(typed=False, tools=tools)
    decoder.feed(response.content)
    decoder.close()
    assert [d for d in decoder.diagnostics if d.severity == "error"] == []
    assert _events(response.content) == expected
    sent = upstream.received[0]
    assert sent.path.startswith({"openai-chat": "/v1/chat/completions",
                                 "openai-responses": "/v1/responses",
                                 "anthropic": "/v1/messages",
                                 "gemini": "/v1beta/models/vendor-model:streamGenerateContent"
                                 }[fmt])
    assert json.loads(sent.body)


def test_a_request_the_vendor_cannot_express_is_refused_before_the_upstream() -> None:
    upstream = ReplayServer(lambda _: Reply())
    request = {"version": "1.0", "stream": True, "model": "claude",
               "messages": [{"role": "user", "content": "Hello"}]}  # Anthropic needs max_tokens
    with upstream.running() as upstream_url:
        gateway = Gateway(FORMATS["anthropic"], base_url=upstream_url, api_key="k", silence=10)
        with serving_upstream(gateway) as url:
            response = httpx.post(f"{url}/v1/stream", content=json.dumps(request),
                                  headers={"Content-Type": REQUEST_MEDIA_TYPE}, timeout=20)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert upstream.received == []


def test_conformance_passes_through_an_openai_chat_gateway(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving_upstream(MockModel()) as upstream_url:
        gateway = Gateway(FORMATS["openai-chat"], base_url=upstream_url, api_key="k",
                          silence=10)
        with serving_upstream(gateway) as url:
            code = main(["conformance", f"{url}/v1/stream"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("PASS") == 11
