"""Our requests as OpenAI Chat Completions and Responses create bodies.

Chat Completions keeps the history as messages, one for one with ours. Responses keeps it as
input items: a message item for each message, a function_call item for each tool call of an
assistant message and a function_call_output item for each tool message.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from .request_common import (
    FieldPath,
    TranslationError,
    apply_extension,
    checked_parts,
    data_url,
    document_filename,
    vendor_parameters,
    vendor_part_type,
    vendor_role,
)
from .request_limits import OPENAI_AUDIO_FORMATS

CHAT = "openai-chat"
RESPONSES = "openai-responses"
CHAT_NAME = "OpenAI Chat Completions"
RESPONSES_NAME = "OpenAI Responses"
# OpenAI's limits on stop sequences and on metadata.
MAX_STOP_SEQUENCES = 4
MAX_METADATA_MEMBERS = 16


def to_openai_chat(request: Mapping[str, Any]) -> dict[str, Any]:
    documents = itertools.count(1)
    body: dict[str, Any] = {"model": request["model"], "messages": [
        _chat_message(message, ("messages", i), documents)
        for i, message in enumerate(request["messages"])
    ]}
    if "tools" in request:
        body["tools"] = [
            {"type": "function", "function": {
                "name": t["name"], "description": t["description"],
                "parameters": t["parameters"]}}
            for t in request["tools"]
        ]
    stop = request.get("parameters", {}).get("stop_sequences", [])
    if len(stop) > MAX_STOP_SEQUENCES:
        raise TranslationError(("parameters", "stop_sequences"),
                               f"{CHAT_NAME} takes at most {MAX_STOP_SEQUENCES} stop sequences")
    body.update(vendor_parameters(CHAT, CHAT_NAME, request.get("parameters", {}),
                                  ("parameters",)))
    _finish(CHAT, request, body)
    body["stream_options"] = {"include_usage": True}
    return body


def _chat_message(
    message: Mapping[str, Any], path: FieldPath, documents: Iterator[int]
) -> dict[str, Any]:
    role = message["role"]
    result: dict[str, Any] = {"role": vendor_role(CHAT, role)}
    content = message.get("content")
    if isinstance(content, list):
        result["content"] = [
            _chat_part(part, here, documents)
            for part, here in checked_parts(CHAT, CHAT_NAME, message, path)
        ]
    else:
        result["content"] = content
    if "name" in message:
        if role == "tool":
            raise TranslationError((*path, "name"),
                                   f"{CHAT_NAME} has no participant name on a tool message")
        result["name"] = message["name"]
    if "tool_calls" in message:
        result["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in message["tool_calls"]
        ]
    if role == "tool":
        result["tool_call_id"] = message["tool_call_id"]
    return result


def _chat_part(
    part: Mapping[str, Any], path: FieldPath, documents: Iterator[int]
) -> dict[str, Any]:
    kind = part["type"]
    theirs = vendor_part_type(CHAT, kind)
    if kind == "text":
        return {"type": theirs, "text": part["text"]}
    if kind == "image":
        return {"type": theirs, "image_url": {"url": data_url(part)}}
    if kind == "audio":
        audio_format = OPENAI_AUDIO_FORMATS.get(part["media_type"])
        if audio_format is None:
            raise TranslationError((*path, "media_type"),
                                   f"{CHAT_NAME} takes audio as wav or mp3 only")
        return {"type": theirs, "input_audio": {"data": part["data"], "format": audio_format}}
    return {"type": theirs, "file": {"filename": document_filename(part, next(documents)),
                                     "file_data": data_url(part)}}


def to_openai_responses(request: Mapping[str, Any]) -> dict[str, Any]:
    documents = itertools.count(1)
    items: list[dict[str, Any]] = []
    for i, message in enumerate(request["messages"]):
        items.extend(_responses_items(message, ("messages", i), documents))
    body: dict[str, Any] = {"model": request["model"], "input": items}
    if "tools" in request:
        body["tools"] = [
            {"type": "function", "name": t["name"], "description": t["description"],
             "parameters": t["parameters"], "strict": False}
            for t in request["tools"]
        ]
    body.update(vendor_parameters(RESPONSES, RESPONSES_NAME, request.get("parameters", {}),
                                  ("parameters",)))
    _finish(RESPONSES, request, body)
    return body


def _responses_items(
    message: Mapping[str, Any], path: FieldPath, documents: Iterator[int]
) -> Iterator[dict[str, Any]]:
    role = message["role"]
    if "name" in message:
        raise TranslationError((*path, "name"), f"{RESPONSES_NAME} has no participant name")
    parts = [
        _responses_part(part, documents)
        for part, _ in checked_parts(RESPONSES, RESPONSES_NAME, message, path)
    ]
    if role == "tool":
        content = message["content"]
        yield {"type": "function_call_output", "call_id": message["tool_call_id"],
               "output": content if isinstance(content, str) else parts}
        return
    if role == "assistant":
        # The model's own earlier text: Responses types it as the plain string content of an
        # input message, one item a text part, since an output message needs the vendor's ids.
        for part in parts:
            yield {"type": "message", "role": "assistant", "content": part["text"]}
    elif message.get("content") is not None:
        yield {"type": "message", "role": vendor_role(RESPONSES, role), "content": parts}
    for call in message.get("tool_calls", ()):
        yield {"type": "function_call", "call_id": call["id"], "name": call["name"],
               "arguments": call["arguments"]}


def _responses_part(part: Mapping[str, Any], documents: Iterator[int]) -> dict[str, Any]:
    kind = part["type"]
    if kind == "text":
        return {"type": vendor_part_type(RESPONSES, kind), "text": part["text"]}
    if kind == "image":
        return {"type": vendor_part_type(RESPONSES, kind), "image_url": data_url(part),
                "detail": "auto"}
    return {"type": vendor_part_type(RESPONSES, kind),
            "filename": document_filename(part, next(documents)), "file_data": data_url(part)}


def _finish(fmt: str, request: Mapping[str, Any], body: dict[str, Any]) -> None:
    """The members both OpenAI formats share: the stream flag, metadata and the extension."""
    body["stream"] = True
    metadata = request.get("metadata")
    if metadata:
        body["metadata"] = _openai_metadata(metadata)
    apply_extension(fmt, request, body)


def _openai_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    """OpenAI's metadata takes up to 16 members, all strings (D-REQUEST-METADATA)."""
    if len(metadata) > MAX_METADATA_MEMBERS:
        raise TranslationError(("metadata",),
                               f"OpenAI takes at most {MAX_METADATA_MEMBERS} metadata members")
    for key, value in metadata.items():
        if not isinstance(value, str):
            raise TranslationError(("metadata", key), "OpenAI takes only string metadata values")
    return dict(metadata)

