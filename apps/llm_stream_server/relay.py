"""From an upstream's event batches to the bytes of the response, against the clock.

The relay flushes every batch as soon as it arrives, sends a keep-alive comment whenever the
upstream has been quiet for the keep-alive interval (above all while the model thinks about its
first token), and ends the stream itself, with an `error` event and `stream.end`, when the
upstream breaks, stops short or stays silent past the deadline. A client that goes away cancels
the upstream at once: the upstream is read by a task of its own that the relay cancels.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic_core import to_json

from llm_stream import Encoder
from llm_stream.translate.stream import TEXT_DELTA

from .access_log import StreamRecord
from .upstream import EventBatch, EventStream, UpstreamBroke

KEEP_ALIVE = b": keep-alive\n\n"
QUEUE_BATCHES = 64
"""How far the upstream may run ahead of a slow client before it waits (back-pressure)."""


@dataclass(frozen=True, slots=True)
class Deadlines:
    """Seconds of upstream silence before a keep-alive comment, and before giving up."""

    keep_alive: float = 15.0
    silence: float = 120.0


class Framing(Protocol):
    """How events become the bytes of one response."""

    def write(self, events: Sequence[Mapping[str, Any]]) -> bytes: ...

    def close(self) -> bytes: ...


_DELTA_SHAPES = (("v", "seq", "type", "index", "role", "delta"), ("type", "index", "role", "delta"))
"""The members of a text delta as the translators and the mock model make it, in order."""


class LLMStreamFraming:
    """LLM-Stream events, numbered from 0 whatever the upstream numbered them, as `Encoder`
    writes them. A text delta of the usual shape, most of every stream, is framed around its
    text alone (pydantic-core escapes a string as the json module does): the same bytes, at a
    fraction of the cost."""

    def __init__(self) -> None:
        self._encoder = Encoder()

    def write(self, events: Sequence[Mapping[str, Any]]) -> bytes:
        encoder = self._encoder
        pieces = []
        for event in events:
            if tuple(event) in _DELTA_SHAPES and event["type"] == "content.delta":
                index, delta = event["index"], event["delta"]
                if (type(index) is int and event["role"] == "assistant"
                        and type(delta) is dict and len(delta) == 1
                        and type(text := delta.get("text")) is str):
                    pieces.append(TEXT_DELTA % (encoder.seq, index, to_json(text)))
                    encoder.seq += 1
                    continue
            pieces.append(encoder.encode(event))
        return b"".join(pieces)

    def close(self) -> bytes:
        return b""


class Progress:
    """What has been sent of one stream, to end it correctly whenever it has to end."""

    def __init__(self, start: Mapping[str, Any], record: StreamRecord) -> None:
        self.start = dict(start)
        """The fields of a stream.start (model, created, request_id) to send if none came."""
        self.record = record
        self.started = self.errored = self.ended = False

    def take(self, batch: EventBatch) -> EventBatch:
        """The events of `batch` to send: none after stream.end."""
        sent: EventBatch = []
        for event in batch:
            if self.ended:
                break
            kind = event.get("type")
            if kind == "stream.start":
                self.started = True
            elif kind == "error":
                self.errored = True
                self.record.outcome = f"error:{event.get('code')}"
            elif kind == "stream.end":
                self.ended = True
            elif kind == "usage":
                self.record.input_tokens = event.get("input_tokens")
                self.record.output_tokens = event.get("output_tokens")
            sent.append(event)
        self.record.events += len(sent)
        return sent

    def finish(self, code: str, message: str) -> EventBatch:
        """The events that end the stream now: stream.start if it never came, one error (if
        none was sent yet) and stream.end, echoing the request_id (LS-META-2)."""
        echo = {"request_id": self.start["request_id"]} if "request_id" in self.start else {}
        ending: EventBatch = []
        if not self.started:
            ending.append({"type": "stream.start", **self.start})
        if not self.errored:
            ending.append({"type": "error", "code": code, "message": message})
        ending.append({"type": "stream.end", **echo})
        return self.take(ending)


_END = object()
_TICK = object()


async def _pump(batches: EventStream, queue: asyncio.Queue[object]) -> None:
    """Read the upstream into the queue; what ends it goes into the queue last."""
    try:
        async for batch in batches:
            await queue.put(batch)
        await queue.put(_END)
    except UpstreamBroke as broke:
        await queue.put(broke)
    finally:
        await batches.aclose()


def _tick(queue: asyncio.Queue[object]) -> None:
    if queue.empty():
        queue.put_nowait(_TICK)


async def _next(queue: asyncio.Queue[object], timeout: float) -> object:
    """The next item of the queue, or _TICK after `timeout` seconds without one (a timer
    rather than a task a wait, since nearly every event is waited for)."""
    if not queue.empty():
        return queue.get_nowait()
    timer = asyncio.get_running_loop().call_later(timeout, _tick, queue)
    try:
        return await queue.get()
    finally:
        timer.cancel()


def _coalesce(first: EventBatch, queue: asyncio.Queue[object]) -> tuple[EventBatch, object]:
    """`first` with the batches queued behind it, so that a client that fell behind gets
    them in one write; also the first queued item that is not a batch, or None."""
    events = list(first)
    while not queue.empty():
        item = queue.get_nowait()
        if not isinstance(item, list):
            return events, item
        events.extend(item)
    return events, None


async def relay(
    batches: EventStream,
    framing: Framing,
    progress: Progress,
    deadlines: Deadlines,
) -> AsyncIterator[bytes]:
    """The response body: each upstream batch framed as it comes, kept alive, and ended."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue(QUEUE_BATCHES)
    pump = loop.create_task(_pump(batches, queue))
    record = progress.record
    try:
        quiet_since = loop.time()
        pending: object = None
        while not progress.ended:
            if pending is not None:
                item, pending = pending, None
            else:
                left = deadlines.silence - (loop.time() - quiet_since)
                item = await _next(queue, min(deadlines.keep_alive, left))
            if item is _TICK:
                quiet = loop.time() - quiet_since
                if quiet >= deadlines.silence:
                    yield framing.write(progress.finish(
                        "truncated", f"the upstream sent nothing for {deadlines.silence:g} s"))
                    record.outcome = "upstream_silent"
                    break
                if quiet >= deadlines.keep_alive:
                    yield KEEP_ALIVE
                continue
            quiet_since = loop.time()
            if isinstance(item, list):
                events, pending = _coalesce(item, queue)
                yield framing.write(progress.take(events))
            elif isinstance(item, UpstreamBroke):
                yield framing.write(progress.finish(item.code, item.message))
                record.outcome = f"upstream_broke:{item.code}"
            else:
                yield framing.write(progress.finish(
                    "truncated", "the upstream ended its stream without stream.end"))
                record.outcome = "upstream_cut"
        if ending := framing.close():
            yield ending
    except (asyncio.CancelledError, GeneratorExit):
        record.outcome = "client_closed"
        raise
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(pump)
        record.emit()
