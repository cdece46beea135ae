"""Gemini streamGenerateContent?alt=sse chunks into LLM-Stream.

Each chunk is a whole GenerateContentResponse whose parts continue the answer: runs of text parts
are one text block, runs of thought parts one reasoning block, and a functionCall part is one
whole tool call (no fragments). A call without an id gets a stable one (D-GEMINI-CALL-ID). A
part's thoughtSignature signs the reasoning just before the part (D-GEMINI-SIGNATURE).
usageMetadata holds totals so far; finishReason ends the turn, and the
body's end, there being no terminal event, ends the stream (a body that ends before a
finishReason was cut). One candidate is translated, as one choice is for Chat Completions.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .stream import REASONING, TEXT, StreamTranslator, compact_json


def gemini_call_id(response_id: str, position: int, name: str, arguments: str) -> str:
    """The id of a function call that came without one: the same bytes give the same id, and
    the response id keeps it apart from the calls of other turns (D-GEMINI-CALL-ID)."""
    digest = hashlib.sha256(f"{response_id}\0{position}\0{name}\0{arguments}".encode())
    return "call_" + digest.hexdigest()[:24]


class GeminiTranslator(StreamTranslator):
    format = "gemini"
    title = "Gemini"
    event_lines = False

    def __init__(self, *, model: str | None = None, request_id: str | None = None,
                 created: int | None = None, choice: int | None = None) -> None:
        super().__init__(model=model, request_id=request_id, created=created)
        self._choice = choice
        self._response_id = ""
        self._run: tuple[str, int] = ("", 0)  # the kind of the block the last part went to
        self._calls = 0

    def on_json(self, kind: str, chunk: Any) -> None:
        if type(chunk) is not dict:
            self.refuse("a Gemini chunk is not a JSON object")
            return
        error = chunk.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {"message": str(error)}
            self.vendor_error(error.get("status"), error.get("message"))
            return
        response_id = chunk.get("responseId")
        if type(response_id) is str:
            self._response_id = response_id
        if not self._started:
            self.start(chunk.get("modelVersion"))
        usage = chunk.get("usageMetadata")
        if usage is not None:
            self.usage(usage)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = str(feedback["blockReason"])
            self.fail("content_filtered", f"Gemini blocked the prompt: {reason}", reason)
            return
        candidates = chunk.get("candidates")
        if type(candidates) is list:
            for candidate in candidates:
                if type(candidate) is dict:
                    index = candidate.get("index", 0)
                    if (index == 0 and self._choice is None) or self._wanted(index):
                        self._candidate(candidate)

    def at_body_end(self) -> None:
        if self.finished:
            self.end()
        else:
            self.cut()

    def _wanted(self, index: object) -> bool:
        if self._choice is not None:
            return index == self._choice
        if index == 0:
            return True
        self.refuse(f"the stream carries candidate {index!r} besides candidate 0 "
                    "(candidateCount > 1); one LLM-Stream stream carries one: translate each "
                    "with choice=N")
        return False

    def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        parts = content.get("parts") if type(content) is dict else None
        if type(parts) is list:
            for part in parts:
                if type(part) is dict:
                    if len(part) == 1 and "text" in part:  # the usual part, as _part reads it
                        run = self._run
                        self.text(run if run[0] == TEXT else self._key(TEXT), part["text"])
                    else:
                        self._part(part)
        reason = candidate.get("finishReason")
        if reason is not None:
            self.finish(reason)

    def _part(self, part: dict[str, Any]) -> None:
        """One part. Its thoughtSignature signs the reasoning right before the part: the part's
        own thought, the run of thought parts just before it, or else a reasoning block of the
        signature alone, put just before the part's content so that it can go back with it."""
        signature = part.get("thoughtSignature")
        if part.get("thought") is True:
            self.reasoning(self._key(REASONING), part.get("text"))
            self._sign(signature)
            return
        self._sign(signature)
        call = part.get("functionCall")
        if type(call) is dict:
            self._function_call(call)
        elif "text" in part:
            self.text(self._key(TEXT), part["text"])

    def _sign(self, signature: object) -> None:
        if signature is None:
            return
        self.signature(self._key(REASONING), signature)
        self._run = ("", self._run[1] + 1)  # what follows a signature opens a new block

    def _key(self, kind: str) -> tuple[str, int]:
        """The key of the block a part of `kind` goes to: the current run's, or a new run's."""
        if self._run[0] != kind:
            self._run = (kind, self._run[1] + 1)
        return self._run

    def _function_call(self, call: dict[str, Any]) -> None:
        args = call.get("args")
        arguments = compact_json(args if isinstance(args, dict) else {})
        name = call.get("name")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = gemini_call_id(self._response_id, self._calls, str(name), arguments)
        key = ("call", self._calls)
        self._calls += 1
        self._run = ("", self._run[1] + 1)
        self.tool_start(key, call_id, name)
        self.tool_call(key, arguments)
