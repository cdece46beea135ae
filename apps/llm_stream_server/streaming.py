"""The response of a stream: each piece of the body sent as it comes, with nothing in between.

A piece is written with one call of the server's `send`, at once, so every event is flushed as
it is produced; the server writes it to the socket in that call. Beside the body, one task per
stream waits for the client's `http.disconnect`, which cancels the body at once (and with it the
upstream request), whether or not anything is being sent just then. The server's exit
(`stop_streams`) asks each body to end itself, so that the client reads an ending rather than a
cut (an LLM-Stream body sends `error` and `stream.end`), and cuts what has not ended within
`STOP_GRACE`: uvicorn sends no disconnect then and would wait out its graceful-shutdown
timeout. Per event this costs one `send` and nothing else: no task, no
timer, no memory stream in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Callable, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .futures import settle

STOP_GRACE = 2.0
"""Seconds a stream is given to send its ending when the server stops (a client that reads
nothing would hold it up), before it is cut."""

_STOPPING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Future[None]] = (
    weakref.WeakKeyDictionary()
)
"""Each event loop's signal that the server is stopping, one future that every stream waits
for (no task of its own per stream)."""


def stop_streams() -> None:
    """End every open stream of the process; called as the server exits, from its signal
    handler, hence through each loop's thread-safe door."""
    for loop, stopping in list(_STOPPING.items()):
        with contextlib.suppress(RuntimeError):  # a loop that has closed: nothing is open
            loop.call_soon_threadsafe(settle, stopping, None)


class EventStreamResponse(Response):
    """A `text/event-stream` response whose body is the pieces of `body`, sent one by one."""

    media_type = "text/event-stream"

    def __init__(self, body: AsyncIterator[bytes], headers: Mapping[str, str],
                 stop: Callable[[], None] | None = None) -> None:
        self.body_iterator = body
        self.stop = stop
        """Asks the body to end itself, when the server stops."""
        self.status_code = 200
        self.background = None
        self.init_headers({**headers, "X-Accel-Buffering": "no"})
        self._started = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        streaming = loop.create_task(self._stream(send))
        watching = loop.create_task(_disconnected(receive))
        stopping = _STOPPING.get(loop)
        if stopping is None:
            stopping = _STOPPING[loop] = loop.create_future()
        stopped = False
        try:
            await asyncio.wait((streaming, watching, stopping),
                               return_when=asyncio.FIRST_COMPLETED)
            stopped = stopping.done() and not (watching.done() or streaming.done())
            if stopped and self.stop is not None:
                self.stop()  # the body ends itself, unless the client does not read it
                await asyncio.wait((streaming, watching), timeout=STOP_GRACE,
                                   return_when=asyncio.FIRST_COMPLETED)
                stopped = not streaming.done()
        finally:
            for task in (watching, streaming):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await task
        if stopped and self._started:
            with contextlib.suppress(OSError):  # the client still listens: end the body
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stream(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        self._started = True
        body = self.body_iterator
        try:
            async for piece in body:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            aclose = getattr(body, "aclose", None)
            if aclose is not None:
                await aclose()


async def _disconnected(receive: Receive) -> None:
    """Return when the client has gone: the request body was read before the response began,
    so what is left to receive is the disconnect."""
    while (await receive())["type"] != "http.disconnect":
        pass
