"""Our requests as Anthropic Messages bodies.

Anthropic keeps the system prompt out of the messages and answers tool calls inside a user
turn: the leading system messages become `system`, and a run of tool messages becomes one user
message of tool_result blocks, which is where Anthropic wants the results of parallel calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .request_common import (
    FieldPath,
    TranslationError,
    apply_extension,
    arguments_object,
    checked_parts,
    decoded_text,
    refuse_name,
    vendor_parameters,
    vendor_part_type,
    vendor_role,
)
from .request_limits import ANTHROPIC_DOCUMENT_SOURCES, ANTHROPIC_IMAGE_TYPES

FORMAT = "anthropic"
VENDOR = "Anthropic Messages"


def to_anthropic(request: Mapping[str, Any]) -> dict[str, Any]:
    messages = request["messages"]
    system, start = leading_system(messages)
    turns: list[dict[str, Any]] = []
    previous = None
    for i in range(start, len(messages)):
        message, path = messages[i], ("messages", i)
        refuse_name(message, path, VENDOR)
        role = message["role"]
        if role == "system":
            raise TranslationError((*path, "role"), f"{VENDOR} takes system messages only "
                                                    "before the conversation (D-REQUEST-SYSTEM)")
        blocks = _blocks(message, path)
        calls = message.get("tool_calls")
        if role == "tool" and previous == "tool":
            turns[-1]["content"].extend(blocks)
        elif isinstance(message["content"], str) and role != "tool" and not calls:
            turns.append({"role": vendor_role(FORMAT, role), "content": message["content"]})
        else:
            turns.append({"role": vendor_role(FORMAT, role), "content": blocks})
        previous = role
    parameters = request.get("parameters", {})
    if "max_tokens" not in parameters:
        raise TranslationError(("parameters", "max_tokens"), f"{VENDOR} requires max_tokens, and a "
                                                "translation does not invent a limit")
    body: dict[str, Any] = {"model": request["model"]}
    if system:
        body["system"] = system
    body["messages"] = turns
    if "tools" in request:
        body["tools"] = [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
            for t in request["tools"]
        ]
    body.update(vendor_parameters(FORMAT, VENDOR, parameters, ("parameters",)))
    body["stream"] = True
    user_id = request.get("metadata", {}).get("user_id")
    if user_id is not None:
        body["metadata"] = {"user_id": user_id}
    apply_extension(FORMAT, request, body)
    return body


def leading_system(messages: list[Any]) -> tuple[str | list[dict[str, Any]], int]:
    """The system prompt of the leading system messages (a string when there is one message
    of plain text, text blocks otherwise), and where the conversation starts."""
    blocks: list[dict[str, Any]] = []
    start = 0
    while start < len(messages) and messages[start]["role"] == "system":
        path = ("messages", start)
        refuse_name(messages[start], path, VENDOR)
        blocks.extend(_blocks(messages[start], path))
        start += 1
    if start == 1 and isinstance(messages[0]["content"], str):
        return messages[0]["content"], start
    return blocks, start


def _blocks(message: Mapping[str, Any], path: FieldPath) -> list[dict[str, Any]]:
    blocks = [
        _block(part, here) for part, here in checked_parts(FORMAT, VENDOR, message, path)
        if not (part["type"] == "text" and part["text"] == "" and "tool_calls" in message)
    ]
    if message["role"] == "tool":
        content = message["content"]
        return [{"type": "tool_result", "tool_use_id": message["tool_call_id"],
                 "content": content if isinstance(content, str) else blocks}]
    for position, call in enumerate(message.get("tool_calls", ())):
        here = (*path, "tool_calls", position, "arguments")
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"],
                       "input": arguments_object(call["arguments"], here, VENDOR)})
    return blocks


def _block(part: Mapping[str, Any], path: FieldPath) -> dict[str, Any]:
    kind = part["type"]
    theirs = vendor_part_type(FORMAT, kind)
    if kind == "text":
        return {"type": theirs, "text": part["text"]}
    media_type = part["media_type"]
    if kind == "image":
        if media_type not in ANTHROPIC_IMAGE_TYPES:
            raise TranslationError((*path, "media_type"), f"{VENDOR} takes images of the "
                                   f"types {', '.join(sorted(ANTHROPIC_IMAGE_TYPES))}")
        return {"type": theirs, "source": {"type": "base64", "media_type": media_type,
                                           "data": part["data"]}}
    source = ANTHROPIC_DOCUMENT_SOURCES.get(media_type)
    if source is None:
        raise TranslationError((*path, "media_type"), f"{VENDOR} takes documents of the types "
                               f"{', '.join(sorted(ANTHROPIC_DOCUMENT_SOURCES))}")
    data = decoded_text(part, path) if source == "text" else part["data"]
    block: dict[str, Any] = {"type": theirs, "source": {"type": source, "media_type": media_type,
                                                        "data": data}}
    if "filename" in part:
        block["title"] = part["filename"]
    return block

