"""The gateway's HTTP client against a real upstream server on loopback: connections kept
alive and reused, dropped ones replaced, compressed bodies read, and an upstream that does not
answer in time refused with 504."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import httpx
import pytest
from servers import serving_upstream
from test_serve import HEADERS, _gateway, _recorded, checked, request

from llm_stream import aggregate
from llm_stream_server import http_client
from llm_stream_server.gateway import FORMATS, Gateway
from llm_stream_server.replay import Received, ReplayServer, Reply


def _post(url: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/stream", content=json.dumps(request()).encode(),
                      headers=HEADERS, timeout=20)


def test_streams_one_after_another_share_one_upstream_connection(tmp_path: Path) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        for _ in range(3):
            response = _post(url)
            assert aggregate(checked(response.content, tmp_path)).output_text == (
                "You said: Hello there")
    assert (len(upstream.received), upstream.connections) == (3, 1)


def test_an_idle_connection_expires(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_client, "KEEP_IDLE", 0.0)
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        for _ in range(2):
            assert checked(_post(url).content, tmp_path)[-1]["type"] == "stream.end"
    assert upstream.connections == 2


def test_a_connection_the_upstream_drops_is_replaced(tmp_path: Path) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded(), close=True))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        for _ in range(3):
            response = _post(url)
            assert aggregate(checked(response.content, tmp_path)).output_text == (
                "You said: Hello there")
    assert (len(upstream.received), upstream.connections) == (3, 3)


def test_a_connection_the_upstream_says_it_closes_is_not_reused(tmp_path: Path) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded(),
                                            headers={"Connection": "close"}))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        for _ in range(2):
            assert checked(_post(url).content, tmp_path)[-1]["type"] == "stream.end"
    assert upstream.connections == 2


def test_a_compressed_body_is_read(tmp_path: Path) -> None:
    """The gateway asks for identity; an upstream that compresses anyway is still read."""
    body = gzip.compress(b"".join(_recorded()))
    upstream = ReplayServer(lambda _: Reply(chunks=[body[:20], body[20:]],
                                            headers={"Content-Encoding": "gzip"}))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        response = _post(url)
    assert aggregate(checked(response.content, tmp_path)).output_text == "You said: Hello there"
    assert upstream.received[0].headers["accept-encoding"] == "identity"


def test_an_upstream_that_does_not_answer_in_time_is_a_504() -> None:
    async def never(_: Received) -> Reply:
        await asyncio.sleep(30)
        return Reply()

    upstream = ReplayServer(never)
    with upstream.running() as upstream_url, \
            serving_upstream(_gateway(upstream_url, silence=0.3)) as url:
        response = _post(url)
    assert response.status_code == 504
    assert response.json()["error"]["code"] == "upstream_timeout"


def test_a_model_name_reaches_the_upstream_percent_encoded() -> None:
    """Gemini's path carries the model: whatever the client named, the request line stays
    one line."""
    upstream = ReplayServer(lambda _: Reply(status=404, chunks=[b"{}"],
                                            content_type="application/json"))
    with upstream.running() as upstream_url, serving_upstream(
            Gateway(FORMATS["gemini"], base_url=upstream_url, api_key="k", silence=10)) as url:
        httpx.post(f"{url}/v1/stream", headers=HEADERS, timeout=20, content=json.dumps(
            request(model="gem ini\r\nX-Injected: 1")).encode())
    sent = upstream.received[0]
    assert "x-injected" not in sent.headers
    assert sent.path.startswith("/v1beta/models/gem%20ini") and " " not in sent.path


def test_a_key_that_a_header_cannot_carry_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="line break"):
        Gateway(FORMATS["openai-chat"], base_url="http://127.0.0.1:1", api_key="sk-1\n",
                silence=10)


def test_a_corrupt_compressed_body_ends_the_stream_with_an_error(tmp_path: Path) -> None:
    body = gzip.compress(b"".join(_recorded()))
    broken = body[:30] + bytes(64) + body[94:]
    upstream = ReplayServer(lambda _: Reply(chunks=[broken],
                                            headers={"Content-Encoding": "gzip"}))
    with upstream.running() as upstream_url, serving_upstream(_gateway(upstream_url)) as url:
        response = _post(url)
    events = checked(response.content, tmp_path)
    assert [e["type"] for e in events][-2:] == ["error", "stream.end"]
    assert events[-2]["code"] == "truncated" and "corrupt" in events[-2]["message"]
