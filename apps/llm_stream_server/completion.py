"""The non-streaming answer of the OpenAI-compatible route: the chunks that `OpenAIChatWriter`
wrote, folded into one `chat.completion` object, as OpenAI answers `stream: false`.

The writer is the one place that maps LLM-Stream onto OpenAI's vocabulary; this only adds
chunks up (content joined, tool call fragments joined by index, the last finish reason and
usage), so the two forms of the route cannot disagree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def data_lines(body: bytes) -> Iterable[Any]:
    """The JSON of every `data:` line of an OpenAI SSE body, up to `[DONE]`."""
    for line in body.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        payload = line[6:].strip()
        if payload == b"[DONE]":
            return
        yield json.loads(payload)


def fold(body: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The `chat.completion` the chunks of `body` add up to, or the error chunk's error."""
    completion: dict[str, Any] = {}
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    for chunk in data_lines(body):
        if "error" in chunk:
            return None, chunk["error"]
        completion.update(id=chunk["id"], created=chunk["created"], model=chunk["model"])
        if chunk.get("usage") is not None:
            completion["usage"] = chunk["usage"]
        for choice in chunk.get("choices", ()):
            delta = choice.get("delta") or {}
            if delta.get("content"):
                content.append(delta["content"])
            for call in delta.get("tool_calls") or ():
                known = calls.setdefault(call["index"], {
                    "id": call.get("id"), "type": "function",
                    "function": {"name": call["function"].get("name"), "arguments": ""}})
                known["function"]["arguments"] += call["function"].get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": completion.get("id"), "object": "chat.completion",
        "created": completion.get("created"), "model": completion.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        **({"usage": completion["usage"]} if "usage" in completion else {}),
    }, None
