"""A loopback HTTP server in the part of a vendor upstream, for testing gateways.

It answers every POST with what a responder gives for the request (a status, headers and body
chunks, with pauses between them, or a connection cut mid-body) and notes each client that
hangs up before its body is complete: that is how a test sees a gateway cancel an upstream
request. HTTP/1.1 with keep-alive and chunked bodies, as a connection pool expects; nothing
beyond what a gateway's client sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Received:
    """A request as the upstream saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """What to answer: `chunks` go out one by one, `pause` seconds apart; with `cut`, the
    connection is closed after them without ending the body."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    pause: float = 0.0
    cut: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    stream: Callable[[], AsyncIterator[bytes]] | None = None
    """Yields the body instead of `chunks`, for bodies made as they are sent."""
    close: bool = False
    """Close the connection once the body is complete, without saying so beforehand, as an
    upstream does when it drops an idle connection."""


Responder = Callable[[Received], Awaitable[Reply] | Reply]


class ReplayServer:
    """The server; `received` and `hung_up` are what tests look at."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.received: list[Received] = []
        self.hung_up = 0
        """Responses whose client closed the connection before their body was complete."""
        self.completed = 0
        self.hung_up_event = threading.Event()
        self.connections = 0
        """Connections accepted: fewer than requests when the client keeps them alive."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while (request := await _read_request(reader)) is not None:
                self.received.append(request)
                reply = self.responder(request)
                if not isinstance(reply, Reply):
                    reply = await reply
                if not await self._answer(reply, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _answer(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Send `reply`; False when the connection is done with (cut, or closed by the peer)."""
        head = [f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Status')}",
                f"Content-Type: {reply.content_type}", "Transfer-Encoding: chunked",
                *(f"{k}: {v}" for k, v in reply.headers.items())]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        peer_gone = asyncio.ensure_future(reader.read(1))
        try:
            async for chunk in _body(reply):
                if reply.pause and not peer_gone.done():
                    await asyncio.wait({peer_gone}, timeout=reply.pause)
                if peer_gone.done():
                    self._note_hang_up()
                    return False
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
            if reply.cut:
                return False
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            self.completed += 1
            return not (reply.close or peer_gone.done())
        except ConnectionError:
            self._note_hang_up()
            return False
        finally:
            peer_gone.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await peer_gone

    def _note_hang_up(self) -> None:
        self.hung_up += 1
        self.hung_up_event.set()

    @contextlib.contextmanager
    def running(
        self, loop_factory: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop
    ) -> Iterator[str]:
        """Serve on 127.0.0.1 in a thread of its own, on a loop `loop_factory` makes; yields
        the base URL."""
        loop = loop_factory()
        started = threading.Event()
        port: list[int] = []
        stop = loop.create_future()

        handlers: set[asyncio.Task[None]] = set()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            handlers.add(task)
            try:
                await self.handle(reader, writer)
            except asyncio.CancelledError:
                pass  # the server is stopping: nothing is left to answer
            finally:
                handlers.discard(task)

        async def serve() -> None:
            server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
            port.append(server.sockets[0].getsockname()[1])
            started.set()
            async with server:
                await stop
            for task in list(handlers):
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
        thread.start()
        started.wait(10)
        try:
            yield f"http://127.0.0.1:{port[0]}"
        finally:
            loop.call_soon_threadsafe(stop.set_result, None)
            thread.join(10)
            loop.close()


async def _body(reply: Reply) -> AsyncIterator[bytes]:
    if reply.stream is not None:
        async for chunk in reply.stream():
            yield chunk
        return
    for chunk in reply.chunks:
        yield chunk


async def _read_request(reader: asyncio.StreamReader) -> Received | None:
    """One request off the connection; None when the client closed it between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while size := int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16):
            body += (await reader.readexactly(size + 2))[:-2]
        await reader.readuntil(b"\r\n")
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Received(method, path, headers, body)
