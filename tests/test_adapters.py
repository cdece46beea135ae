"""The adapters, with a real HTTP server on loopback: no mocks.

The server streams spec example bodies as `text/event-stream` in small chunks of HTTP/1.1
chunked encoding (gzip-compressed on request); httpx's sync and async clients read them through
`iter_httpx`/`aiter_httpx`, and what comes out must be what decoding the file directly gives.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from llm_stream import (
    AsyncEventIterator,
    Decoder,
    EventIterator,
    LLMStreamError,
    aiter_events,
    aiter_httpx,
    iter_events,
    iter_file,
    iter_httpx,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
COMPLETE = EXAMPLES / "complete" / "complete-example.sse"
BODIES = [
    *sorted(str(p.relative_to(EXAMPLES)) for folder in ("complete", "valid-extra")
            for p in (EXAMPLES / folder).glob("*.sse")),
    "invalid/seq-gap.sse",
    "invalid/latin1-degree-sign.sse",
    "invalid/envelope-split-across-events.sse",
    "invalid/stream-end-missing.sse",
    "invalid/unterminated-trailing-data.sse",
]
EXCERPTS = {"complete/content-delta-events.sse", "complete/stream-start-event.sse"}
"""Events out of a stream: checked one by one (lifecycle=False)."""
TIMEOUT = 10.0


class _Handler(BaseHTTPRequestHandler):
    """GET /<example path>?chunk=N[&gzip=1]: the body in N-byte pieces of chunked encoding.
    GET /gate/<example path>: the first event, then the rest once the test opens the gate."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        gated = url.path.startswith("/gate/")
        path = EXAMPLES / url.path.removeprefix("/gate/").lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        compress = query.get("gzip") == ["1"]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        if compress:
            self.send_header("Content-Encoding", "gzip")
            body = gzip.compress(body, mtime=0)
        self.end_headers()
        if gated:
            first = body.index(b"\n\n") + 2
            self._chunk(body[:first])
            if not self.server.gate.wait(TIMEOUT):
                return  # the client never saw the first event: end without the rest
            body = body[first:]
        size = int(query.get("chunk", ["7"])[0])
        for start in range(0, len(body), size):
            self._chunk(body[start : start + size])
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, piece: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    gate: threading.Event


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.gate = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(TIMEOUT)


def url(server: _Server, path: str) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/{path}"


def dump(events: list[Any]) -> list[Any]:
    return [json.dumps(e) if isinstance(e, dict) else (type(e), e.model_dump_json())
            for e in events]


def direct(name: str, **options: Any) -> tuple[list[Any], list[Any]]:
    decoder = Decoder(**options)
    events = decoder.feed((EXAMPLES / name).read_bytes()) + decoder.close()
    return dump(events), decoder.diagnostics


# -- httpx, sync and async ------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 64])
@pytest.mark.parametrize("name", BODIES)
def test_iter_httpx_gives_what_the_file_gives(server: _Server, name: str, chunk: int) -> None:
    with httpx.Client(timeout=TIMEOUT) as client, \
            client.stream("GET", url(server, f"{name}?chunk={chunk}")) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        events = iter_httpx(response, lifecycle=name not in EXCERPTS)
        assert isinstance(events, EventIterator)
        found = list(events)
    assert events.finished
    expected = direct(name, lifecycle=name not in EXCERPTS)
    assert (dump(found), events.diagnostics) == expected
    assert events.conforming == all(d.severity.value == "warning" for d in expected[1])


@pytest.mark.parametrize("chunk", [5])
@pytest.mark.parametrize("name", BODIES)
def test_aiter_httpx_gives_what_the_file_gives(server: _Server, name: str, chunk: int) -> None:
    async def run() -> tuple[list[Any], AsyncEventIterator]:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client, \
                client.stream("GET", url(server, f"{name}?chunk={chunk}")) as response:
            assert response.headers["content-type"] == "text/event-stream"
            events = aiter_httpx(response, typed=False)
            return [event async for event in events], events

    found, events = asyncio.run(run())
    assert events.finished
    assert (dump(found), events.diagnostics) == direct(name, typed=False)


def test_a_gzip_body_is_decompressed_first(server: _Server) -> None:
    with httpx.Client(timeout=TIMEOUT) as client, \
            client.stream("GET", url(server, "complete/complete-example.sse?gzip=1&chunk=5")) \
            as response:
        assert response.headers["content-encoding"] == "gzip"
        found = list(iter_httpx(response))
    assert dump(found) == direct("complete/complete-example.sse")[0]


def test_events_are_yielded_as_they_complete(server: _Server) -> None:
    """The server holds the rest of the body until the client has decoded the first event."""
    server.gate.clear()
    with httpx.Client(timeout=TIMEOUT) as client, \
            client.stream("GET", url(server, "gate/complete/complete-example.sse")) as response:
        events = iter_httpx(response, typed=False)
        first = next(events)
        assert first["type"] == "stream.start"
        assert not events.finished
        server.gate.set()
        rest = list(events)
    assert dump([first, *rest]) == direct("complete/complete-example.sse", typed=False)[0]


def test_async_events_are_yielded_as_they_complete(server: _Server) -> None:
    server.gate.clear()

    async def run() -> list[Any]:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client, \
                client.stream("GET", url(server, "gate/complete/complete-example.sse")) \
                as response:
            events = aiter_httpx(response, typed=False)
            first = await anext(events)
            assert first["type"] == "stream.start" and not events.finished
            server.gate.set()
            return [first, *[event async for event in events]]

    assert dump(asyncio.run(run())) == direct("complete/complete-example.sse", typed=False)[0]


def test_strict_mode_raises_from_the_loop(server: _Server) -> None:
    with httpx.Client(timeout=TIMEOUT) as client, \
            client.stream("GET", url(server, "invalid/seq-gap.sse?chunk=3")) as response:
        events = iter_httpx(response, strict=True)
        seen = []
        with pytest.raises(LLMStreamError) as raised:
            for event in events:
                seen.append(event)
    assert raised.value.diagnostic.rule == "LS-SEQ-2"
    assert events.finished and list(events) == []
    assert 0 < len(seen) < len(direct("invalid/seq-gap.sse")[0])

    async def run() -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client, \
                client.stream("GET", url(server, "invalid/seq-gap.sse")) as response:
            with pytest.raises(LLMStreamError, match="LS-SEQ-2"):
                async for _ in aiter_httpx(response, strict=True):
                    pass

    asyncio.run(run())


def test_a_decoder_of_ones_own_keeps_the_diagnostics(server: _Server) -> None:
    decoder = Decoder(tools=["get_forecast"])
    with httpx.Client(timeout=TIMEOUT) as client, \
            client.stream("GET", url(server, "complete/tool-flow-response-1.sse")) as response:
        events = list(iter_httpx(response, decoder=decoder))
    assert len(events) == 4  # the refused tool.call is not returned (D-TOOL-CALL-CHECKS)
    assert [d.rule for d in decoder.diagnostics] == ["LS-CALL-4"]


# -- iterables and files ----------------------------------------------------------------------


def pieces(name: str, size: int) -> Iterator[bytes]:
    body = (EXAMPLES / name).read_bytes()
    for start in range(0, len(body), size):
        yield body[start : start + size]


@pytest.mark.parametrize("name", BODIES)
def test_iter_events_and_aiter_events(name: str) -> None:
    events = iter_events(pieces(name, 3))
    assert (dump(list(events)), events.diagnostics) == direct(name)

    async def source() -> AsyncIterator[bytes]:
        for piece in pieces(name, 5):
            await asyncio.sleep(0)
            yield piece

    async def run() -> tuple[list[Any], AsyncEventIterator]:
        events = aiter_events(source())
        return [event async for event in events], events

    found, aevents = asyncio.run(run())
    assert (dump(found), aevents.diagnostics) == direct(name)


@pytest.mark.parametrize("chunk_size", [1, 10, 1 << 16])
@pytest.mark.parametrize("name", BODIES)
def test_iter_file_from_a_path_and_from_an_open_file(name: str, chunk_size: int) -> None:
    path = EXAMPLES / name
    events = iter_file(path, chunk_size)
    assert (dump(list(events)), events.diagnostics) == direct(name)
    assert events.conforming == all(d.severity.value == "warning" for d in events.diagnostics)
    with path.open("rb") as file:
        found = list(iter_file(file, chunk_size, typed=False))
        assert not file.closed  # the caller's file stays the caller's
    assert dump(found) == direct(name, typed=False)[0]
    assert dump(list(iter_file(str(path)))) == direct(name)[0]


def test_the_verdict_comes_at_the_end_without_raising() -> None:
    events = iter_file(EXAMPLES / "invalid" / "stream-end-missing.sse")
    for _ in events:
        assert events.diagnostics == []  # not known before the body ends
    assert [d.rule for d in events.diagnostics] == ["LS-END-2"]
    assert not events.conforming


def test_stopping_early_closes_the_file_and_makes_up_no_diagnostic() -> None:
    events = iter_file(COMPLETE, 16)
    file = events._closing
    with events:
        assert next(events).type == "stream.start"
    assert file is not None and file.closed
    assert not events.finished and events.diagnostics == []


def test_the_file_is_closed_at_the_end_and_on_an_error() -> None:
    events = iter_file(COMPLETE)
    file = events._closing
    assert file is not None and not file.closed
    list(events)
    assert file.closed
    events = iter_file(EXAMPLES / "invalid" / "seq-gap.sse", strict=True)
    file = events._closing
    with pytest.raises(LLMStreamError):
        list(events)
    assert file is not None and file.closed


def test_a_failing_source_ends_the_iterator() -> None:
    def source() -> Iterator[bytes]:
        yield COMPLETE.read_bytes()[:200]
        raise ConnectionError("peer went away")

    events = iter_events(source())
    with pytest.raises(ConnectionError):
        list(events)
    assert events.finished and list(events) == []


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="either decoder= or decoder options"):
        iter_events([], decoder=Decoder(), strict=True)
    with pytest.raises(ValueError, match="chunk_size"):
        iter_file(COMPLETE, 0)
    with pytest.raises(FileNotFoundError):
        iter_file(EXAMPLES / "no-such-file.sse")
