"""Which format a request is in and which one its client wants back (draft sections 7.2, 7.3).

One server speaks two formats: LLM-Stream (`application/llm-request+json` in,
`text/event-stream` with LLM-Stream events out) and OpenAI Chat Completions (`application/json`
in, chunks or one JSON object out). The request's Content-Type says what it is in; an Accept
header with the profile `llm-stream-1.0` asks for LLM-Stream events whatever the request was in.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from llm_stream.registry import REQUEST_MEDIA_TYPE

EVENT_STREAM = "text/event-stream"
PROFILE = "llm-stream-1.0"


class Wire(Enum):
    """A format of requests and responses."""

    LLM_STREAM = "llm-stream"
    OPENAI_CHAT = "openai-chat"


@dataclass(frozen=True, slots=True)
class MediaRange:
    """One media type or range of a Content-Type or Accept header, with its parameters."""

    type: str
    parameters: dict[str, str]

    @property
    def quality(self) -> float:
        try:
            return float(self.parameters.get("q", "1"))
        except ValueError:
            return 1.0

    def covers(self, media_type: str) -> bool:
        kind, _, subtype = media_type.partition("/")
        own_kind, _, own_subtype = self.type.partition("/")
        return own_kind in ("*", kind) and own_subtype in ("*", subtype)


def parse_media_ranges(header: str) -> list[MediaRange]:
    """The comma-separated media ranges of a header, lower-cased, quotes taken off values."""
    ranges = []
    for item in _split_outside_quotes(header, ","):
        kind, *parameters = _split_outside_quotes(item, ";")
        kind = kind.strip().lower()
        if not kind:
            continue
        values = {}
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            values[name.strip().lower()] = value.strip().strip('"')
        ranges.append(MediaRange(kind, values))
    return ranges


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for character in text:
        if character == '"':
            quoted = not quoted
        if character == separator and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(character)
    parts.append("".join(current))
    return parts


def request_wire(content_type: str | None) -> Wire | None:
    """The format of a request body by its Content-Type; None for one this server refuses."""
    ranges = parse_media_ranges(content_type or "")
    if len(ranges) != 1:
        return None
    if ranges[0].type == REQUEST_MEDIA_TYPE:
        return Wire.LLM_STREAM
    if ranges[0].type == "application/json":
        return Wire.OPENAI_CHAT
    return None


def asks_for_llm_stream(accept: str | None) -> bool:
    """Whether an Accept header names text/event-stream with the profile llm-stream-1.0."""
    return any(
        r.type == EVENT_STREAM and r.parameters.get("profile") == PROFILE and r.quality > 0
        for r in parse_media_ranges(accept or "")
    )


def accepts(accept: str | None, media_type: str) -> bool:
    """Whether a response of `media_type` is acceptable; a missing Accept accepts anything."""
    if not accept or not accept.strip():
        return True
    return any(r.covers(media_type) and r.quality > 0 for r in parse_media_ranges(accept))
