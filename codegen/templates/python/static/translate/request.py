"""Requests between our media type and the vendors' request bodies: the entry points.

`request_to` checks our request first (the schema and LS-MSG-5), so that every vendor writer
works on a conforming request and a refusal names either the broken rule or the field the
vendor cannot express.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..request import cross_reference_errors
from ..validators import validate_request
from .request_anthropic import to_anthropic
from .request_common import TranslationError
from .request_from_openai import from_openai_chat
from .request_gemini import to_gemini
from .request_openai import to_openai_chat, to_openai_responses

__all__ = ["FROM_FORMATS", "TranslationError", "request_from", "request_path", "request_to"]

Entry = TypeVar("Entry")

_WRITERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "openai-chat": to_openai_chat,
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "gemini": to_gemini,
}
_READERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "openai-chat": from_openai_chat,
}
FROM_FORMATS = tuple(_READERS)
# Where each format's streaming request goes; Gemini names the model in the path.
_PATHS = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/{model}:streamGenerateContent?alt=sse",
}


def request_to(fmt: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """Our request as the vendor format's request body; TranslationError names the field of
    ours that the vendor cannot express, or the rule the request breaks."""
    writer = _format(fmt, _WRITERS)
    errors = [*validate_request(body), *cross_reference_errors(body)]
    if errors:
        first = errors[0]
        path = tuple(int(s) if s.isdigit() else s for s in first.pointer.split("/")[1:])
        raise TranslationError(path, f"{first.rule} {first.message}")
    return writer(body)


def request_from(fmt: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The vendor format's request body as ours; TranslationError names the field ours has no
    place for. The result is not checked here: `check_request_text` judges it."""
    reader = _format(fmt, _READERS)
    try:
        return reader(body)
    except (LookupError, TypeError, AttributeError) as exc:
        raise TranslationError((), f"not a {fmt} request body: {exc!r} is missing or of the "
                                   "wrong type") from None


def request_path(fmt: str, model: str) -> str:
    """The path of the vendor's streaming endpoint for this model, relative to its base URL."""
    return _format(fmt, _PATHS).format(model=model)


def _format(fmt: str, table: Mapping[str, Entry]) -> Entry:
    if fmt not in table:
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(table)}")
    return table[fmt]
