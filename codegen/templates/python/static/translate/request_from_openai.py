"""An OpenAI Chat Completions create body as our request.

What has a place in ours moves there; the members of OpenAI's body that ours has no field for
(n, seed, tool_choice, response_format, user, ...) go verbatim into the `vendor:openai`
extension, which the translation back puts into the body again, so nothing is lost on the way
through. What neither can hold (a URL instead of inline data, a refusal, strict tools) is
refused, naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..registry import SPEC_VERSION
from .request_common import FieldPath, TranslationError, parse_data_url
from .request_limits import EXTENSION_NAMESPACES, OPENAI_AUDIO_MEDIA_TYPES
from .tables import FIELD_MAPS, VALUE_MAPS

FORMAT = "openai-chat"
VENDOR = "OpenAI Chat Completions"
# Ours always streams, reporting usage (D-REQUEST-STREAM); the gateway decides how to answer.
STREAM_MEMBERS = frozenset({"stream", "stream_options"})
ROLES = VALUE_MAPS[FORMAT]["roles"]
PART_TYPES = VALUE_MAPS[FORMAT]["content-part-types"]
# OpenAI's parameter names, and the deprecated max_tokens, which still limits the output.
OUR_PARAMETERS = {
    theirs: ours
    for ours, names in FIELD_MAPS[FORMAT]["parameters"].from_vendor.items() for theirs in names
} | {"max_tokens": "max_tokens"}
MESSAGE_MEMBERS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})


def from_openai_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(body, Mapping):
        raise TranslationError((), f"a {VENDOR} body is a JSON object")
    for member in ("model", "messages"):
        if member not in body:
            raise TranslationError((member,), f"is required in a {VENDOR} body")
    messages = body["messages"]
    if not isinstance(messages, list):
        raise TranslationError(("messages",), "is an array of messages")
    request: dict[str, Any] = {"version": SPEC_VERSION, "stream": True, "model": body["model"],
                               "messages": [_message(m, ("messages", i))
                                            for i, m in enumerate(messages)]}
    extension: dict[str, Any] = {}
    parameters: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("model", "messages") or key in STREAM_MEMBERS or value is None:
            continue
        if key == "tools":
            request["tools"] = [_tool(t, ("tools", i)) for i, t in enumerate(value)]
        elif key in OUR_PARAMETERS:
            ours = OUR_PARAMETERS[key]
            if ours in parameters and parameters[ours] != value:
                raise TranslationError((key,), "disagrees with the other limit of output tokens")
            parameters[ours] = [value] if key == "stop" and isinstance(value, str) else value
        elif key == "metadata":
            request["metadata"] = dict(value)
        else:
            extension[key] = value
    if parameters:
        request["parameters"] = parameters
    if extension:
        request["extensions"] = {EXTENSION_NAMESPACES[FORMAT]: extension}
    return request


def _message(message: Any, path: FieldPath) -> dict[str, Any]:
    role = ROLES.read(str(message.get("role"))) if isinstance(message, Mapping) else None
    if role is None:
        known = sorted(theirs for theirs, ours in ROLES.from_vendor.items() if ours)
        raise TranslationError((*path, "role"), f"has no LLM-Stream role: one of "
                                                f"{', '.join(known)} is")
    for key, value in message.items():
        if key not in MESSAGE_MEMBERS and value is not None:
            raise TranslationError((*path, key), "has no place in an LLM-Stream message")
    result: dict[str, Any] = {"role": role}
    content = message.get("content")
    if isinstance(content, list):
        result["content"] = [_part(p, (*path, "content", i)) for i, p in enumerate(content)]
    elif content is None and not message.get("tool_calls"):
        raise TranslationError((*path, "content"), "is null on a message without tool calls")
    else:
        result["content"] = content
    for key in ("name", "tool_call_id"):
        if message.get(key) is not None:
            result[key] = message[key]
    if message.get("tool_calls"):
        result["tool_calls"] = [
            _tool_call(c, (*path, "tool_calls", i)) for i, c in enumerate(message["tool_calls"])
        ]
    return result


def _tool_call(call: Mapping[str, Any], path: FieldPath) -> dict[str, Any]:
    if call.get("type", "function") != "function":
        raise TranslationError((*path, "type"), "only function calls have a place in ours")
    function = call["function"]
    return {"id": call["id"], "name": function["name"], "arguments": function["arguments"]}


def _part(part: Mapping[str, Any], path: FieldPath) -> dict[str, Any]:
    kind = PART_TYPES.read(str(part.get("type")))
    if kind is None:
        raise TranslationError((*path, "type"), f"{part.get('type')!r} content has no place "
                                                "in an LLM-Stream message")
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "image":
        image = part["image_url"]
        if image.get("detail", "auto") != "auto":
            raise TranslationError((*path, "image_url", "detail"),
                                   "an LLM-Stream image has no detail level")
        media_type, data = parse_data_url(image["url"], (*path, "image_url", "url"))
        return {"type": "image", "media_type": media_type, "data": data}
    if kind == "audio":
        audio = part["input_audio"]
        audio_type = OPENAI_AUDIO_MEDIA_TYPES.get(str(audio.get("format")))
        if audio_type is None:
            raise TranslationError((*path, "input_audio", "format"), "is not wav or mp3")
        return {"type": "audio", "media_type": audio_type, "data": audio["data"]}
    file = part["file"]
    if "file_data" not in file:
        raise TranslationError((*path, "file"), "only inline file_data can be carried; an "
                                                "uploaded file_id has no place in ours")
    media_type, data = parse_data_url(file["file_data"], (*path, "file", "file_data"))
    document = {"type": "document", "media_type": media_type, "data": data}
    if file.get("filename") is not None:
        document["filename"] = file["filename"]
    return document


def _tool(tool: Mapping[str, Any], path: FieldPath) -> dict[str, Any]:
    if tool.get("type") != "function":
        raise TranslationError((*path, "type"), "only function tools have a place in ours")
    function = tool["function"]
    if function.get("strict"):
        raise TranslationError((*path, "function", "strict"),
                               "an LLM-Stream tool has no strict schema adherence")
    return {"name": function["name"], "description": function.get("description", ""),
            "parameters": function.get("parameters", {"type": "object", "properties": {}})}
