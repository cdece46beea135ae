"""What the server streams from: the built-in mock model or a vendor behind the gateway.

An upstream opens a stream for a checked LLM-Stream request and hands back an `EventFeed`: its
events as they arrive, which the relay numbers, frames and watches the clock over. Anything that
goes wrong before the first event is an `ErrorReply` raised by `open`, so that the client gets a
status; anything after it is an `UpstreamBroke` raised by the feed.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

from .futures import settle

EventBatch = list[dict[str, Any]]
"""Events as plain dicts (`type` and fields; `v` and `seq` are the relay's to set)."""

EventStream = AsyncGenerator[EventBatch, None]
"""Batches of events made by a coroutine, such as the mock model's."""

QUEUE_EVENTS = 256
"""How far a coroutine upstream may run ahead of a slow client before it waits (back-pressure)."""


class UpstreamBroke(Exception):
    """The upstream failed after its stream started; the message says how (no prompt text)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class EventFeed(ABC):
    """An upstream's answer as the relay reads it: `take` hands over every event that has come
    since the last call, and the relay waits only when none has. Whoever receives the answer,
    a connection's callbacks or a task, calls `wake` when there is more: per event, the task of
    the response is the one that runs."""

    def __init__(self) -> None:
        self._waiter: asyncio.Future[bool] | None = None

    @abstractmethod
    def take(self) -> EventBatch:
        """The events that came since the last call, maybe none; UpstreamBroke once they
        are all taken and the upstream failed."""

    @property
    @abstractmethod
    def finished(self) -> bool:
        """The answer is over: `take` has nothing more to give."""

    @abstractmethod
    async def aclose(self) -> None:
        """Abandon the answer at once, closing its connection."""

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    async def wait(self, timeout: float) -> bool:
        """Return True when there may be something to take, False after `timeout` seconds
        without (a timer rather than a task: nearly every event is waited for)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiter = waiter
        timer = loop.call_later(timeout, settle, waiter, False)
        try:
            return await waiter
        finally:
            timer.cancel()
            self._waiter = None


class PumpedFeed(EventFeed):
    """A feed filled by a task that reads a coroutine's batches, from the first `take`."""

    def __init__(self, batches: EventStream) -> None:
        super().__init__()
        self._batches = batches
        self._events: EventBatch = []
        self._pump: asyncio.Task[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._failure: UpstreamBroke | None = None
        self._done = False

    def take(self) -> EventBatch:
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(self._run())
        events, self._events = self._events, []
        if self._drained is not None:
            settle(self._drained, None)
        if not events and self._failure is not None:
            raise self._failure
        return events

    @property
    def finished(self) -> bool:
        return self._done and not self._events and self._failure is None

    async def _run(self) -> None:
        try:
            async for batch in self._batches:
                self._events.extend(batch)
                self.wake()
                if len(self._events) >= QUEUE_EVENTS:
                    self._drained = asyncio.get_running_loop().create_future()
                    await self._drained
                    self._drained = None
        except UpstreamBroke as broke:
            self._failure = broke
        finally:
            self._done = True
            self.wake()
            await self._batches.aclose()

    async def aclose(self) -> None:
        if self._pump is None:
            await self._batches.aclose()
            return
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(self._pump)


class Upstream(Protocol):
    """A source of LLM-Stream events for requests."""

    @property
    def name(self) -> str:
        """What the access log calls this upstream."""
        ...

    async def open(self, request: Mapping[str, Any]) -> EventFeed:
        """Start answering `request`: raises `ErrorReply` when the upstream refuses it."""
        ...

    async def aclose(self) -> None:
        """Release what the upstream holds (connections) when the server stops."""
        ...
