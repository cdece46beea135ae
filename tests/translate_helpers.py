"""Running a translator over a body in given chunks, and judging what it gives."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from llm_stream import Decoder, Diagnostic, Severity, encode_event
from llm_stream.translate import stream_translator

CREATED = 1767225600


def translate(fmt: str, body: bytes, cuts: Iterable[int] = (), **options: Any
              ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """The events and diagnostics of translating `body` fed in pieces cut at `cuts`."""
    translator = stream_translator(fmt, created=CREATED, **options)
    events: list[dict[str, Any]] = []
    start = 0
    for cut in sorted({c for c in cuts if 0 < c < len(body)}):
        events += translator.feed(body[start:cut])
        start = cut
    events += translator.feed(body[start:])
    events += translator.close()
    return events, translator.diagnostics


def event_cuts(body: bytes) -> list[int]:
    """Where each event of a body ends, in any line ends: one event per chunk, as servers
    flush them (the translators' fast path)."""
    return [m.end() for m in re.finditer(rb"(\r\n|\r|\n)(\r\n|\r|\n)", body)]


def encode(events: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(encode_event(event) for event in events)


def check(events: Sequence[dict[str, Any]]) -> list[Diagnostic]:
    """What `llm-stream check` reports on the encoded events: errors and warnings."""
    decoder = Decoder(typed=False)
    decoder.feed(encode(events))
    decoder.close()
    return decoder.diagnostics


def errors(diagnostics: Iterable[Diagnostic]) -> list[str]:
    return [str(d) for d in diagnostics if d.severity is Severity.ERROR]


def types(events: Iterable[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def sse(*datas: object, event: str | None = None, eol: str = "\n") -> bytes:
    """An SSE body of `data:` events (JSON-encoded unless already text)."""
    out = []
    for data in datas:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        head = f"event: {event}{eol}" if event else ""
        out.append(f"{head}data: {text}{eol}{eol}")
    return "".join(out).encode()


def named(*pairs: tuple[str, object]) -> bytes:
    """An SSE body of named events: (event type, data)."""
    return b"".join(sse(data, event=kind) for kind, data in pairs)
