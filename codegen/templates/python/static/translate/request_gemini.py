"""Our requests as Gemini generateContent bodies.

The model and the streaming choice are in Gemini's URL, not its body (`request_path` gives
it). The leading system messages become `systemInstruction`; a tool call is a functionCall
part of a model turn, and a run of tool messages one user turn of functionResponse parts, each
answering its call by id and by the function name the call gave.
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
    refuse_name,
    tool_names,
    vendor_parameters,
    vendor_part_type,
    vendor_role,
)

FORMAT = "gemini"
VENDOR = "Gemini"


def to_gemini(request: Mapping[str, Any]) -> dict[str, Any]:
    messages = request["messages"]
    names = tool_names(messages)
    system: list[dict[str, Any]] = []
    start = 0
    while start < len(messages) and messages[start]["role"] == "system":
        refuse_name(messages[start], ("messages", start), VENDOR)
        system.extend(_parts(messages[start], ("messages", start), names))
        start += 1
    contents: list[dict[str, Any]] = []
    previous = None
    for i in range(start, len(messages)):
        message, path = messages[i], ("messages", i)
        refuse_name(message, path, VENDOR)
        role = message["role"]
        if role == "system":
            raise TranslationError((*path, "role"), f"{VENDOR} takes system messages only "
                                                    "before the conversation (D-REQUEST-SYSTEM)")
        parts = _parts(message, path, names)
        if role == "tool" and previous == "tool":
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": vendor_role(FORMAT, role), "parts": parts})
        previous = role
    body: dict[str, Any] = {}
    if system:
        body["systemInstruction"] = {"parts": system}
    body["contents"] = contents
    if "tools" in request:
        body["tools"] = [{"functionDeclarations": [
            {"name": t["name"], "description": t["description"],
             "parametersJsonSchema": t["parameters"]}
            for t in request["tools"]
        ]}]
    body.update(vendor_parameters(FORMAT, VENDOR, request.get("parameters", {}), ("parameters",)))
    apply_extension(FORMAT, request, body)
    return body


def _parts(
    message: Mapping[str, Any], path: FieldPath, names: Mapping[str, str]
) -> list[dict[str, Any]]:
    checked = checked_parts(FORMAT, VENDOR, message, path)
    if message["role"] == "tool":
        content = message["content"]
        if isinstance(content, list) and len(content) != 1:
            raise TranslationError((*path, "content"), f"{VENDOR} takes a tool result as one "
                                                       "text")
        answered = message["tool_call_id"]
        return [{"functionResponse": {"id": answered, "name": names[answered],
                                      "response": {"output": checked[0][0]["text"]}}}]
    parts = [
        _part(part, here) for part, here in checked
        if not (part["type"] == "text" and part["text"] == "" and "tool_calls" in message)
    ]
    for position, call in enumerate(message.get("tool_calls", ())):
        here = (*path, "tool_calls", position, "arguments")
        parts.append({"functionCall": {"id": call["id"], "name": call["name"],
                                       "args": arguments_object(call["arguments"], here, VENDOR)}})
    return parts


def _part(part: Mapping[str, Any], path: FieldPath) -> dict[str, Any]:
    kind = part["type"]
    theirs = vendor_part_type(FORMAT, kind)
    assert theirs is not None  # checked_parts refused the types Gemini does not take
    if kind == "text":
        return {theirs: part["text"]}
    if "filename" in part:
        raise TranslationError((*path, "filename"), f"{VENDOR} has no name for inline data")
    return {theirs: {"mimeType": part["media_type"], "data": part["data"]}}
