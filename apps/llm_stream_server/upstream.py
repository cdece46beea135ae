"""What the server streams from: the built-in mock model or a vendor behind the gateway.

An upstream opens a stream for a checked LLM-Stream request and hands back its events in
batches, as they arrive; the relay numbers them, frames them and watches the clock. Anything
that goes wrong before the first batch is an `ErrorReply` raised by `open`, so that the client
gets a status; anything after it is an `UpstreamBroke` raised by the iterator.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

EventBatch = list[dict[str, Any]]
"""Events as plain dicts (`type` and fields; `v` and `seq` are the relay's to set)."""

EventStream = AsyncGenerator[EventBatch, None]
"""An upstream's answer; closing it abandons the answer at once (and its connection)."""


class UpstreamBroke(Exception):
    """The upstream failed after its stream started; the message says how (no prompt text)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Upstream(Protocol):
    """A source of LLM-Stream events for requests."""

    @property
    def name(self) -> str:
        """What the access log calls this upstream."""
        ...

    async def open(self, request: Mapping[str, Any]) -> EventStream:
        """Start answering `request`: raises `ErrorReply` when the upstream refuses it."""
        ...

    async def aclose(self) -> None:
        """Release what the upstream holds (connections) when the server stops."""
        ...
