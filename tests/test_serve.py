"""`llm-stream serve` end to end on loopback: real uvicorn servers started here, real HTTP
clients, the mock model and the gateway in front of a real upstream server."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from servers import serving_upstream

from llm_stream import Decoder, Encoder, aggregate
from llm_stream.registry import REQUEST_MEDIA_TYPE, RESPONSE_PROFILE_MEDIA_TYPE
from llm_stream_codegen.cli import main
from llm_stream_server.app import ServerOptions
from llm_stream_server.gateway import FORMATS, Gateway
from llm_stream_server.mock import MockModel, MockTiming, answer
from llm_stream_server.relay import Deadlines, LLMStreamFraming
from llm_stream_server.replay import ReplayServer, Reply

ROOT = Path(__file__).resolve().parent.parent
HEADERS = {"Content-Type": REQUEST_MEDIA_TYPE, "Accept": "text/event-stream"}
SECRET = "the-secret-prompt-words"
WEATHER = {"name": "get_weather", "description": "Weather for a city.",
           "parameters": {"type": "object", "properties": {
               "city": {"type": "string"}, "units": {"enum": ["celsius", "fahrenheit"]}},
               "required": ["city"]}}


def request(text: str = "Hello there", **members: object) -> dict[str, object]:
    return {"version": "1.0", "stream": True, "model": "mock-1",
            "messages": [{"role": "user", "content": text}],
            "metadata": {"request_id": "req-7"}, **members}


def post(url: str, body: object, headers: dict[str, str] = HEADERS,
         timeout: float = 20) -> httpx.Response:
    return httpx.post(url, content=json.dumps(body).encode(), headers=headers, timeout=timeout)


def checked(body: bytes, tmp_path: Path, tools: list[str] | None = None) -> list[dict]:
    """The events of a body after `llm-stream check` found it conforming."""
    capture = tmp_path / "capture.sse"
    capture.write_bytes(body)
    arguments = ["check", str(capture)]
    if tools is not None:
        (tmp_path / "tools.json").write_text(json.dumps([{"name": n} for n in tools]))
        arguments[1:1] = ["--tools", str(tmp_path / "tools.json")]
    assert main(arguments) == 0, body.decode()
    decoder = Decoder(typed=False)
    return [*decoder.feed(body), *decoder.close()]


def test_the_mock_model_streams_text_that_passes_check(tmp_path: Path) -> None:
    with serving_upstream(MockModel()) as url:
        response = post(f"{url}/v1/stream", request("Hello there, world"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    events = checked(response.content, tmp_path)
    assert aggregate(events).output_text == "You said: Hello there, world"
    assert [e["type"] for e in events][:2] == ["stream.start", "content.delta"]
    assert events[0]["request_id"] == events[-1]["request_id"] == "req-7"
    assert events[0]["model"] == "mock-1"
    assert events[-2] == {"v": "1.0", "seq": len(events) - 2, "type": "usage",
                          "input_tokens": 3, "output_tokens": 5}


def test_the_mock_model_calls_a_declared_tool_it_is_asked_for(tmp_path: Path) -> None:
    with serving_upstream(MockModel()) as url:
        response = post(f"{url}/v1/stream",
                        request("What is the weather? Use get_weather.", tools=[WEATHER]))
    events = checked(response.content, tmp_path, tools=["get_weather"])
    call = next(e for e in events if e["type"] == "tool.call")
    assert (call["name"], json.loads(call["arguments"])) == (
        "get_weather", {"city": "example", "units": "celsius"})
    assert any(e.get("stop_reason") == "tool_use" for e in events)


def test_the_mock_model_is_cut_by_max_tokens_and_stop_sequences() -> None:
    def stops(**parameters: object) -> tuple[str, str]:
        events = answer(request("one two three four five", parameters=parameters), created=0)
        text = "".join(e["delta"]["text"] for e in events if e["type"] == "content.delta")
        return text, next(e["stop_reason"] for e in events if e["type"] == "content.stop")

    assert stops(max_tokens=3) == ("You said: one", "max_tokens")
    assert stops(stop_sequences=["four"]) == ("You said: one two three", "stop_sequence")
    assert stops(max_tokens=0) == ("", "max_tokens")
    assert stops() == ("You said: one two three four five", "end_turn")


def test_a_bad_request_gets_400_with_diagnostics_and_nothing_goes_upstream() -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=[b""]))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        bad = {**request(), "stream": False, "messages": [{"role": "wizard", "content": "x"}]}
        response = post(f"{url}/v1/stream", bad)
        not_json = httpx.post(f"{url}/v1/stream", content=b"{not json", headers=HEADERS)
    assert response.status_code == 400
    body = response.json()
    assert body["error"]["code"] == "invalid_request"
    assert {d["rule"] for d in body["diagnostics"]} >= {"LS-REQ-2", "LS-MSG-1"}
    assert all(d["line"] == 1 for d in body["diagnostics"])
    assert not_json.status_code == 400
    assert not_json.json()["diagnostics"][0]["rule"] == "LS-REQ-4"
    assert upstream.received == []


def test_content_type_body_size_and_accept_are_checked_first() -> None:
    options = ServerOptions(max_body_bytes=2000)
    with serving_upstream(MockModel(), options) as url:
        plain = post(f"{url}/v1/stream", request(), {"Content-Type": "text/plain"})
        json_ = post(f"{url}/v1/stream", request(), {"Content-Type": "application/json"})
        large = post(f"{url}/v1/stream", request("word " * 1000))
        chunked = httpx.post(f"{url}/v1/stream", headers=HEADERS,
                             content=iter([json.dumps(request("word " * 1000)).encode()]))
        refused = post(f"{url}/v1/stream", request(),
                       {**HEADERS, "Accept": "application/json"})
        versioned = post(f"{url}/v1/stream", request(),
                         {**HEADERS, "Content-Type": f'{REQUEST_MEDIA_TYPE}; version="1.0"'})
    assert plain.status_code == json_.status_code == 415
    assert plain.headers["accept-post"] == REQUEST_MEDIA_TYPE
    assert plain.json()["error"]["code"] == "unsupported_media_type"
    assert large.status_code == chunked.status_code == 413
    assert refused.status_code == 406
    assert versioned.status_code == 200


def test_the_accept_profile_selects_llm_stream_on_the_openai_route(tmp_path: Path) -> None:
    with serving_upstream(MockModel()) as url:
        response = post(f"{url}/v1/chat/completions", request(),
                        {**HEADERS, "Accept": RESPONSE_PROFILE_MEDIA_TYPE})
    assert response.status_code == 200
    assert aggregate(checked(response.content, tmp_path)).output_text == "You said: Hello there"


def test_keep_alives_while_waiting_for_the_first_token(tmp_path: Path) -> None:
    slow = MockModel(MockTiming(first_token_delay=0.6))
    options = ServerOptions(deadlines=Deadlines(keep_alive=0.1, silence=5))
    with serving_upstream(slow, options) as url:
        response = post(f"{url}/v1/stream", request())
    body = response.content
    assert body.count(b": keep-alive\n\n") >= 3
    assert body.index(b": keep-alive") < body.index(b"content.delta")
    checked(body, tmp_path)


def test_a_silent_upstream_ends_the_stream_with_an_error(tmp_path: Path) -> None:
    silent = MockModel(MockTiming(first_token_delay=30))
    options = ServerOptions(deadlines=Deadlines(keep_alive=0.1, silence=0.4))
    started = time.monotonic()
    with serving_upstream(silent, options) as url:
        response = post(f"{url}/v1/stream", request())
    assert time.monotonic() - started < 10
    events = checked(response.content, tmp_path)
    assert [e["type"] for e in events] == ["stream.start", "error", "stream.end"]
    assert events[1]["code"] == "truncated"
    assert "0.4 s" in events[1]["message"]
    assert events[-1]["request_id"] == "req-7"


def _gateway(base_url: str, **options: float) -> Gateway:
    return Gateway(FORMATS["llm-stream"], base_url=f"{base_url}/v1/stream", api_key="k-123",
                   silence=options.get("silence", 10))


def _recorded(text: str = "Hello there") -> list[bytes]:
    """A conforming LLM-Stream answer, one event a chunk, as an upstream would send it."""
    encoder = Encoder()
    return [encoder.encode(e) for e in answer(request(text), created=1749292800)]


def test_the_gateway_relays_an_llm_stream_upstream(tmp_path: Path) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        response = post(f"{url}/v1/stream", request())
    events = checked(response.content, tmp_path)
    assert aggregate(events).output_text == "You said: Hello there"
    sent = upstream.received[0]
    assert (sent.path, sent.headers["authorization"]) == ("/v1/stream", "Bearer k-123")
    assert sent.headers["content-type"] == REQUEST_MEDIA_TYPE
    assert json.loads(sent.body) == request()


@pytest.mark.parametrize(("status", "expected", "code"), [
    (429, 429, "rate_limited"), (503, 503, "overloaded"), (401, 502, "internal_error"),
    (400, 400, "invalid_request"), (500, 502, "internal_error"),
])
def test_an_upstream_refusal_becomes_a_status_with_a_json_error(
    status: int, expected: int, code: str
) -> None:
    refusal = json.dumps({"error": {"message": "upstream says no", "type": "x"}}).encode()
    upstream = ReplayServer(lambda _: Reply(status=status, chunks=[refusal],
                                            content_type="application/json",
                                            headers={"Retry-After": "7"}))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        response = post(f"{url}/v1/stream", request())
    assert response.status_code == expected
    assert response.json()["error"]["code"] == code
    if status in (429, 503):
        assert response.headers["retry-after"] == "7"
        assert response.json()["error"]["message"] == "upstream says no"


def test_an_upstream_cut_mid_stream_ends_with_error_and_stream_end(tmp_path: Path) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()[:3], cut=True))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        response = post(f"{url}/v1/stream", request())
    events = checked(response.content, tmp_path)
    assert [e["type"] for e in events][-2:] == ["error", "stream.end"]
    assert events[-2]["code"] == "truncated"


def test_an_unreachable_upstream_is_a_502() -> None:
    with serving_upstream(_gateway("http://127.0.0.1:1")) as url:
        response = post(f"{url}/v1/stream", request())
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "internal_error"


def test_a_client_that_disconnects_closes_the_upstream_connection() -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded() * 50, pause=0.05))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        with httpx.stream("POST", f"{url}/v1/stream", headers=HEADERS, timeout=20,
                          content=json.dumps(request()).encode()) as response:
            for _ in response.iter_raw():
                break
        assert upstream.hung_up_event.wait(10), "the upstream never saw the connection close"
    assert upstream.completed == 0


def test_a_client_that_disconnects_while_nothing_is_sent_cancels_the_upstream_at_once() -> None:
    """The upstream is quiet for 8 s after its first event, and no keep-alive is due: the
    disconnect itself, not a failed write, must close the upstream connection."""
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()[:2], pause=8))
    options = ServerOptions(deadlines=Deadlines(keep_alive=60, silence=60))
    with upstream.running() as upstream_url, \
            serving_upstream(_gateway(upstream_url, silence=60), options) as url:
        with httpx.stream("POST", f"{url}/v1/stream", headers=HEADERS, timeout=20,
                          content=json.dumps(request()).encode()) as response:
            for _ in response.iter_raw():
                break
            left = time.monotonic()
        assert upstream.hung_up_event.wait(10), "the upstream never saw the connection close"
        assert time.monotonic() - left < 4


def test_the_framing_writes_what_the_encoder_writes() -> None:
    """Text deltas take a shortcut past the encoder: the bytes must be the encoder's."""
    texts = ["plain", "caf\u00e9 \u65e5\U0001F600", '"q" \\ \n\r\t\b\f\x00\x1f\x7f', "\u2028"]
    events: list[dict[str, object]] = [{"type": "stream.start", "model": "m", "created": 1}]
    for index, text in enumerate(texts):
        events.append({"type": "content.delta", "index": index, "role": "assistant",
                       "delta": {"text": text}})
        events.append({"v": "1.0", "seq": 40 + index, "type": "content.delta", "index": index,
                       "role": "assistant", "delta": {"text": text}})
    events += [{"type": "content.delta", "role": "assistant", "index": 0, "delta": {"text": "a"}},
               {"type": "content.delta", "index": 0, "role": "assistant",
                "delta": {"text": "a", "x": 1}},
               {"type": "content.delta", "index": True, "role": "assistant",
                "delta": {"text": "a"}},
               {"type": "stream.end"}]
    encoder = Encoder()
    assert LLMStreamFraming().write(events) == b"".join(encoder.encode(e) for e in events)


def test_one_access_log_line_per_stream_and_no_prompt_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    with serving_upstream(MockModel()) as url:
        post(f"{url}/v1/stream", request(SECRET))
        post(f"{url}/v1/stream", {**request(SECRET), "stream": False})
        post(f"{url}/v1/stream", request(SECRET), {"Content-Type": "text/plain"})
    lines = [json.loads(r.getMessage()) for r in caplog.records
             if r.name == "llm_stream_server.access"]
    assert [(line["status"], line["outcome"]) for line in lines] == [
        (200, "complete"), (400, "refused:invalid_request"),
        (415, "refused:unsupported_media_type")]
    assert lines[0]["model"] == "mock-1"
    assert (lines[0]["events"], lines[0]["input_tokens"], lines[0]["output_tokens"]) == (
        7, 1, 3)
    assert lines[0]["upstream"] == "mock" and lines[0]["duration_ms"] >= 0
    assert not any(SECRET in r.getMessage() for r in caplog.records)


def test_serve_names_the_extra_when_it_is_missing() -> None:
    code = ("import sys; sys.modules['starlette'] = None; "
            "from llm_stream_codegen.cli import main; sys.exit(main(['serve']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 2
    assert "pip install 'llm-stream[serve]'" in result.stderr
    assert "starlette" in result.stderr and "Traceback" not in result.stderr


def test_serve_refuses_a_gateway_without_its_url_or_key() -> None:
    command = Path(sys.executable).with_name("llm-stream")
    no_url = subprocess.run([str(command), "serve", "--upstream", "llm-stream"],
                            capture_output=True, text=True, check=False, timeout=60)
    no_key = subprocess.run([str(command), "serve", "--upstream", "llm-stream", "--upstream-url",
                             "http://127.0.0.1:1", "--api-key-env", "LLM_STREAM_TEST_NO_KEY"],
                            capture_output=True, text=True, check=False, timeout=60,
                            env={k: v for k, v in os.environ.items()
                                 if k != "LLM_STREAM_TEST_NO_KEY"})
    assert no_url.returncode == no_key.returncode == 2
    assert "needs --upstream-url" in no_url.stderr
    assert "LLM_STREAM_TEST_NO_KEY is not set" in no_key.stderr


def test_the_serve_command_runs_the_mock_model_and_passes_conformance(tmp_path: Path) -> None:
    command = Path(sys.executable).with_name("llm-stream")
    server = subprocess.Popen([str(command), "serve", "--port", "0", "--mock-token-delay", "0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        banner = server.stderr.readline()
        url = banner.split("listening on ")[1].split()[0]
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(server.stderr or ()), daemon=True)
        reader.start()
        result = subprocess.run([str(command), "conformance", f"{url}/v1/stream"],
                                capture_output=True, text=True, check=False, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.count("PASS") == 11
    finally:
        server.terminate()
        server.wait(15)
    assert server.returncode in (0, -15)
    assert sum('"route":"/v1/stream"' in line for line in lines) == 11


OPENAI_HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream"}


@pytest.mark.parametrize(("route", "headers"), [
    ("/v1/stream", HEADERS), ("/v1/chat/completions", OPENAI_HEADERS),
])
def test_ctrl_c_during_a_stream_ends_it_and_stops_the_server_at_once_and_quietly(
    route: str, headers: dict[str, str], tmp_path: Path,
) -> None:
    """uvicorn sends an open stream no disconnect when it stops: without the server ending its
    streams itself, Ctrl-C waits out the graceful-shutdown timeout and logs a traceback. The
    client is told (D-SERVER-STOP): an LLM-Stream body ends with error and stream.end, an
    OpenAI one with an error chunk and [DONE]."""
    command = Path(sys.executable).with_name("llm-stream")
    server = subprocess.Popen([str(command), "serve", "--port", "0", "--mock-token-delay", "30"],
                              stderr=subprocess.PIPE, text=True)
    body = (request("Hello") if route == "/v1/stream" else
            {"model": "mock-1", "stream": True,
             "messages": [{"role": "user", "content": "Hello"}]})
    try:
        assert server.stderr is not None
        url = server.stderr.readline().split("listening on ")[1].split()[0]
        with httpx.stream("POST", f"{url}{route}", content=json.dumps(body),
                          headers=headers, timeout=10) as response:
            pieces = response.iter_bytes()  # kept: a generator dropped closes the stream
            received = [next(pieces)]  # the stream has begun; the mock waits for its next token
            started = time.monotonic()
            server.send_signal(signal.SIGINT)
            received.extend(pieces)
            server.wait(4)
        assert time.monotonic() - started < 4
    finally:
        server.kill()
        _, log = server.communicate()
    assert server.returncode == 0
    assert "Traceback" not in log and "ERROR" not in log, log
    assert '"outcome":"server_stopped"' in log
    whole = b"".join(received)
    if route == "/v1/stream":
        events = checked(whole, tmp_path)
        assert [e["type"] for e in events][-2:] == ["error", "stream.end"]
        assert events[-2]["code"] == "overloaded" and "shutting down" in events[-2]["message"]
        assert events[-1]["request_id"] == "req-7"
    else:
        data = [line[6:] for line in whole.decode().splitlines() if line.startswith("data: ")]
        assert data[-1] == "[DONE]"
        assert json.loads(data[-2])["error"]["code"] == "overloaded"
