"""OpenAI Chat Completions chunks (`data: {...}` ... `data: [DONE]`) into LLM-Stream.

One LLM-Stream stream carries one choice (D-TRANSLATE-CHOICES): choice 0, or the one asked for
with `choice=N`, the others skipped; without `choice`, a chunk of any other choice ends the stream
with an error rather than merge two answers into one text. Tool calls arrive as fragments keyed
by their index, interleaved across parallel calls, with id and name on the first. The finish
reason closes the turn; the usage chunk (no choices) and `[DONE]` end the stream. Reasoning text
comes in delta.reasoning_content (or reasoning), and its continuity data in delta.reasoning_details:
the data of a `reasoning.encrypted` detail and the signature of a `reasoning.text` one become
reasoning.signature (D-OPENAI-CHAT-REASONING); their texts repeat the reasoning and are not read.
"""

from __future__ import annotations

from typing import Any

from .stream import StreamTranslator

DONE = "[DONE]"


class OpenAIChatTranslator(StreamTranslator):
    format = "openai-chat"
    title = "OpenAI Chat Completions"
    event_lines = False
    done = DONE

    def __init__(self, *, model: str | None = None, request_id: str | None = None,
                 created: int | None = None, choice: int | None = None) -> None:
        super().__init__(model=model, request_id=request_id, created=created)
        self._choice = choice
        self._reasoning: tuple[str, int] = ("reasoning", 0)  # the next signature closes it

    def on_json(self, kind: str, chunk: Any) -> None:
        if type(chunk) is not dict:
            self.refuse("an OpenAI Chat Completions chunk is not a JSON object")
            return
        error = chunk.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {"message": str(error)}
            self.vendor_error(error.get("code") or error.get("type"), error.get("message"))
            return
        if not self._started:
            self.start(chunk.get("model"), chunk.get("created"))
        usage = chunk.get("usage")
        if usage is not None:
            self.usage(usage)
        choices = chunk.get("choices")
        if type(choices) is list:
            for choice in choices:
                if type(choice) is dict:
                    index = choice.get("index", 0)
                    if (index == 0 and self._choice is None) or self._wanted(index):
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
        """The usual delta holds content alone, and is read at once; otherwise every member
        is read only when present (a verb given an empty value makes no event, so skipping it
        changes nothing)."""
        delta = choice.get("delta")
        if type(delta) is dict:
            content = delta.get("content")
            if content and len(delta) == 1:
                self.text("text", content)
            else:
                self._delta(delta, content)
        reason = choice.get("finish_reason")
        if reason is not None:
            self.finish(reason)

    def _delta(self, delta: dict[str, Any], content: object) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            self.reasoning(self._reasoning, reasoning)
        details = delta.get("reasoning_details")
        if details:
            self._reasoning_details(details)
        if content:
            self.text("text", content)
        refusal = delta.get("refusal")
        if refusal:
            self.text("text", refusal)
        calls = delta.get("tool_calls")
        if type(calls) is list:
            for call in calls:
                if type(call) is dict:
                    self._tool_call_delta(call)

    def _reasoning_details(self, details: object) -> None:
        """A signature ends its reasoning block: reasoning after it is a block of its own."""
        for detail in details if isinstance(details, list) else ():
            if isinstance(detail, dict):
                kind = detail.get("type")
                signature = (detail.get("data") if kind == "reasoning.encrypted"
                             else detail.get("signature") if kind == "reasoning.text" else None)
                if isinstance(signature, str) and signature:
                    self.signature(self._reasoning, signature)
                    self._reasoning = ("reasoning", self._reasoning[1] + 1)

    def _tool_call_delta(self, call: dict[str, Any]) -> None:
        key = ("tool", call.get("index", 0))
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        if call.get("id") is not None:
            self.tool_start(key, call["id"], function.get("name"))
        self.tool_arguments(key, function.get("arguments"))
