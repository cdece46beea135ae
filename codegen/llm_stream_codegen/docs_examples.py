"""The examples as the documentation prints them: the spec's example files byte for byte (line
ends named), split into SSE blocks, an event type's examples (the valid streams that contain it),
and the example values of its fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .model import (
    Example,
    Spec,
)

STREAM_EXAMPLE_FOLDERS = ("complete/", "valid-extra/")


@dataclass(frozen=True)
class SSEBlock:
    type: str
    text: str
    first_line: int
    last_line: int


@dataclass(frozen=True)
class ShownExample:
    example: Example
    text: str
    language: str
    line_ends: str
    relevant: str = ""
    highlight: str = ""
    also_in: tuple[Example, ...] = field(default_factory=tuple)
    pretty: str = ""
    """The picked events' JSON envelopes, pretty-printed, one after another."""


def _line_ends(raw: bytes) -> str:
    if b"\r\n" in raw:
        return "CRLF"
    if b"\r" in raw:
        return "CR"
    return "LF"


def _as_text(raw: bytes) -> str:
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def sse_blocks(text: str) -> list[SSEBlock]:
    """The events of an SSE body: the lines between blank lines, with their type."""
    blocks: list[SSEBlock] = []
    current: list[str] = []
    start = 1
    for number, line in enumerate([*text.split("\n"), ""], start=1):
        if line:
            if not current:
                start = number
            current.append(line)
            continue
        if current:
            kind = ""
            for item in current:
                if item.startswith("event:"):
                    kind = item[6:].removeprefix(" ")
            if not kind:
                for item in current:
                    if item.startswith("data:"):
                        try:
                            data = json.loads(item[5:])
                        except ValueError:
                            continue
                        if isinstance(data, dict):
                            kind = str(data.get("type", ""))
            blocks.append(SSEBlock(kind, "\n".join(current) + "\n", start, number - 1))
            current = []
    return blocks


def _language(file: str) -> str:
    return {"json": "json", "http": "http"}.get(file.rsplit(".", 1)[-1], "text")


def shown(example: Example) -> ShownExample:
    raw = example.content
    return ShownExample(example, _as_text(raw), _language(example.file), _line_ends(raw))


def stream_examples(spec: Spec) -> list[Example]:
    """The valid .sse streams of spec/examples (complete/ and valid-extra/)."""
    return [
        e for e in spec.examples
        if e.file.startswith(STREAM_EXAMPLE_FOLDERS) and e.file.endswith(".sse") and e.valid
    ]


def event_examples(spec: Spec, name: str) -> list[ShownExample]:
    """The example streams with an event of type `name`, with those events picked out; a stream
    whose picked events are the same as an earlier one's is named under it, not repeated."""
    result: list[ShownExample] = []
    for example in stream_examples(spec):
        whole = shown(example)
        picked = [b for b in sse_blocks(whole.text) if b.type == name]
        if not picked:
            continue
        relevant = "\n".join(block.text for block in picked)
        same = next((r for r in result if r.relevant == relevant), None)
        if same is not None:
            result[result.index(same)] = replace(same, also_in=(*same.also_in, example))
            continue
        lines = [str(n) for b in picked for n in range(b.first_line, b.last_line + 1)]
        pretty = "\n\n".join(json.dumps(data, indent=2, ensure_ascii=False)
                              for data in map(block_data, picked) if data is not None)
        result.append(ShownExample(example, whole.text, "text", whole.line_ends, relevant,
                                   " ".join(lines), pretty=pretty))
    return result


def json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def block_data(block: SSEBlock) -> Any:
    """The JSON of an SSE event's data lines (joined as SSE joins them), or None."""
    return json_or_none("\n".join(line[5:].removeprefix(" ") for line in block.text.split("\n")
                                    if line.startswith("data:")))


EXAMPLE_WIDTH = 20


def _example_text(value: Any) -> str | None:
    """A field's value as a short JSON example, or None for an object (its fields have rows of
    their own) or a value too long to be read at a glance."""
    if isinstance(value, dict):
        return None
    if isinstance(value, str) and len(value) > EXAMPLE_WIDTH:
        return json.dumps(value[:EXAMPLE_WIDTH - 4], ensure_ascii=False)[:-1] + '…"'
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= EXAMPLE_WIDTH + 8 else None


def example_values(instances: Iterable[Any]) -> dict[str, str]:
    """For each field path (`delta.text`), the first value the instances give it, as JSON."""
    found: dict[str, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            path = prefix + str(key)
            if path not in found:
                text = _example_text(value)
                if text is not None:
                    found[path] = text
            walk(value, path + ".")

    for instance in instances:
        walk(instance, "")
    return found


def event_instances(spec: Spec, name: str | None = None) -> list[Any]:
    """The events of the valid example streams, of one type or of every type."""
    return [
        data for example in stream_examples(spec)
        for block in sse_blocks(shown(example).text)
        if name is None or block.type == name
        for data in [block_data(block)] if data is not None
    ]
