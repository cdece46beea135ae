"""OpenAI Chat Completions chunks (`data: {...}` ... `data: [DONE]`) into LLM-Stream.

One LLM-Stream stream carries one choice (D-TRANSLATE-CHOICES): choice 0, or the one asked for
with `choice=N`, the others skipped; without `choice`, a chunk of any other choice ends the stream
with an error rather than merge two answers into one text. Tool calls arrive as fragments keyed
by their index, interleaved across parallel calls, with id and name on the first. The finish
reason closes the turn; the usage chunk (no choices) and `[DONE]` end the stream.
"""

from __future__ import annotations

from typing import Any

from .stream import StreamTranslator

DONE = "[DONE]"


class OpenAIChatTranslator(StreamTranslator):
    format = "openai-chat"
    title = "OpenAI Chat Completions"

    def __init__(self, *, model: str | None = None, request_id: str | None = None,
                 created: int | None = None, choice: int | None = None) -> None:
        super().__init__(model=model, request_id=request_id, created=created)
        self._choice = choice

    def on_event(self, kind: str, data: str) -> None:
        if data == DONE:
            self.end()
            return
        chunk = self.parse(data)
        if chunk is None:
            return
        if not isinstance(chunk, dict):
            self.refuse("an OpenAI Chat Completions chunk is not a JSON object")
            return
        error = chunk.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {"message": str(error)}
            self.vendor_error(error.get("code") or error.get("type"), error.get("message"))
            return
        self.start(chunk.get("model"), chunk.get("created"))
        if chunk.get("usage") is not None:
            self.usage(chunk["usage"])
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and self._wanted(choice.get("index", 0)):
                self._choice_delta(choice)

    def _wanted(self, index: object) -> bool:
        if self._choice is not None:
            return index == self._choice
        if index == 0:
            return True
        self.refuse(f"the stream carries choice {index!r} besides choice 0 (n > 1); one "
                    "LLM-Stream stream carries one choice: translate each with choice=N")
        return False

    def _choice_delta(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self.reasoning("reasoning", delta.get("reasoning_content") or delta.get("reasoning"))
            self.text("text", delta.get("content"))
            self.text("text", delta.get("refusal"))
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict):
                    self._tool_call_delta(call)
        if choice.get("finish_reason") is not None:
            self.finish(choice["finish_reason"])

    def _tool_call_delta(self, call: dict[str, Any]) -> None:
        key = ("tool", call.get("index", 0))
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        if call.get("id") is not None:
            self.tool_start(key, call["id"], function.get("name"))
        self.tool_arguments(key, function.get("arguments"))
