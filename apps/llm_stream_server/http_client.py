"""An HTTP/1.1 client for an upstream's streamed answers, parsed by httptools where the socket
hands the bytes over.

Why not a general client: per chunk of a paced stream, httpx reads through anyio, h11 and four
layers of async generators, which costs more than translating the chunk, and a gateway relays
thousands of chunks a second. Here `data_received` feeds the C parser, the body's bytes are
kept until their reader takes them, and the reader is woken once, however many chunks came.
Kept from the general client: one pool of keep-alive connections per origin (each kept idle
for 5 s), a bound on open connections, connect and read timeouts, TLS with the system's
certificates, gzip and deflate bodies, and a connection closed at once when its answer is
abandoned (the upstream sees its client go). Not kept: HTTP proxies, HTTP/2 and redirects,
which no streaming API needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from typing import cast
from urllib.parse import quote, urlsplit

import httptools

PAUSE_BYTES = 1 << 20
"""Body bytes kept for a reader that has not taken them before the socket stops being read
(back-pressure on the upstream)."""


KEEP_IDLE = 5.0
"""Seconds an idle connection is kept for reuse (httpx's default): long enough for a stream
that follows another, short enough that the upstream rarely closes it first."""
PATH_SAFE = "/%:@!$&'()*+,;=-._~"
"""What stays as it is in a request target (RFC 3986 pchar and the separator)."""


class HTTPFailure(Exception):
    """The request got no usable answer; `timeout` tells a slow upstream from a broken one."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class Origin:
    """Where a URL's requests go: scheme, host and port (the pool's key), and the path."""

    __slots__ = ("host", "key", "netloc", "port", "target", "tls")

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url}")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.netloc = parts.netloc.rpartition("@")[2]
        self.key = (parts.scheme, self.host, self.port)
        # percent-encoded as a general client would: a model name in the path can hold
        # anything, and a space must never reach the request line
        self.target = quote(parts.path or "/", safe=PATH_SAFE) + (
            f"?{quote(parts.query, safe=PATH_SAFE + '?')}" if parts.query else "")


class Response:
    """An answer as it arrives: the status and headers first, then the body, which `take`
    hands over in whatever pieces came; `on_data` is called whenever there is more."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self.status = 0
        self.headers: dict[str, str] = {}
        self.complete = False
        """The whole body has arrived."""
        self.failure: str | None = None
        """Why the body stopped short, once it has."""
        self.on_data: Callable[[], None] = _nothing
        self._head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._body: list[bytes] = []
        self._size = 0
        self._decoder: zlib._Decompress | None = None
        self._released = False

    def take(self) -> bytes:
        """The body bytes that came since the last call (decompressed)."""
        data = b"".join(self._body)
        self._body.clear()
        if self._size >= PAUSE_BYTES and not self._connection.closed:
            self._connection.transport.resume_reading()
        self._size = 0
        if self._decoder is not None:
            try:
                data = self._decoder.decompress(data)
                if self.complete:
                    data += self._decoder.flush()
            except zlib.error as exc:
                self.complete, self.failure = False, f"the upstream's compressed body is " \
                    f"corrupt ({exc})"
                self._decoder = None
                return b""
        return data

    async def read(self, limit: int, timeout: float) -> bytes:
        """Up to `limit` bytes of the body, for a short answer such as an error's."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        data = b""
        while len(data) < limit and not (self.complete or self.failure):
            arrived = loop.create_future()
            self.on_data = functools.partial(_settle, arrived)
            done, _ = await asyncio.wait({arrived}, timeout=max(0.0, deadline - loop.time()))
            if not done:
                break
            data += self.take()
        return (data + self.take())[:limit]

    def close(self) -> None:
        """Done with the answer: its connection goes back to the pool when the body was read
        to its end and the upstream keeps connections alive, else it is closed at once."""
        if self._released:
            return
        self._released = True
        self.on_data = _nothing
        self._connection.release(reusable=self.complete and not self._body)

    # what the connection reports
    def _headers_complete(self, status: int) -> None:
        self.status = status
        encoding = self.headers.get("content-encoding", "identity").lower()
        if encoding in ("gzip", "deflate"):
            self._decoder = zlib.decompressobj(47)  # 32 + 15: gzip or zlib, by its header
        elif encoding != "identity":
            self.failure = f"the upstream sent a body in an encoding not read here ({encoding})"
        if not self._head.done():
            self._head.set_result(None)

    def _data(self, data: bytes) -> None:
        self._body.append(data)
        self._size += len(data)
        if self._size >= PAUSE_BYTES:
            self._connection.transport.pause_reading()
        self.on_data()

    def _end(self, failure: str | None) -> None:
        if self.complete or self.failure:
            return
        if failure is None:
            self.complete = True
        else:
            self.failure = failure
        if not self._head.done():
            self._head.set_result(None)
        self.on_data()


def _nothing() -> None:
    pass


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Connection(asyncio.Protocol):
    """One connection to an origin, answering one request at a time."""

    def __init__(self, pool: ConnectionPool, origin: Origin) -> None:
        self.pool = pool
        self.origin = origin
        self.transport: asyncio.Transport
        self.closed = False
        self.idle_until = 0.0
        """When a kept connection expires (loop time)."""
        self.response: Response | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._header = b""

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        if self._parser is None:  # bytes while idle: the connection cannot be trusted
            self.transport.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(f"the upstream sent a malformed answer ({exc})")

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        response = self.response
        if response is None:
            return
        headers = response.headers
        if response.status and "content-length" not in headers \
                and "chunked" not in headers.get("transfer-encoding", "").lower():
            response._end(None)  # a body delimited by the connection's end
        else:
            response._end("the upstream closed the connection")

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.response is not None
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers = self.response.headers
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def on_headers_complete(self) -> None:
        assert self.response is not None and self._parser is not None
        self.response._headers_complete(self._parser.get_status_code())

    def on_body(self, body: bytes) -> None:
        assert self.response is not None
        self.response._data(body)

    def on_message_complete(self) -> None:
        assert self.response is not None and self._parser is not None
        if not self._parser.should_keep_alive():
            self.closed = True  # the upstream closes it; never reused
        self.response._end(None)

    # for the pool and the response
    def send(self, head: bytes, body: bytes) -> Response:
        self.response = Response(self)
        self._parser = httptools.HttpResponseParser(self)
        self.transport.write(head + body)
        return self.response

    def _fail(self, message: str) -> None:
        if self.response is not None:
            self.response._end(message)
        self.abort()

    def abort(self) -> None:
        self.closed = True
        self.transport.abort()

    def release(self, *, reusable: bool) -> None:
        self.response = self._parser = None
        if reusable and not self.closed:
            self.pool.keep(self)
        else:
            self.abort()
        self.pool.slots.release()


class ConnectionPool:
    """Keep-alive connections by origin, at most `max_connections` busy at once."""

    def __init__(self, *, max_connections: int, max_idle: int, connect_timeout: float,
                 read_timeout: float) -> None:
        self.slots = asyncio.Semaphore(max_connections)
        self.max_idle = max_idle
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._idle: dict[tuple[str, str, int], deque[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """POST `body` and return once the status and headers have come; HTTPFailure when
        the upstream cannot be reached or does not answer within the read timeout."""
        origin = Origin(url)
        if any(c in field for item in headers.items() for field in item for c in "\r\n"):
            raise HTTPFailure("a header of the upstream request holds a line break")
        head = "".join([f"POST {origin.target} HTTP/1.1\r\nHost: {origin.netloc}\r\n",
                        *(f"{name}: {value}\r\n" for name, value in headers.items()),
                        f"Content-Length: {len(body)}\r\n\r\n"]).encode("latin-1")
        try:
            await asyncio.wait_for(self.slots.acquire(), self.connect_timeout)
        except TimeoutError:
            raise HTTPFailure("no connection to the upstream was free in time",
                              timeout=True) from None
        try:
            while True:
                connection, reused = self._idle_connection(origin), True
                if connection is None:
                    connection, reused = await self._connect(origin), False
                response = connection.send(head, body)
                try:
                    await asyncio.wait({response._head}, timeout=self.read_timeout)
                except asyncio.CancelledError:
                    connection.abort()
                    raise
                if response.status:
                    return response
                connection.abort()
                if response.failure is None:
                    raise HTTPFailure("the upstream did not answer in time", timeout=True)
                if not reused:
                    raise HTTPFailure(response.failure)
                # the upstream had closed the idle connection as it was taken: a fresh one
        except BaseException:
            self.slots.release()
            raise

    def keep(self, connection: _Connection) -> None:
        """Keep a connection for the next request to its origin, for KEEP_IDLE seconds."""
        now = asyncio.get_running_loop().time()
        idle = self._idle.setdefault(connection.origin.key, deque())
        while idle and (idle[0].closed or idle[0].idle_until <= now):
            idle.popleft().abort()  # the oldest first: expired, or dropped by the upstream
        if len(idle) < self.max_idle:
            connection.idle_until = now + KEEP_IDLE
            idle.append(connection)
        else:
            connection.abort()

    def _idle_connection(self, origin: Origin) -> _Connection | None:
        """The connection kept last that is still open and fresh."""
        idle = self._idle.get(origin.key)
        now = asyncio.get_running_loop().time()
        while idle:
            connection = idle.pop()
            if not connection.closed and connection.idle_until > now:
                return connection
            connection.abort()
        return None

    async def _connect(self, origin: Origin) -> _Connection:
        loop = asyncio.get_running_loop()
        tls = self._tls_context() if origin.tls else None
        try:
            _, connection = await asyncio.wait_for(loop.create_connection(
                lambda: _Connection(self, origin), origin.host, origin.port, ssl=tls,
                server_hostname=origin.host if tls else None), self.connect_timeout)
        except TimeoutError:
            raise HTTPFailure("the upstream did not accept a connection in time",
                              timeout=True) from None
        except OSError as exc:
            raise HTTPFailure(f"the upstream could not be reached ({exc.strerror or exc})") \
                from None
        return connection

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
            with contextlib.suppress(ImportError):  # the CA bundle httpx uses, when present
                import certifi
                self._tls.load_verify_locations(certifi.where())
        return self._tls

    def close(self) -> None:
        """Close every idle connection (the server is stopping)."""
        for idle in self._idle.values():
            for connection in idle:
                connection.abort()
        self._idle.clear()
