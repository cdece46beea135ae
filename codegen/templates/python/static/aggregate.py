"""Fold a stream's events into its final result: what a non-streaming client would have received.

Text is joined per content index, and reasoning apart from it with the signature of its block;
tool calls keep their raw and parsed arguments, usage keeps the last running totals (decision
D-USAGE-TOTALS), and counts never reported stay None, never zero. Works on typed events and on
the raw dicts of the fast path alike.
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
    value = getattr(event, name, None)
    if value is None and isinstance(event, BaseModel) and event.model_extra:
        value = event.model_extra.get(name)
    return value


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
        if kind == "content.delta":
            delta = _get(event, "delta")
            index = _get(event, "index")
            self.text[index] = self.text.get(index, "") + (_get(delta, "text") or "")
        elif kind == "reasoning.delta":
            delta = _get(event, "delta")
            index = _get(event, "index")
            self.reasoning[index] = self.reasoning.get(index, "") + (_get(delta, "text") or "")
        elif kind == "reasoning.signature":
            self.reasoning_signatures[_get(event, "index")] = _get(event, "signature")
        elif kind == "tool.call":
            arguments = _get(event, "arguments")
            try:
                parsed = loads(arguments)
            except (TypeError, ValueError):  # not JSON text, or not text at all
                parsed = None
            self.tool_calls.append(
                ToolCall(_get(event, "index"), _get(event, "id"), _get(event, "name"),
                         arguments, parsed)
            )
        elif kind == "content.stop":
            self.stop_reasons[_get(event, "index")] = _get(event, "stop_reason")
        elif kind == "usage":
            self.usage = Usage(*(_get(event, name) for name in (
                "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens",
                "cache_creation_input_tokens")))
        elif kind == "stream.start":
            self.model = _get(event, "model")
            self.request_id = _get(event, "request_id")
            self.created = _get(event, "created")
        elif kind == "error":
            self.error = (_get(event, "code"), _get(event, "message"))
        elif kind == "stream.end":
            self.ended = True
            self.request_id = self.request_id or _get(event, "request_id")


def aggregate(events: Iterable[Any]) -> Aggregate:
    """Fold a whole stream of events (typed or raw) into its `Aggregate`."""
    result = Aggregate()
    for event in events:
        result.add(event)
    return result
