"""An HTTP/1.1 client for an upstream's streamed answers, parsed by httptools where the socket
hands the bytes over.

Why not a general client: per chunk of a paced stream, httpx reads through anyio, h11 and four
layers of async generators, which costs more than translating the chunk, and a gateway relays
thousands of chunks a second. Here `data_received` feeds the C parser, the body's bytes are
kept until their reader takes them, and the reader is woken once, however many chunks came.
Kept from the general client: one pool of keep-alive connections per origin (each reused
within 5 s of its last answer), a bound on open connections, connect and read timeouts, TLS
with the system's certificates (and those `SSL_CERT_FILE` names), gzip and deflate bodies, a
connection closed at once when its answer is abandoned (the upstream sees its client go), and
the HTTP proxy the environment names (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, as
urllib and httpx read them): a CONNECT tunnel to an https upstream, absolute-form requests to
an http one. Not kept: HTTP/2 and redirects, which no streaming API needs.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import re
import socket
import ssl
import urllib.request
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from typing import cast
from urllib.parse import quote, unquote, urlsplit

import httptools

from .futures import settle

PAUSE_BYTES = 1 << 20
"""Body bytes kept for a reader that has not taken them before the socket stops being read
(back-pressure on the upstream)."""


KEEP_IDLE = 5.0
"""Seconds an idle connection is kept for reuse (httpx's default): long enough for a stream
that follows another, short enough that the upstream rarely closes it first."""
PATH_SAFE = "/%:@!$&'()*+,;=-._~"
"""What stays as it is in a request target (RFC 3986 pchar and the separator)."""
MAX_HEAD_BYTES = 1 << 16
"""The largest head (status line, headers, trailers) read from an upstream or a proxy: enough
for any API's, and a bound on what a broken one can make the gateway hold."""
FINISH_WAIT = 1.0
"""Seconds a connection whose reader is done waits for the rest of its body, to be kept
rather than closed (and the next stream spared a new connection, and a TLS handshake)."""
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header name as RFC 9110 allows it (a token): nothing that could end it early."""
HEAD_TOO_LARGE = f"the upstream sent a head (headers or trailers) over {MAX_HEAD_BYTES} bytes"


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


class Proxy:
    """An HTTP proxy named by the environment: where to connect, and the credentials of its
    URL as a `Proxy-Authorization` value."""

    __slots__ = ("authorization", "host", "port")

    def __init__(self, url: str) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the proxy {parts.scheme}://{parts.hostname}:{parts.port or ''} "
                             "is not an http:// proxy, the only kind the gateway speaks")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.authorization: str | None = None
        if parts.username is not None:
            user = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            self.authorization = f"Basic {base64.b64encode(user.encode()).decode()}"


def proxy_for(origin: Origin) -> Proxy | None:
    """The proxy the environment names for `origin` (`HTTPS_PROXY` or `HTTP_PROXY` by its
    scheme, else `ALL_PROXY`; upper or lower case), None when there is none or `NO_PROXY`
    exempts its host; ValueError for a proxy URL that is not http://."""
    proxies = urllib.request.getproxies()
    url = proxies.get("https" if origin.tls else "http") or proxies.get("all")
    if not url or urllib.request.proxy_bypass(origin.host):
        return None
    return Proxy(url)


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
        self._finishing: asyncio.TimerHandle | None = None

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
            self.on_data = functools.partial(settle, arrived, None)
            done, _ = await asyncio.wait({arrived}, timeout=max(0.0, deadline - loop.time()))
            if not done:
                break
            data += self.take()
        return (data + self.take())[:limit]

    def close(self, *, finishing: bool = False) -> None:
        """Done with the answer: its connection goes back to the pool when the body was read
        to its end and the upstream keeps connections alive, else it is closed at once.
        `finishing` says the reader has all it wants (a stream that reached stream.end) while
        the body's last bytes may still be on their way: they are awaited for FINISH_WAIT
        seconds, and discarded, before the connection is judged."""
        if self._released:
            return
        self._released = True
        if finishing:
            self.take()  # not wanted; the socket is read again if it was paused
            if not (self.complete or self.failure):
                self.on_data = self._drain
                self._finishing = asyncio.get_running_loop().call_later(FINISH_WAIT,
                                                                        self._release)
                return
        self._release()

    def _drain(self) -> None:
        self.take()  # discarded, and the socket read again if it was paused
        if self.complete or self.failure:
            self._release()

    def _release(self) -> None:
        if self._finishing is not None:
            self._finishing.cancel()
            self._finishing = None
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


class _Refused(Exception):
    """An answer the connection stops reading; the message says why."""


class _Connection(asyncio.Protocol):
    """One connection to an origin, answering one request at a time: interim (1xx) answers
    are skipped, trailers are not headers, and an upstream that sends more than its answer,
    or a head larger than MAX_HEAD_BYTES, loses the connection."""

    def __init__(self, pool: ConnectionPool, origin: Origin) -> None:
        self.pool = pool
        self.origin = origin
        self.transport: asyncio.Transport
        self.closed = False
        self.idle_until = 0.0
        """When a kept connection expires (loop time)."""
        self.response: Response | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._interim = False
        """The message being read is a 1xx, to be skipped."""
        self._headers_done = False
        """The answer's headers are in: what the parser reports as headers now are trailers."""
        self._answered = False
        """The answer is complete: any byte more is a broken upstream's."""
        self._head_bytes = 0
        """Bytes of header (and trailer) fields of the message being read."""
        self._unparsed = 0
        """Bytes received since the parser last made progress (a header or chunk line that
        does not end, which the parser keeps until it does)."""
        self._progress = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        if self._parser is None or self._answered:
            self.abort()  # bytes while idle or after the answer: the connection is not trusted
            return
        self._progress = False
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            refused = exc.__context__
            if not isinstance(refused, _Refused):
                raise
            self._fail(str(refused))
            return
        except httptools.HttpParserError as exc:
            self._fail(f"the upstream sent a malformed answer ({exc})")
            return
        if self._progress:
            self._unparsed = 0
        else:
            self._unparsed += len(data)
            if self._unparsed > MAX_HEAD_BYTES:
                self._fail(HEAD_TOO_LARGE)

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
    def on_message_begin(self) -> None:
        if self._answered:
            raise _Refused("the upstream sent bytes after its answer")
        self._head_bytes = 0

    def on_status(self, reason: bytes) -> None:
        self._head_bytes += len(reason)

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.response is not None
        self._head_bytes += len(name) + len(value) + 4
        if self._head_bytes > MAX_HEAD_BYTES:
            raise _Refused(HEAD_TOO_LARGE)
        if self._headers_done:
            return  # a trailer: nothing a stream needs, and not a header of the answer
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers = self.response.headers
        headers[key] = f"{headers[key]}, {text}" if key in headers else text

    def on_headers_complete(self) -> None:
        assert self.response is not None and self._parser is not None
        self._progress = True
        status = self._parser.get_status_code()
        if status < 200:  # 100 Continue, 103 Early Hints: the answer follows
            self._interim = True
            self.response.headers.clear()
            return
        self._headers_done = True
        self.response._headers_complete(status)

    def on_body(self, body: bytes) -> None:
        assert self.response is not None
        self._progress = True
        self.response._data(body)

    def on_chunk_complete(self) -> None:
        self._progress = True

    def on_message_complete(self) -> None:
        assert self.response is not None and self._parser is not None
        self._progress = True
        if self._interim:
            self._interim = False
            return
        self._answered = True
        if not self._parser.should_keep_alive():
            self.closed = True  # the upstream closes it; never reused
        self.response._end(None)

    # for the pool and the response
    def send(self, head: bytes, body: bytes) -> Response:
        self.response = Response(self)
        self._parser = httptools.HttpResponseParser(self)
        self._interim = self._headers_done = self._answered = False
        self._unparsed = 0
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
        self._proxies: dict[tuple[str, str, int], Proxy | None] = {}

    def proxy(self, url: str) -> Proxy | None:
        """The proxy requests to `url` go through, read from the environment once per origin;
        ValueError for a URL or a proxy this client cannot use."""
        return self._proxy(Origin(url))

    def _proxy(self, origin: Origin) -> Proxy | None:
        if origin.key not in self._proxies:
            self._proxies[origin.key] = proxy_for(origin)
        return self._proxies[origin.key]

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        """POST `body` and return once the status and headers have come; HTTPFailure when
        the upstream cannot be reached or does not answer within the read timeout."""
        origin = Origin(url)
        for name, value in headers.items():
            if not HEADER_NAME.fullmatch(name) or any(c in value for c in "\r\n\0"):
                raise HTTPFailure(f"the upstream request's header {name!r} is not one HTTP "
                                  "can carry (a name that is not a token, or a line break or "
                                  "NUL in its value)")
        proxy = self._proxy(origin)
        target = origin.target
        if proxy is not None and not origin.tls:  # absolute-form, to the proxy itself
            target = f"http://{origin.netloc}{target}"
            if proxy.authorization is not None:
                headers = {**headers, "Proxy-Authorization": proxy.authorization}
        head = "".join([f"POST {target} HTTP/1.1\r\nHost: {origin.netloc}\r\n",
                        *(f"{name}: {value}\r\n" for name, value in headers.items()),
                        f"Content-Length: {len(body)}\r\n\r\n"]).encode("latin-1")
        try:
            async with asyncio.timeout(self.connect_timeout):  # no slot lost to a late timeout
                await self.slots.acquire()
        except TimeoutError:
            raise HTTPFailure("no connection to the upstream was free in time",
                              timeout=True) from None
        try:
            while True:
                connection, reused = self._idle_connection(origin), True
                if connection is None:
                    connection, reused = await self._connect(origin, proxy), False
                response = connection.send(head, body)
                try:
                    await asyncio.wait({response._head}, timeout=self.read_timeout)
                except asyncio.CancelledError:
                    connection.abort()
                    raise
                if response.status == 407 and proxy is not None and not origin.tls:
                    # (through a tunnel, the proxy's own 407 is the CONNECT's, in _tunnel)
                    connection.abort()
                    raise HTTPFailure(f"the proxy {proxy.host}:{proxy.port} refused the "
                                      "request (HTTP 407: its credentials are missing or "
                                      "wrong in the proxy URL)")
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

    async def _connect(self, origin: Origin, proxy: Proxy | None) -> _Connection:
        loop = asyncio.get_running_loop()
        tls = self._tls_context() if origin.tls else None
        try:
            _, connection = await asyncio.wait_for(
                self._open(loop, origin, proxy, tls), self.connect_timeout)
        except TimeoutError:
            raise HTTPFailure("the upstream did not accept a connection in time",
                              timeout=True) from None
        except ssl.SSLCertVerificationError as exc:
            raise HTTPFailure(f"the upstream's TLS certificate is not trusted "
                              f"({exc.verify_message}); a private CA is trusted by naming its "
                              "file in SSL_CERT_FILE") from None
        except OSError as exc:
            where = "the upstream" if proxy is None else f"the proxy {proxy.host}:{proxy.port}"
            raise HTTPFailure(f"{where} could not be reached ({exc.strerror or exc})") \
                from None
        return connection

    async def _open(self, loop: asyncio.AbstractEventLoop, origin: Origin,
                    proxy: Proxy | None, tls: ssl.SSLContext | None,
                    ) -> tuple[asyncio.BaseTransport, _Connection]:
        """A connection to `origin`: direct, to the proxy (http), or through a tunnel the
        proxy opens (https, TLS inside the tunnel)."""
        def protocol() -> _Connection:
            return _Connection(self, origin)

        if proxy is None:
            return await loop.create_connection(
                protocol, origin.host, origin.port, ssl=tls,
                server_hostname=origin.host if tls else None)
        if tls is None:
            return await loop.create_connection(protocol, proxy.host, proxy.port)
        tunnel = await _tunnel(loop, proxy, origin)
        try:
            return await loop.create_connection(protocol, sock=tunnel, ssl=tls,
                                                server_hostname=origin.host)
        except BaseException:
            tunnel.close()
            raise

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


async def _tunnel(loop: asyncio.AbstractEventLoop, proxy: Proxy,
                  origin: Origin) -> socket.socket:
    """A socket to `proxy` on which it has opened a tunnel to `origin` (HTTP CONNECT);
    HTTPFailure when the proxy refuses."""
    infos = await loop.getaddrinfo(proxy.host, proxy.port, type=socket.SOCK_STREAM)
    failure: OSError = OSError(f"no address for {proxy.host}")
    for family, kind, protocol, _, address in infos:
        sock = socket.socket(family, kind, protocol)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
            break
        except OSError as exc:
            sock.close()
            failure = exc
        except BaseException:  # the connect timeout's cancellation: no socket left open
            sock.close()
            raise
    else:
        raise failure
    try:
        authority = f"{origin.host}:{origin.port}" if ":" not in origin.host \
            else f"[{origin.host}]:{origin.port}"
        request = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n"
        if proxy.authorization is not None:
            request += f"Proxy-Authorization: {proxy.authorization}\r\n"
        await loop.sock_sendall(sock, f"{request}\r\n".encode("latin-1"))
        head = b""
        while b"\r\n\r\n" not in head:
            if len(head) > MAX_HEAD_BYTES:
                raise HTTPFailure(f"the proxy {proxy.host}:{proxy.port} sent an answer head "
                                  f"longer than {MAX_HEAD_BYTES} bytes")
            data = await loop.sock_recv(sock, 4096)
            if not data:
                raise HTTPFailure(f"the proxy {proxy.host}:{proxy.port} closed the connection "
                                  f"instead of opening a tunnel to {authority}")
            head += data
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        _, _, status = status_line.partition(" ")
        if not status.startswith("2") or not head.endswith(b"\r\n\r\n"):
            raise HTTPFailure(f"the proxy {proxy.host}:{proxy.port} refused the tunnel to "
                              f"{authority} (HTTP {status.strip() or status_line!r})")
    except BaseException:
        sock.close()
        raise
    return sock
