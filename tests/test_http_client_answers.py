"""The gateway's HTTP client against upstreams that answer in every way HTTP/1.1 allows, and in
some it does not: a raw server on loopback sends the bytes each test scripts."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator

import httpx
import pytest
from servers import serving_upstream
from test_serve import HEADERS, _gateway, request

from llm_stream_server.errors import ErrorReply
from llm_stream_server.gateway import FORMATS, Gateway
from llm_stream_server.http_client import MAX_HEAD_BYTES, ConnectionPool, HTTPFailure, Response
from llm_stream_server.replay import read_request, serving_connections


class RawUpstream:
    """Answers the n-th request with the n-th script: raw bytes (a tuple of pieces is sent
    50 ms apart), then the connection closed when the script says so. `connections` counts the
    connections accepted."""

    def __init__(self, *scripts: tuple[bytes | tuple[bytes, ...], bool]) -> None:
        self.scripts = list(scripts)
        self.connections = 0
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await read_request(reader) is not None and self.scripts:
                self.requests += 1
                answer, close = self.scripts.pop(0)
                for index, piece in enumerate((answer,) if isinstance(answer, bytes) else answer):
                    if index:
                        await asyncio.sleep(0.05)
                    writer.write(piece)
                    await writer.drain()
                if close:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve on 127.0.0.1; yields the URL requests go to."""
        with serving_connections(self.handle) as url:
            yield f"{url}/v1"


def _pool() -> ConnectionPool:
    return ConnectionPool(max_connections=4, max_idle=4, connect_timeout=5, read_timeout=5)


async def _whole(response: Response) -> bytes:
    body = await response.read(1 << 20, 5)
    response.close()
    return body


def _exchange(url: str, count: int = 1,
              headers: dict[str, str] | None = None) -> list[tuple[Response, bytes]]:
    """`count` requests one after another on one pool: each answer and its whole body."""
    async def run() -> list[tuple[Response, bytes]]:
        pool = _pool()
        answers = []
        for _ in range(count):
            response = await pool.post(url, headers or {}, b"{}")
            answers.append((response, await _whole(response)))
        pool.close()
        return answers
    return asyncio.run(run())


OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"


def test_a_body_without_length_ends_with_the_connection() -> None:
    upstream = RawUpstream((OK + b"\r\nhello, ", True), (OK + b"\r\nagain", True))
    with upstream.running() as url:
        answers = _exchange(url, 2)
    assert [(r.complete, body) for r, body in answers] == [(True, b"hello, "), (True, b"again")]
    assert upstream.connections == 2


def test_an_interim_100_continue_is_skipped() -> None:
    upstream = RawUpstream(((b"HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n",
                             OK + b"Content-Length: 5\r\n\r\nhello"), False))
    with upstream.running() as url:
        [(response, body)] = _exchange(url)
    assert (response.status, body, response.complete) == (200, b"hello", True)
    assert response.headers["content-type"] == "text/event-stream"
    assert "x-interim" not in response.headers


def test_chunked_trailers_are_read_past_and_the_connection_kept() -> None:
    chunked = OK + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n"
    upstream = RawUpstream((chunked, False), (chunked, False))
    with upstream.running() as url:
        answers = _exchange(url, 2)
    assert [(r.complete, body) for r, body in answers] == [(True, b"hello")] * 2
    assert "x-trailer" not in answers[0][0].headers
    assert upstream.connections == 1


def test_a_connection_closed_mid_chunk_is_a_failure() -> None:
    upstream = RawUpstream((OK + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhel", True))
    with upstream.running() as url:
        [(response, body)] = _exchange(url)
    assert not response.complete and response.failure == "the upstream closed the connection"
    assert body == b"hel"


@pytest.mark.parametrize("extra", [b"GARBAGE", b"HTTP/1.1 200 OK\r\nX-Late: 1\r\n"
                                   b"Content-Length: 3\r\n\r\nbad"], ids=["junk", "answer"])
def test_bytes_after_the_body_keep_the_connection_from_reuse(extra: bytes) -> None:
    upstream = RawUpstream((OK + b"Content-Length: 5\r\n\r\nhello" + extra, False),
                           (OK + b"Content-Length: 5\r\n\r\nagain", False))
    with upstream.running() as url:
        answers = _exchange(url, 2)
    assert [(r.status, body) for r, body in answers] == [(200, b"hello"), (200, b"again")]
    assert "x-late" not in answers[0][0].headers
    assert upstream.connections == 2


def test_a_body_left_unread_closes_its_connection() -> None:
    long = OK + b"Content-Length: 100000\r\n\r\n" + bytes(100000)
    upstream = RawUpstream((long, False), (OK + b"Content-Length: 2\r\n\r\nok", False))

    async def run() -> bytes:
        pool = _pool()
        first = await pool.post(url, {}, b"{}")
        first.close()  # the client went: the rest of the body is never read
        second = await pool.post(url, {}, b"{}")
        pool.close()
        return await _whole(second)

    with upstream.running() as url:
        assert asyncio.run(run()) == b"ok"
    assert upstream.connections == 2


@pytest.mark.parametrize("header", [("X-Key", "a\r\nX-Injected: 1"), ("X-Key", "a\nb"),
                                    ("X-Key", "a\x00b"), ("X-Key: b", "c"),
                                    ("X Key", "c"), ("", "c")])
def test_a_header_that_would_change_the_request_is_refused(header: tuple[str, str]) -> None:
    upstream = RawUpstream((OK + b"Content-Length: 0\r\n\r\n", False))
    with upstream.running() as url, pytest.raises(HTTPFailure, match="header"):
        _exchange(url, headers=dict([header]))
    assert upstream.requests == 0


@pytest.mark.parametrize("where", ["head", "reason", "field", "trailers"])
def test_a_huge_head_is_refused(where: str) -> None:
    block = b"".join(b"X-Filler-%d: %s\r\n" % (i, b"x" * 1000) for i in range(100))
    if where == "head":
        answer = OK + block + b"Content-Length: 0\r\n\r\n"
    elif where == "reason":
        answer = b"HTTP/1.1 200 O" + b"K" * (2 * MAX_HEAD_BYTES) + b"\r\nContent-Length: 0\r\n\r\n"
    elif where == "field":  # one header that never ends, which the parser would keep whole
        answer = OK + b"X-Long: " + b"x" * (2 * MAX_HEAD_BYTES)
    else:
        answer = OK + b"Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n" + block + b"\r\n"
    upstream = RawUpstream((answer, False))
    with upstream.running() as url:
        try:
            [(response, _)] = _exchange(url)
        except HTTPFailure as failure:
            assert "head" in str(failure) and str(MAX_HEAD_BYTES) in str(failure)
        else:
            assert where == "trailers" and not response.complete
            assert response.failure is not None and str(MAX_HEAD_BYTES) in response.failure
            assert len(response.headers) < 100


def test_a_redirect_is_not_followed_and_is_a_502() -> None:
    upstream = RawUpstream((b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/"
                            b"\r\nContent-Length: 0\r\n\r\n", False))
    with upstream.running() as url, serving_upstream(_gateway(url)) as gateway:
        response = httpx.post(f"{gateway}/v1/stream", content=json.dumps(request()).encode(),
                              headers=HEADERS, timeout=20)
    assert response.status_code == 502
    assert "307" in response.json()["error"]["message"]
    assert upstream.requests == 1


def test_a_client_gone_while_an_error_answer_is_read_frees_its_connection() -> None:
    """The gateway reads an upstream's error body before it answers; a client that goes
    meanwhile must not keep the connection's slot, or the pool runs dry one client at a time."""
    late_error = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\n", b"{}")
    upstream = RawUpstream((late_error, True), (late_error, True))

    async def run(url: str) -> str:
        gateway = Gateway(FORMATS["llm-stream"], base_url=url, api_key=None, silence=5,
                          connections=1)
        opening = asyncio.ensure_future(gateway.open(request()))
        await asyncio.sleep(0.02)  # the head has come, the body not yet
        opening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await opening
        try:
            await gateway.open(request())
        except ErrorReply as reply:
            return reply.message
        finally:
            gateway.pool.close()
        return "no error"

    with upstream.running() as url:
        message = asyncio.run(run(f"{url}/stream"))
    assert "free in time" not in message and upstream.requests == 2
