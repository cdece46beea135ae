"""The built-in mock model: deterministic answers, so that the server runs with nothing set up.

Words stand for tokens. The answer to a user message is "You said: " and its text (a non-text
part shows as its media type); the answer to a tool result names the tool and repeats the
result. When the request declares tools and its last user message names one of them, the model
calls that tool instead, with arguments shaped by the tool's parameter schema. `max_tokens` and
`stop_sequences` cut the answer as a model would, and the stop reason says which did.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .upstream import EventFeed, EventStream, PumpedFeed

WORD = re.compile(r"\s*\S+")


@dataclass(frozen=True, slots=True)
class MockTiming:
    """How fast the mock model answers: seconds before its first token and between tokens."""

    first_token_delay: float = 0.0
    token_delay: float = 0.0


class MockModel:
    """The mock model as an upstream."""

    name = "mock"

    def __init__(self, timing: MockTiming = MockTiming()) -> None:
        self.timing = timing

    async def open(self, request: Mapping[str, Any]) -> EventFeed:
        return PumpedFeed(self._stream(answer(request, created=int(time.time()))))

    async def _stream(self, events: list[dict[str, Any]]) -> EventStream:
        start, *rest = events
        yield [start]
        if self.timing.first_token_delay:
            await asyncio.sleep(self.timing.first_token_delay)
        for event in rest:
            yield [event]
            if self.timing.token_delay and event["type"] in ("content.delta", "tool.call"):
                await asyncio.sleep(self.timing.token_delay)

    async def aclose(self) -> None:
        return None


def tokens(text: str) -> list[str]:
    """The mock's tokens: words with the white space before them."""
    return WORD.findall(text)


def message_text(message: Mapping[str, Any]) -> str:
    """A message's content as text; a non-text part stands as "[image/png image]"."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    pieces = []
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "text":
            pieces.append(str(part.get("text", "")))
        else:
            pieces.append(f"[{part.get('media_type', '?')} {part.get('type', 'part')}]")
    return " ".join(pieces)


def answer(request: Mapping[str, Any], *, created: int) -> list[dict[str, Any]]:
    """Every event of the mock's answer to a checked request, in order, without v and seq."""
    messages: Sequence[Mapping[str, Any]] = request["messages"]
    parameters: Mapping[str, Any] = request.get("parameters") or {}
    max_tokens = parameters.get("max_tokens")
    request_id = (request.get("metadata") or {}).get("request_id")
    echo = {"request_id": request_id} if isinstance(request_id, str) else {}
    input_tokens = sum(len(tokens(message_text(m))) for m in messages)
    start = {"type": "stream.start", "model": request["model"], "created": created, **echo}
    call = _requested_call(messages, request.get("tools") or [])
    if call is not None:
        name, arguments = call
        used = len(tokens(arguments))
        if max_tokens is not None and used > max_tokens:
            body = [{"type": "content.stop", "index": 0, "stop_reason": "max_tokens"}]
            used = 0
        else:
            call_id = f"call_{_calls_so_far(messages) + 1}"
            body = [
                {"type": "tool.call", "index": 0, "id": call_id, "name": name,
                 "arguments": arguments},
                {"type": "content.stop", "index": 0, "stop_reason": "tool_use"},
            ]
    else:
        pieces, stop_reason = _cut(_reply(messages), max_tokens,
                                   parameters.get("stop_sequences") or [])
        used = len(pieces)
        body = [
            *({"type": "content.delta", "index": 0, "role": "assistant",
               "delta": {"text": piece}} for piece in pieces),
            {"type": "content.stop", "index": 0, "stop_reason": stop_reason},
        ]
    usage = {"type": "usage", "input_tokens": input_tokens, "output_tokens": used}
    return [start, *body, usage, {"type": "stream.end", **echo}]


def _reply(messages: Sequence[Mapping[str, Any]]) -> str:
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        name = _tool_name(messages, last.get("tool_call_id"))
        return f"The tool {name} answered: {message_text(last)}"
    if last.get("role") == "user":
        said = message_text(last).strip()
        return f"You said: {said}" if said else "You said nothing."
    return "There is no user message to answer."


def _cut(text: str, max_tokens: int | None, stop_sequences: Sequence[str]) -> tuple[list[str], str]:
    """The tokens of `text` as a model limited by the request would send them, and why it
    stopped."""
    stop_reason = "end_turn"
    found = [text.find(s) for s in stop_sequences if s and s in text]
    if found:
        text, stop_reason = text[:min(found)], "stop_sequence"
    pieces = tokens(text)
    if max_tokens is not None and len(pieces) > max_tokens:
        return pieces[:max_tokens], "max_tokens"
    return pieces, stop_reason


def _requested_call(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> tuple[str, str] | None:
    """The declared tool the last user message names, and arguments for it, if any."""
    last = messages[-1] if messages else {}
    if last.get("role") != "user":
        return None
    text = message_text(last)
    for tool in tools:
        name = tool.get("name")
        if isinstance(name, str) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            arguments = example_value(tool.get("parameters") or {})
            return name, json.dumps(arguments if arguments is not None else {})
    return None


def example_value(schema: Any) -> Any:
    """A value of the shape `schema` describes: its first enum value, const or default, else
    "example", 0, false, an array of one example, or an object of every property."""
    if not isinstance(schema, dict):
        return None
    for keyword in ("const", "default"):
        if keyword in schema:
            return schema[keyword]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {name: example_value(value) for name, value in properties.items()}
    if kind == "array":
        return [example_value(schema["items"])] if isinstance(schema.get("items"), dict) else []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return {"string": "example", "boolean": False}.get(kind) if isinstance(kind, str) else None


def _tool_name(messages: Sequence[Mapping[str, Any]], call_id: Any) -> str:
    for message in messages:
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and call.get("id") == call_id:
                return str(call.get("name"))
    return "tool"


def _calls_so_far(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or ()) for m in messages if m.get("role") == "assistant")
