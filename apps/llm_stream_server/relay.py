"""From an upstream's event batches to the bytes of the response, against the clock.

The relay flushes every batch as soon as it arrives, sends a keep-alive comment whenever the
upstream has been quiet for the keep-alive interval (above all while the model thinks about its
first token), and ends the stream itself, with an `error` event and `stream.end`, when the
upstream breaks, stops short or stays silent past the deadline, or when the server stops. A
client that goes away cancels the upstream at once: the relay closes the feed, and with it the
upstream's connection, whatever it was waiting for.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic_core import to_json

from llm_stream import Encoder
from llm_stream.translate.stream import TEXT_DELTA

from .access_log import StreamRecord
from .upstream import EventBatch, EventFeed, UpstreamBroke

KEEP_ALIVE = b": keep-alive\n\n"
STOPPING_MESSAGE = "the server is shutting down; the request may be retried"


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


class Relay:
    """The response body of one stream: the feed's events framed as they come, kept alive,
    and ended; `stop` ends it early, as the server does when it stops."""

    def __init__(self, feed: EventFeed, framing: Framing, progress: Progress,
                 deadlines: Deadlines) -> None:
        self.feed = feed
        self.framing = framing
        self.progress = progress
        self.deadlines = deadlines
        self._stopping = False

    def stop(self) -> None:
        """End the stream at its next step with an error saying that the server is stopping
        (D-SERVER-STOP), whether it waits for the upstream or not."""
        self._stopping = True
        self.feed.wake()

    async def pieces(self) -> AsyncIterator[bytes]:
        """The body, piece by piece; closing it closes the feed."""
        feed, framing, progress, deadlines = (self.feed, self.framing, self.progress,
                                              self.deadlines)
        record = progress.record
        loop = asyncio.get_running_loop()
        try:
            quiet_since = loop.time()
            keep_alive_at = quiet_since + deadlines.keep_alive
            while not progress.ended:
                if self._stopping:
                    yield framing.write(progress.finish("overloaded", STOPPING_MESSAGE))
                    record.outcome = "server_stopped"
                    break
                try:
                    events = feed.take()
                except UpstreamBroke as broke:
                    yield framing.write(progress.finish(broke.code, broke.message))
                    record.outcome = f"upstream_broke:{broke.code}"
                    break
                now = loop.time()
                if events:
                    quiet_since, keep_alive_at = now, now + deadlines.keep_alive
                    yield framing.write(progress.take(events))
                    continue
                if feed.finished:
                    yield framing.write(progress.finish(
                        "truncated", "the upstream ended its stream without stream.end"))
                    record.outcome = "upstream_cut"
                    break
                if now - quiet_since >= deadlines.silence:
                    yield framing.write(progress.finish(
                        "truncated", f"the upstream sent nothing for {deadlines.silence:g} s"))
                    record.outcome = "upstream_silent"
                    break
                if now >= keep_alive_at:
                    keep_alive_at = now + deadlines.keep_alive
                    yield KEEP_ALIVE
                await feed.wait(min(keep_alive_at, quiet_since + deadlines.silence) - now)
            if ending := framing.close():
                yield ending
        except (asyncio.CancelledError, GeneratorExit):
            record.outcome = "client_closed"
            raise
        finally:
            await feed.aclose()
            record.emit()
