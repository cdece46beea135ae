"""One structured log line per stream, and never a word of the prompt (draft section 8.1).

The record holds what an operator needs (route, model, upstream, status, events, tokens,
duration, how the stream ended) and nothing that came from the messages: the request's text
is read by the checker and the upstream, never by the log.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field

LOGGER = logging.getLogger("llm_stream_server.access")


@dataclass
class StreamRecord:
    """What the access log says of one request."""

    route: str
    upstream: str
    model: str | None = None
    status: int = 200
    events: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    outcome: str = "complete"
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        """The record as one line of JSON."""
        return json.dumps({
            "route": self.route,
            "model": self.model,
            "upstream": self.upstream,
            "status": self.status,
            "events": self.events,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "outcome": self.outcome,
            "duration_ms": round((time.monotonic() - self.started) * 1000, 1),
        }, ensure_ascii=False, separators=(",", ":"))

    def emit(self) -> None:
        LOGGER.info("%s", self.line())
