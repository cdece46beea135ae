"""What every request translator shares: the error that names a field, and the request's pieces.

A translator refuses what its vendor cannot express rather than dropping it, so every refusal
carries the path of the refused field in the body it was given, both as the dotted form people
read (`messages[2].content[0]`) and as a JSON pointer, from which a command finds the line.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..jsontext import loads
from ..models import Parameters
from .request_limits import DOCUMENT_EXTENSIONS, EXTENSION_NAMESPACES, ROLE_PARTS
from .tables import FIELD_MAPS, VALUE_MAPS

Segment = str | int
FieldPath = tuple[Segment, ...]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)


class TranslationError(ValueError):
    """A request a vendor format cannot express, naming the field that cannot be carried."""

    def __init__(self, path: FieldPath, message: str) -> None:
        self.path = path
        self.field = field_name(path)
        self.message = message
        super().__init__(f"{self.field}: {message}" if self.field else message)

    @property
    def pointer(self) -> str:
        """The refused field as a JSON pointer (RFC 6901)."""
        return "".join(
            "/" + str(s).replace("~", "~0").replace("/", "~1") for s in self.path
        )


def field_name(path: FieldPath) -> str:
    """`messages[2].content[0]`, with keys that are no identifiers quoted: `extensions["a:b"]`."""
    text = ""
    for segment in path:
        if isinstance(segment, int):
            text += f"[{segment}]"
        elif _IDENTIFIER.fullmatch(segment):
            text += f".{segment}" if text else segment
        else:
            text += f'["{segment}"]'
    return text


def parts_of(content: Any) -> list[dict[str, Any]]:
    """A message's content as content parts: a string is one text part (LS-MSG-8), null none."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def data_url(part: Mapping[str, Any]) -> str:
    return f"data:{part['media_type']};base64,{part['data']}"


def parse_data_url(url: str, path: FieldPath) -> tuple[str, str]:
    """The media type and base64 data of a `data:` URL; any other URL points at content that
    an LLM-Stream request cannot carry, because its parts hold their data inline."""
    match = _DATA_URL.fullmatch(url)
    if match is None:
        raise TranslationError(
            path, "only base64 data: URLs can be carried; an LLM-Stream content part holds "
                  "its data inline"
        )
    return match.group(1), match.group(2)


def decoded_text(part: Mapping[str, Any], path: FieldPath) -> str:
    """A text document's content, for vendors that take text documents as text."""
    try:
        return base64.b64decode(part["data"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise TranslationError((*path, "data"), f"is not base64 of UTF-8 text: {exc}") from None


def refuse_name(message: Mapping[str, Any], path: FieldPath, vendor: str) -> None:
    """The participant name has no place in the vendor's message (D-REQUEST-NAME)."""
    if "name" in message:
        raise TranslationError((*path, "name"), f"{vendor} has no participant name for this "
                                                "message")


def tool_names(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The function name of every tool call of the history, by call id: vendors that answer a
    call by function name need it for the tool message, which carries only the id."""
    return {
        call["id"]: call["name"]
        for message in messages if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
    }


def apply_extension(fmt: str, request: Mapping[str, Any], body: dict[str, Any]) -> None:
    """The members of the format's extension namespace, put into its body (D-REQUEST-EXTENSIONS);
    other namespaces are not this vendor's and are ignored, as LS-EXT-2 requires."""
    namespace = EXTENSION_NAMESPACES[fmt]
    extension = request.get("extensions", {}).get(namespace)
    if extension is None:
        return
    path: FieldPath = ("extensions", namespace)
    if not isinstance(extension, Mapping):
        raise TranslationError(path, "its members go into the vendor's body, so it must be an "
                                     "object")
    merge_extension(body, extension, path)


def merge_extension(
    body: dict[str, Any], extension: Mapping[str, Any], path: FieldPath
) -> None:
    """Put the members of a vendor's extension namespace into its body: objects merge member
    by member, and a member the translation already set to another value is refused."""
    for key, value in extension.items():
        here = (*path, key)
        if key not in body:
            body[key] = value
        elif isinstance(body[key], dict) and isinstance(value, Mapping):
            merge_extension(body[key], value, here)
        elif body[key] != value:
            raise TranslationError(
                here, f"conflicts with {key!r} as the translation sets it ({body[key]!r})"
            )


def checked_parts(
    fmt: str, vendor: str, message: Mapping[str, Any], path: FieldPath
) -> list[tuple[dict[str, Any], FieldPath]]:
    """The message's parts with their paths, each of a type the format takes in this role."""
    role = message["role"]
    content = message.get("content")
    checked = []
    for position, part in enumerate(parts_of(content)):
        here = (*path, "content", position) if isinstance(content, list) else (*path, "content")
        kind = part["type"]
        if vendor_part_type(fmt, kind) is None:
            raise TranslationError((*here, "type"), f"{vendor} takes no {kind} content")
        if kind not in ROLE_PARTS[fmt][role]:
            raise TranslationError((*here, "type"),
                                   f"{vendor} takes no {kind} part in a {role} message")
        if "filename" in part and kind != "document":
            raise TranslationError((*here, "filename"), "only a document has a filename")
        checked.append((part, here))
    return checked


def vendor_role(fmt: str, role: str) -> str | None:
    return VALUE_MAPS[fmt]["roles"].write(role)


def vendor_part_type(fmt: str, kind: str) -> str | None:
    return VALUE_MAPS[fmt]["content-part-types"].write(kind)


def vendor_parameters(
    fmt: str, vendor: str, parameters: Mapping[str, Any], path: FieldPath
) -> dict[str, Any]:
    """Our generation parameters under the format's names, nested along dotted paths; those a
    format has no name for are refused, and parameters we do not know are ignored, as
    LS-PARAM-3 requires (D-REQUEST-PARAMETERS)."""
    names = {ours: theirs for theirs, (ours, *_) in FIELD_MAPS[fmt]["parameters"]
             .to_vendor.items()}
    result: dict[str, Any] = {}
    for ours, value in parameters.items():
        if ours not in Parameters.model_fields:
            continue
        if ours not in names:
            raise TranslationError((*path, ours), f"{vendor} has no {ours}")
        *parents, last = names[ours].split(".")
        target = result
        for name in parents:
            target = target.setdefault(name, {})
        target[last] = value
    return result


def document_filename(part: Mapping[str, Any], number: int) -> str:
    """The part's own filename, or `document-N` with the media type's extension, for vendors
    that need a name for inline file data (D-DOCUMENT-FILENAME)."""
    if "filename" in part:
        return str(part["filename"])
    extension = DOCUMENT_EXTENSIONS.get(part["media_type"])
    return f"document-{number}.{extension}" if extension else f"document-{number}"


def arguments_object(arguments: str, path: FieldPath, vendor: str) -> Any:
    """The arguments of a tool call as the JSON object the vendor's history holds."""
    try:
        value = loads(arguments)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise TranslationError(path, f"{vendor} holds a call's arguments as a JSON object, and "
                                     "these are not one")
    return value
