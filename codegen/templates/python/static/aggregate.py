"""Fold a stream's events into its final result: what a non-streaming client would have received.

Text is joined per content index, and reasoning apart from it with the signature of its block;
tool calls keep their raw and parsed arguments, usage keeps the last running totals (decision
D-USAGE-TOTALS), and counts never reported stay None, never zero. Works on typed events and on
the raw dicts of the fast path alike, whatever their shape: a member of the wrong type (which only
`Decoder(validate=False)` passes) is left out, never raised on. A tool call counts only between
stream.start and stream.end, before any error (decision D-TOOL-CALL-CHECKS).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .jsontext import loads


def _get(event: Any, name: str) -> Any:
    if isinstance(event, dict):
        return event.get(name)
    if not isinstance(event, BaseModel):
        return None
    value = getattr(event, name, None)
    if value is None and event.model_extra:
        value = event.model_extra.get(name)
    return value


def _int(event: Any, name: str) -> int | None:
    """A member that should be an integer, or None (a bool is no integer)."""
    value = _get(event, name)
    return value if type(value) is int else None


def _str(event: Any, name: str) -> str | None:
    """A member that should be a string (a registered value's enum member is one), or None."""
    value = _get(event, name)
    return value if isinstance(value, str) else None


@dataclass
class ToolCall:
    index: int
    id: str
    name: str
    arguments: str
    parsed: Any = None
    """The arguments decoded from JSON, or None when they are not JSON."""


@dataclass
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


@dataclass
class Aggregate:
    """The final result of one stream."""

    model: str | None = None
    request_id: str | None = None
    created: int | None = None
    text: dict[int, str] = field(default_factory=dict)
    reasoning: dict[int, str] = field(default_factory=dict)
    """The reasoning of each reasoning block, never part of the answer (decision D-REASONING)."""
    reasoning_signatures: dict[int, str] = field(default_factory=dict)
    """The signature of each reasoning block that has one, to send back verbatim with it."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reasons: dict[int, str] = field(default_factory=dict)
    usage: Usage | None = None
    error: tuple[str, str] | None = None
    """(code, message) of the error event, if one came."""
    ended: bool = False
    """Whether stream.end arrived."""
    _started: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def output_text(self) -> str:
        """All text blocks joined in index order."""
        return "".join(self.text[index] for index in sorted(self.text))

    @property
    def stop_reason(self) -> str | None:
        """The reason of the last block closed: the reason the turn stopped."""
        return next(reversed(self.stop_reasons.values()), None)

    def add(self, event: Any) -> None:
        """Fold one event in; unknown event types are ignored, as parsers ignore unknown data."""
        kind = _get(event, "type")
        index = _int(event, "index")
        if kind in ("content.delta", "reasoning.delta"):
            text = _str(_get(event, "delta"), "text")
            if index is not None and text is not None:
                joined = self.text if kind == "content.delta" else self.reasoning
                joined[index] = joined.get(index, "") + text
        elif kind == "reasoning.signature":
            signature = _str(event, "signature")
            if index is not None and signature is not None:
                self.reasoning_signatures[index] = signature
        elif kind == "tool.call":
            self._tool_call(event, index)
        elif kind == "content.stop":
            reason = _str(event, "stop_reason")
            if index is not None and reason is not None:
                self.stop_reasons[index] = reason
        elif kind == "usage":
            self.usage = Usage(*(_int(event, name) for name in (
                "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens",
                "cache_creation_input_tokens")))
        elif kind == "stream.start":
            self._started = True
            self.model = _str(event, "model")
            self.request_id = _str(event, "request_id")
            self.created = _int(event, "created")
        elif kind == "error":
            code, message = _str(event, "code"), _str(event, "message")
            if code is not None and message is not None:
                self.error = (code, message)
        elif kind == "stream.end":
            self.ended = True
            self.request_id = self.request_id or _str(event, "request_id")

    def _tool_call(self, event: Any, index: int | None) -> None:
        """A call to make: one that came in its place, with every member of its type."""
        call_id, name, arguments = (_str(event, n) for n in ("id", "name", "arguments"))
        if (
            not self._started or self.ended or self.error is not None or index is None
            or call_id is None or name is None or arguments is None
        ):
            return
        try:
            parsed = loads(arguments)
        except ValueError:  # not JSON text
            parsed = None
        self.tool_calls.append(ToolCall(index, call_id, name, arguments, parsed))


def aggregate(events: Iterable[Any]) -> Aggregate:
    """Fold a whole stream of events (typed or raw) into its `Aggregate`."""
    result = Aggregate()
    for event in events:
        result.add(event)
    return result
