"""OpenAI Responses events (`event: response.*`) into LLM-Stream.

Output items become blocks: a message's text parts text blocks, a reasoning item a reasoning
block (its summary or reasoning text deltas, then its encrypted_content as the signature when the
item is done), a function_call item a tool call. Argument deltas name the item by its id, not the
call's, so calls are keyed by item id and carry the call_id they were added with; a call whose
arguments come only in the final `.done` event still becomes one tool.call. response.completed
and response.incomplete end the turn (incomplete for max_output_tokens or content_filter is a
stop reason, not an error: D-RESPONSES-INCOMPLETE); response.failed and error fail the stream.
"""

from __future__ import annotations

from typing import Any

from .stream import StreamTranslator


class OpenAIResponsesTranslator(StreamTranslator):
    format = "openai-responses"
    title = "OpenAI Responses"

    def __init__(self, *, model: str | None = None, request_id: str | None = None,
                 created: int | None = None) -> None:
        super().__init__(model=model, request_id=request_id, created=created)
        self._summaries: dict[object, object] = {}
        self._reasoned: set[object] = set()

    def on_json(self, kind: str, event: Any) -> None:
        if type(event) is not dict:
            self.refuse("an OpenAI Responses event is not a JSON object")
            return
        handler = _HANDLERS.get(kind or str(event.get("type", "")))
        if handler is not None:
            handler(self, event)

    def _response_created(self, event: dict[str, Any]) -> None:
        response = _response(event)
        self.start(response.get("model"), response.get("created_at"))

    def _item_added(self, event: dict[str, Any]) -> None:
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            self.tool_start(("item", item.get("id")), item.get("call_id"), item.get("name"))

    def _text_delta(self, event: dict[str, Any]) -> None:
        self.text(("text", event.get("item_id"), event.get("content_index")), event.get("delta"))

    def _reasoning_delta(self, event: dict[str, Any]) -> None:
        item_id = event.get("item_id")
        part = event.get("summary_index", event.get("content_index"))
        if item_id in self._summaries and self._summaries[item_id] != part:
            self.reasoning(("item", item_id), "\n\n")  # the next summary part
        self._summaries[item_id] = part
        self._reasoned.add(item_id)
        self.reasoning(("item", item_id), event.get("delta"))

    def _arguments_delta(self, event: dict[str, Any]) -> None:
        self.tool_arguments(("item", event.get("item_id")), event.get("delta"))

    def _arguments_done(self, event: dict[str, Any]) -> None:
        self.tool_call(("item", event.get("item_id")), event.get("arguments"))

    def _item_done(self, event: dict[str, Any]) -> None:
        item = event.get("item")
        if not isinstance(item, dict):
            return
        key = ("item", item.get("id"))
        if item.get("type") == "function_call":
            self.tool_call(key, item.get("arguments"))
        elif item.get("type") == "reasoning":
            if item.get("id") not in self._reasoned:
                summary = item.get("summary")
                texts = [part.get("text") for part in summary if isinstance(part, dict)
                         ] if isinstance(summary, list) else []
                self.reasoning(key, "\n\n".join(t for t in texts if isinstance(t, str) and t))
            self.signature(key, item.get("encrypted_content"))

    def _completed(self, event: dict[str, Any]) -> None:
        response = _response(event)
        self.usage(response.get("usage"))
        self.finish(response.get("status") or "completed")
        self.end()

    def _incomplete(self, event: dict[str, Any]) -> None:
        response = _response(event)
        self.usage(response.get("usage"))
        details = response.get("incomplete_details")
        self.finish(details.get("reason") if isinstance(details, dict) else None)
        self.end()

    def _failed(self, event: dict[str, Any]) -> None:
        response = _response(event)
        self.usage(response.get("usage"))
        error = response.get("error")
        error = error if isinstance(error, dict) else {}
        self.vendor_error(error.get("code"), error.get("message"))

    def _error(self, event: dict[str, Any]) -> None:
        self.vendor_error(event.get("code"), event.get("message"))


def _response(event: dict[str, Any]) -> dict[str, Any]:
    response = event.get("response")
    return response if isinstance(response, dict) else {}


_HANDLERS = {
    "response.created": OpenAIResponsesTranslator._response_created,
    "response.output_item.added": OpenAIResponsesTranslator._item_added,
    "response.output_text.delta": OpenAIResponsesTranslator._text_delta,
    "response.refusal.delta": OpenAIResponsesTranslator._text_delta,
    "response.reasoning_summary_text.delta": OpenAIResponsesTranslator._reasoning_delta,
    "response.reasoning_text.delta": OpenAIResponsesTranslator._reasoning_delta,
    "response.function_call_arguments.delta": OpenAIResponsesTranslator._arguments_delta,
    "response.function_call_arguments.done": OpenAIResponsesTranslator._arguments_done,
    "response.output_item.done": OpenAIResponsesTranslator._item_done,
    "response.completed": OpenAIResponsesTranslator._completed,
    "response.incomplete": OpenAIResponsesTranslator._incomplete,
    "response.failed": OpenAIResponsesTranslator._failed,
    "error": OpenAIResponsesTranslator._error,
}
"""The events the translator reads; the others (in_progress, content_part.*, *.done of text)
carry nothing new."""
