"""The gateway's HTTP client against a real upstream server on loopback: connections kept
alive and reused, dropped ones replaced, compressed bodies read, and an upstream that does not
answer in time refused with 504."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import httpx
from servers import serving_upstream
from test_serve import HEADERS, _gateway, _recorded, checked, request

from llm_stream import aggregate
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
