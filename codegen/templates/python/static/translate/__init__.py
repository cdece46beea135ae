"""Vendor formats and LLM-Stream, both ways: the value maps of mappings/ and the translators.

Everything here is sans-IO, like the decoder: bytes in, events or bytes out. `stream_translator`
reads a vendor stream (`FORMATS`) into LLM-Stream events; `OpenAIChatWriter` writes LLM-Stream
events as OpenAI Chat Completions chunks. `request_to` writes an LLM-Stream request as a vendor's
request body and `request_from` reads one (OpenAI Chat Completions) into ours.
"""

from __future__ import annotations

from .anthropic import AnthropicTranslator
from .gemini import GeminiTranslator, gemini_call_id
from .maps import FieldMap, ValueMap
from .openai_chat import OpenAIChatTranslator
from .openai_chat_writer import OpenAIChatWriter
from .openai_responses import OpenAIResponsesTranslator
from .request import FROM_FORMATS, TranslationError, request_from, request_path, request_to
from .stream import StreamTranslator, encode_events
from .tables import FIELD_MAPS, FORMATS, VALUE_MAPS

TRANSLATORS: dict[str, type[StreamTranslator]] = {
    translator.format: translator
    for translator in (OpenAIChatTranslator, OpenAIResponsesTranslator, AnthropicTranslator,
                       GeminiTranslator)
}
"""The stream translator of each vendor format."""


def stream_translator(fmt: str, *, model: str | None = None, request_id: str | None = None,
                      created: int | None = None, choice: int | None = None
                      ) -> StreamTranslator:
    """A translator of a `fmt` stream into LLM-Stream. `model` and `created` stand in where the
    vendor stream does not say them; `request_id` is echoed by stream.start and stream.end;
    `choice` picks one choice (candidate) of a stream with several, which is refused without it.
    """
    translator = TRANSLATORS.get(fmt)
    if translator is None:
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    options: dict[str, object] = {}
    if choice is not None:
        if translator not in (OpenAIChatTranslator, GeminiTranslator):
            raise ValueError(f"a {fmt} stream has one choice; choice is for openai-chat and "
                             "gemini")
        options["choice"] = choice
    return translator(model=model, request_id=request_id, created=created, **options)


__all__ = [
    "FIELD_MAPS",
    "FORMATS",
    "FROM_FORMATS",
    "TRANSLATORS",
    "VALUE_MAPS",
    "AnthropicTranslator",
    "FieldMap",
    "GeminiTranslator",
    "OpenAIChatTranslator",
    "OpenAIChatWriter",
    "OpenAIResponsesTranslator",
    "StreamTranslator",
    "TranslationError",
    "ValueMap",
    "encode_events",
    "gemini_call_id",
    "request_from",
    "request_path",
    "request_to",
    "stream_translator",
]
