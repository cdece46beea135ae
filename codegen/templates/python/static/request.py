"""Checking an `application/llm-request+json` body: its schema, and what a schema cannot say.

A schema cannot relate one message to another, so the cross-reference of a tool message's
`tool_call_id` to an earlier assistant tool call (LS-MSG-5) is checked here. Diagnostics carry
the line of the offending value in the body's text, found only when there is something to report.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .diagnostics import Diagnostic, SchemaError
from .jsontext import JSONLimitError, duplicate_name, duplicate_names, loads
from .rules import severity
from .validators import validate_request


def cross_reference_errors(request: Any) -> list[SchemaError]:
    """LS-MSG-5: every tool message answers a tool call made earlier in the history."""
    errors: list[SchemaError] = []
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list):
        return errors
    called: set[str] = set()
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            calls = message.get("tool_calls") or ()
            called.update(
                c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)
            )
        answered = message.get("tool_call_id")
        if message.get("role") == "tool" and isinstance(answered, str) and answered not in called:
            errors.append(SchemaError(
                "LS-MSG-5", f"/messages/{position}/tool_call_id",
                f"/messages/{position}/tool_call_id {answered!r} answers no tool call of an "
                "earlier assistant message",
            ))
    return errors


def check_request_text(text: str) -> list[Diagnostic]:
    """Every problem of a request body, each with its rule and line."""
    try:
        request = loads(text)
    except JSONLimitError as exc:
        return [Diagnostic("LS-REQ-4", 1, f"the body is refused: {exc}")]
    except ValueError as exc:
        line = getattr(exc, "lineno", 1)
        return [Diagnostic("LS-REQ-4", line, f"the body is not JSON: {exc}")]
    errors = [*validate_request(request), *cross_reference_errors(request)]
    twice = _twice(text, request)
    return twice + [
        Diagnostic(e.rule, line_of_pointer(text, e.pointer), e.message, severity(e.rule))
        for e in errors
    ]


def _twice(text: str, request: object) -> list[Diagnostic]:
    """A member name written twice in an object of the body (decision D-DUPLICATE-KEYS), on the
    line of its second occurrence as far as it can be found."""
    if not duplicate_names(text, request):
        return []
    name = duplicate_name(text) or ""
    written = list(re.finditer(re.escape(json.dumps(name)) + r"\s*:", text))
    line = text.count("\n", 0, written[1].start()) + 1 if len(written) > 1 else 1
    return [Diagnostic("LS-REQ-6", line, f"the body has the member name {name!r} twice in one "
                                         "object: every member name must be unique")]


def line_of_pointer(text: str, pointer: str) -> int:
    """The 1-based line where the value at `pointer` starts (its parent's, if it is missing)."""
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    for token in (t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]):
        found = _member_position(decoder, text, position, token)
        if found is None:
            break
        position = found
    return text.count("\n", 0, position) + 1


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _member_position(decoder: json.JSONDecoder, text: str, start: int, token: str) -> int | None:
    """Where the member `token` of the object or array starting at `start` begins."""
    if start >= len(text) or text[start] not in "[{":
        return None
    is_object = text[start] == "{"
    position, index = _skip_space(text, start + 1), 0
    while position < len(text) and text[position] not in "]}":
        key: Any = index
        if is_object:
            key, position = decoder.raw_decode(text, position)
            position = _skip_space(text, _skip_space(text, position) + 1)
        if str(key) == token:
            return position
        _, position = decoder.raw_decode(text, position)
        position = _skip_space(text, position)
        if position < len(text) and text[position] == ",":
            position = _skip_space(text, position + 1)
        index += 1
    return None
