"""One scenario's request sent, and everything its response held, decoded as it arrived."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from llm_stream import Decoder, Diagnostic

BODY_LIMIT = 16 << 20
"""A response larger than this is cut off: no scenario needs a long answer."""


@dataclass
class Exchange:
    """What came back: status, media type, body, and the events and diagnostics of the body
    read as LLM-Stream. `failure` says why there is no complete response, if there is none."""

    status: int | None = None
    content_type: str = ""
    body: bytes = b""
    events: list[Any] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0

    @property
    def is_event_stream(self) -> bool:
        return self.content_type.split(";")[0].strip().lower() == "text/event-stream"

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    @property
    def text(self) -> str:
        return "".join(e.get("delta", {}).get("text", "") for e in self.of_type("content.delta"))

    @property
    def stop_reasons(self) -> list[str]:
        return [str(e.get("stop_reason")) for e in self.of_type("content.stop")]


def send(
    client: httpx.Client,
    url: str,
    *,
    body: bytes,
    headers: Mapping[str, str],
    decoder: Decoder,
    timeout: float,
) -> Exchange:
    """POST `body` to `url` and read the whole response, decoding it as LLM-Stream whatever it
    claims to be (what it claims is judged apart), within `timeout` seconds in all."""
    exchange = Exchange()
    started = time.monotonic()
    try:
        with client.stream("POST", url, content=body, headers=dict(headers)) as response:
            exchange.status = response.status_code
            exchange.content_type = response.headers.get("content-type", "")
            for chunk in response.iter_bytes():
                exchange.body += chunk
                exchange.events.extend(decoder.feed(chunk))
                if len(exchange.body) > BODY_LIMIT:
                    exchange.failure = f"the response is larger than {BODY_LIMIT} bytes"
                    break
                if time.monotonic() - started > timeout:
                    exchange.failure = f"the response took longer than {timeout:g} s"
                    break
            else:
                exchange.events.extend(decoder.close())
    except httpx.TimeoutException:
        exchange.failure = f"no answer within {timeout:g} s"
    except httpx.HTTPError as exc:
        exchange.failure = f"{type(exc).__name__}: {exc}"
    exchange.diagnostics = decoder.diagnostics
    exchange.seconds = time.monotonic() - started
    return exchange
