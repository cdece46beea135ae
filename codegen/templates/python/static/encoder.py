"""Events to the exact bytes of draft section 5.1: `event:` line, one `data:` line, blank line.

The JSON is compact and keeps non-ASCII text as UTF-8, so the same event always gives the same
bytes; `Encoder` numbers the events of one stream, which is the one thing a server gets wrong
most easily.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

VERSION = "1.0"


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _as_dict(event: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    if isinstance(event, BaseModel):
        return event.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return dict(event)


def encode_event(event: Mapping[str, Any] | BaseModel) -> bytes:
    """One complete event as it goes on the wire; the event's own v, seq and order are kept."""
    envelope = _as_dict(event)
    kind = envelope.get("type")
    if not isinstance(kind, str) or not kind or "\n" in kind or "\r" in kind:
        raise ValueError(f"an event needs a one-line string type, got {kind!r}")
    return f"event: {kind}\ndata: {_compact(envelope)}\n\n".encode()


class Encoder:
    """Numbers the events of one stream from 0 and encodes them (sans-IO: returns bytes)."""

    def __init__(self) -> None:
        self.seq = 0

    def encode(self, event: Mapping[str, Any] | BaseModel) -> bytes:
        """Encode `event` with `v` and the next `seq` put first, replacing any it carried."""
        fields = _as_dict(event)
        fields.pop("v", None)
        fields.pop("seq", None)
        kind = fields.pop("type", None)
        data = encode_event({"v": VERSION, "seq": self.seq, "type": kind, **fields})
        self.seq += 1
        return data

    def event(self, kind: str, **fields: Any) -> bytes:
        """Encode an event of type `kind` with `fields`: `encoder.event("usage", ...)`."""
        return self.encode({"type": kind, **fields})
