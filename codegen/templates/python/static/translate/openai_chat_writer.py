"""LLM-Stream events into OpenAI Chat Completions chunks, for OpenAI-compatible clients.

The chunks follow what those clients rely on: a role chunk first, text in delta.content, tool
calls in OpenAI's delta shape (index, id, type and function.name on the first fragment, then
function.arguments fragments), one finish chunk with the mapped finish_reason, a usage chunk
with `choices: []` only when the counts are known, an error as a final chunk `{"error": {...}}`,
and always `data: [DONE]` last. Reasoning text goes in delta.reasoning_content, as compatible
gateways send it, and a reasoning block's signature in delta.reasoning_details as a
`reasoning.encrypted` detail, so that a client can send it back (D-OPENAI-CHAT-REASONING).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from ..encoder import _as_dict
from .tables import FIELD_MAPS, VALUE_MAPS

DONE_LINE = b"data: [DONE]\n\n"
FORMAT = "openai-chat"


def _line(chunk: Mapping[str, Any]) -> bytes:
    text = json.dumps(chunk, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return b"data: " + text.encode() + b"\n\n"


class OpenAIChatWriter:
    """Feed LLM-Stream events (envelope dicts) to `write`, get chunk bytes; `close` ends the
    body with `data: [DONE]`, and with an error chunk first when stream.end never came."""

    def __init__(self, *, completion_id: str | None = None, model: str | None = None,
                 created: int | None = None) -> None:
        self._id = completion_id
        self._model = model
        self._created = created
        self._stops = VALUE_MAPS[FORMAT]["stop-reasons"]
        self._errors = VALUE_MAPS[FORMAT]["error-codes"]
        self._usage_map = FIELD_MAPS[FORMAT]["usage"]
        self._started = False
        self._done = False
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._error: tuple[str, str] | None = None  # (code, message), sent last
        self._calls: dict[int, int] = {}  # block index -> tool call index
        self._streamed: set[int] = set()  # blocks whose arguments went out as fragments
        self._signatures = 0  # reasoning details written so far

    def write(self, events: Iterable[Mapping[str, Any] | BaseModel]) -> bytes:
        """The chunks of `events` (envelope dicts or the decoder's typed events)."""
        out: list[bytes] = []
        for event in events:
            if self._done:
                break
            fields = _as_dict(event)
            handler = _HANDLERS.get(str(fields.get("type")))
            if handler is not None:
                handler(self, fields, out)
        return b"".join(out)

    def close(self) -> bytes:
        if self._done:
            return b""
        out: list[bytes] = []
        self._ensure_started({}, out)
        if self._error is None:
            self._error = ("truncated", "the stream ended before stream.end")
        self._end({}, out)
        return b"".join(out)

    def _chunk(self, out: list[bytes], delta: Mapping[str, Any] | None = None,
               finish: str | None = None, usage: Mapping[str, Any] | None = None) -> None:
        """A chunk of choice 0 with `delta`; without a delta, the usage chunk (no choices)."""
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        chunk: dict[str, Any] = {"id": self._id, "object": "chat.completion.chunk",
                                 "created": self._created, "model": self._model,
                                 "choices": choices}
        if usage is not None:
            chunk["usage"] = usage
        out.append(_line(chunk))

    def _ensure_started(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        if self._started:
            return
        self._started = True
        request_id = event.get("request_id")
        self._id = self._id or f"chatcmpl-{request_id or 'llm-stream'}"
        self._model = self._model or str(event.get("model") or "unknown")
        created = event.get("created")
        if self._created is None:
            self._created = created if isinstance(created, int) else 0
        self._chunk(out, {"role": "assistant", "content": ""})

    def _start(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started(event, out)

    def _content(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        delta = event.get("delta")
        text = delta.get("text") if isinstance(delta, Mapping) else None
        if isinstance(text, str) and text:
            self._chunk(out, {"content": text})

    def _reasoning(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        delta = event.get("delta")
        text = delta.get("text") if isinstance(delta, Mapping) else None
        if isinstance(text, str) and text:
            self._chunk(out, {"reasoning_content": text})

    def _signature(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        signature = event.get("signature")
        if isinstance(signature, str) and signature:
            detail = {"type": "reasoning.encrypted", "index": self._signatures,
                      "data": signature}
            self._signatures += 1
            self._chunk(out, {"reasoning_details": [detail]})

    def _call_index(self, block: int) -> int:
        return self._calls.setdefault(block, len(self._calls))

    def _call_delta(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        block = int(event.get("index", 0))
        call: dict[str, Any] = {"index": self._call_index(block)}
        function: dict[str, Any] = {}
        if block not in self._streamed:
            self._streamed.add(block)
            call.update(id=event.get("id"), type="function")
            function["name"] = event.get("name")
        function["arguments"] = event.get("arguments", "")
        call["function"] = function
        self._chunk(out, {"tool_calls": [call]})

    def _call(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        block = int(event.get("index", 0))
        if block in self._streamed:
            return  # its arguments went out as fragments
        self._chunk(out, {"tool_calls": [{
            "index": self._call_index(block), "id": event.get("id"), "type": "function",
            "function": {"name": event.get("name"), "arguments": event.get("arguments")},
        }]})

    def _stop(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        reason = str(event.get("stop_reason"))
        self._finish = self._stops.write(reason) or "stop"

    def _usage_event(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._usage = self._usage_map.write(event)

    def _flush_finish(self, out: list[bytes]) -> None:
        if self._finish is not None:
            self._chunk(out, {}, self._finish)
            self._finish = None

    def _error_event(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        self._ensure_started({}, out)
        self._flush_finish(out)
        self._error = (str(event.get("code")), str(event.get("message", "")))

    def _end(self, event: Mapping[str, Any], out: list[bytes]) -> None:
        """The last chunks: the finish, the usage, then an error as the final event before
        [DONE], where clients that stop at an error chunk have read everything else."""
        self._ensure_started({}, out)
        self._flush_finish(out)
        if self._usage:
            self._chunk(out, usage=self._usage)
        if self._error is not None:
            code, message = self._error
            out.append(_line({"error": {"message": message, "type": code,
                                        "code": self._errors.write(code) or code}}))
        self._done = True
        out.append(DONE_LINE)


_HANDLERS = {
    "stream.start": OpenAIChatWriter._start,
    "content.delta": OpenAIChatWriter._content,
    "reasoning.delta": OpenAIChatWriter._reasoning,
    "reasoning.signature": OpenAIChatWriter._signature,
    "tool.call.delta": OpenAIChatWriter._call_delta,
    "tool.call": OpenAIChatWriter._call,
    "content.stop": OpenAIChatWriter._stop,
    "usage": OpenAIChatWriter._usage_event,
    "error": OpenAIChatWriter._error_event,
    "stream.end": OpenAIChatWriter._end,
}
"""What each event type becomes; others (unregistered types) have no place in a chunk."""
