"""Anthropic Messages events (message_start ... message_stop) into LLM-Stream.

Each content block of the message becomes a block of its own: text, thinking (reasoning.delta,
its signature_delta a reasoning.signature), redacted_thinking (a reasoning block of a signature
alone, the encrypted data) and tool_use (tool.call.delta from input_json_delta, tool.call at
content_block_stop). Blocks of server tools, whose results the vendor already holds, are not the
client's to run and are skipped. message_delta brings the stop reason and usage totals that
replace those of message_start; message_stop ends the stream; ping is no event.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Severity
from .stream import UNEXPECTED, StreamTranslator, compact_json

_SKIPPED = "skipped"


class AnthropicTranslator(StreamTranslator):
    format = "anthropic"
    title = "Anthropic Messages"

    def __init__(self, *, model: str | None = None, request_id: str | None = None,
                 created: int | None = None) -> None:
        super().__init__(model=model, request_id=request_id, created=created)
        self._kinds: dict[object, str] = {}
        self._inputs: dict[object, Any] = {}

    def on_event(self, kind: str, data: str) -> None:
        if kind != "ping":  # a keep-alive, whatever its data
            super().on_event(kind, data)

    def on_json(self, kind: str, event: Any) -> None:
        if kind == "ping":
            return
        if type(event) is not dict:
            self.refuse("an Anthropic Messages event is not a JSON object")
            return
        handler = _HANDLERS.get(kind or str(event.get("type", "")))
        if handler is not None:
            handler(self, event)

    def _message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        message = message if isinstance(message, dict) else {}
        self.start(message.get("model"))
        self.usage(message.get("usage"))

    def _block_start(self, event: dict[str, Any]) -> None:
        index, block = event.get("index"), event.get("content_block")
        if not isinstance(block, dict):
            self.report(UNEXPECTED, "content_block_start without a content_block is skipped")
            return
        kind = str(block.get("type"))
        self._kinds[index] = kind
        if kind == "text":
            self.text(index, block.get("text"))
        elif kind == "thinking":
            self.reasoning(index, block.get("thinking"))
            self.signature(index, block.get("signature"))
        elif kind == "redacted_thinking":
            self.signature(index, block.get("data"))
        elif kind == "tool_use":
            self._inputs[index] = block.get("input")
            self.tool_start(index, block.get("id"), block.get("name"))
        else:
            self._kinds[index] = _SKIPPED
            self.report(UNEXPECTED, f"a {kind} content block is not the client's to act on and "
                                    "is skipped", Severity.WARNING)

    def _block_delta(self, event: dict[str, Any]) -> None:
        index, delta = event.get("index"), event.get("delta")
        if type(delta) is not dict or self._kinds.get(index) == _SKIPPED:
            return
        kind = delta.get("type")
        if kind == "text_delta":
            self.text(index, delta.get("text"))
        elif kind == "input_json_delta":
            self.tool_arguments(index, delta.get("partial_json"))
        elif kind == "thinking_delta":
            self.reasoning(index, delta.get("thinking"))
        elif kind == "signature_delta":
            self.signature(index, delta.get("signature"))

    def _block_stop(self, event: dict[str, Any]) -> None:
        index = event.get("index")
        if self._kinds.get(index) == "tool_use":
            given = self._inputs.get(index)
            self.tool_call(index, compact_json(given) if isinstance(given, dict) and given
                           else None)

    def _message_delta(self, event: dict[str, Any]) -> None:
        self.usage(event.get("usage"))
        delta = event.get("delta")
        if isinstance(delta, dict) and delta.get("stop_reason") is not None:
            self.finish(delta["stop_reason"])

    def _message_stop(self, event: dict[str, Any]) -> None:
        self.end()

    def _error(self, event: dict[str, Any]) -> None:
        error = event.get("error")
        error = error if isinstance(error, dict) else {}
        self.vendor_error(error.get("type"), error.get("message"))


_HANDLERS = {
    "message_start": AnthropicTranslator._message_start,
    "content_block_start": AnthropicTranslator._block_start,
    "content_block_delta": AnthropicTranslator._block_delta,
    "content_block_stop": AnthropicTranslator._block_stop,
    "message_delta": AnthropicTranslator._message_delta,
    "message_stop": AnthropicTranslator._message_stop,
    "error": AnthropicTranslator._error,
}
"""The events the translator reads; others (new types the API may add) are no events."""
