"""The gateway upstream: the request sent to a vendor in its own format, its stream translated
into LLM-Stream as the bytes arrive (draft section 7.1), over one pool of HTTP connections.

The vendor's HTTP binding (URL, credentials header) is here; what the bytes mean is the
bindings' business: `llm_stream.translate` for the vendor formats, the decoder itself for an
upstream that already speaks LLM-Stream. The key is read from the environment variable that
`--api-key-env` names, never from the command line, and never logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from llm_stream import Decoder, Diagnostic
from llm_stream.registry import REQUEST_MEDIA_TYPE, RESPONSE_PROFILE_MEDIA_TYPE
from llm_stream.translate import TranslationError, request_path, request_to, stream_translator

from .errors import ErrorReply, upstream_failure
from .http_client import ConnectionPool, HTTPFailure, Response
from .upstream import EventBatch, EventFeed, UpstreamBroke

LOGGER = logging.getLogger("llm_stream_server.gateway")
ERROR_BODY_BYTES = 1 << 16
CONNECT_TIMEOUT = 10.0
"""Seconds to connect (and to read an error's body); the answer's head may take as long as the
silence deadline."""


class StreamReader(Protocol):
    """Upstream bytes in, LLM-Stream events out: a translator, or the decoder."""

    @property
    def diagnostics(self) -> list[Diagnostic]: ...

    def feed(self, data: bytes) -> list[Any]: ...

    def close(self) -> list[Any]: ...


@dataclass(frozen=True, slots=True)
class VendorFormat:
    """How to reach one kind of upstream over HTTP, and how to read what it sends."""

    name: str
    default_url: str | None
    key_env: str | None
    auth: Callable[[str], dict[str, str]]
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    accept: str = "text/event-stream"

    def path(self, model: str) -> str:
        """Where the streaming endpoint is, under the base URL."""
        return "" if self.name == "llm-stream" else request_path(self.name, model)

    def body(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The request in the upstream's format; TranslationError when it cannot say it."""
        return dict(request) if self.name == "llm-stream" else request_to(self.name, request)

    def reader(self, request: Mapping[str, Any]) -> StreamReader:
        """What turns the upstream's bytes into LLM-Stream events for `request`."""
        if self.name == "llm-stream":
            return Decoder(typed=False)
        request_id = (request.get("metadata") or {}).get("request_id")
        return stream_translator(self.name, model=request["model"], created=int(time.time()),
                                 request_id=request_id if isinstance(request_id, str) else None)


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


FORMATS: dict[str, VendorFormat] = {
    "openai-chat": VendorFormat("openai-chat", "https://api.openai.com", "OPENAI_API_KEY",
                                _bearer),
    "openai-responses": VendorFormat("openai-responses", "https://api.openai.com",
                                     "OPENAI_API_KEY", _bearer),
    "anthropic": VendorFormat("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
                              lambda key: {"x-api-key": key},
                              headers={"anthropic-version": "2023-06-01"}),
    "gemini": VendorFormat("gemini", "https://generativelanguage.googleapis.com",
                           "GEMINI_API_KEY", lambda key: {"x-goog-api-key": key}),
    "llm-stream": VendorFormat("llm-stream", None, "LLM_STREAM_API_KEY", _bearer,
                               content_type=REQUEST_MEDIA_TYPE,
                               accept=RESPONSE_PROFILE_MEDIA_TYPE),
}
"""Every upstream format the gateway speaks, by the name `--upstream` takes; the base URL is
the server's root (the path of the vendor's streaming endpoint is appended), except for an
LLM-Stream upstream, whose URL is the endpoint's own."""


class Gateway:
    """An upstream reached over HTTP; one connection pool for every stream."""

    def __init__(
        self,
        vendor: VendorFormat,
        *,
        base_url: str,
        api_key: str | None,
        silence: float,
        connections: int = 1000,
    ) -> None:
        if api_key is not None and not (api_key.isascii() and api_key.isprintable()):
            raise ValueError("the upstream's key holds a character a header cannot carry "
                             "(a line break?)")
        self.vendor = vendor
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.pool = ConnectionPool(max_connections=connections, max_idle=connections,
                                   connect_timeout=CONNECT_TIMEOUT, read_timeout=silence)
        self.pool.proxy(self.base_url)  # a proxy it cannot use is refused at start

    @property
    def name(self) -> str:
        return self.vendor.name

    async def open(self, request: Mapping[str, Any]) -> EventFeed:
        try:
            body = self.vendor.body(request)
        except TranslationError as refused:
            raise ErrorReply(400, "invalid_request",
                             f"{self.vendor.name} cannot express {refused}",
                             param=refused.field or None) from None
        reader = self.vendor.reader(request)
        headers = {
            "Content-Type": self.vendor.content_type,
            "Accept": self.vendor.accept,
            "Accept-Encoding": "identity",  # events are small and flushed one by one
            **self.vendor.headers,
            **(self.vendor.auth(self.api_key) if self.api_key else {}),
        }
        url = self.base_url + self.vendor.path(request["model"])
        try:
            response = await self.pool.post(
                url, headers,
                json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())
        except HTTPFailure as failure:
            if failure.timeout:
                raise ErrorReply(504, "upstream_timeout", str(failure)) from None
            raise ErrorReply(502, "internal_error", str(failure)) from None
        if response.status != 200:
            try:
                refusal = await response.read(ERROR_BODY_BYTES, CONNECT_TIMEOUT)
            finally:  # a client gone meanwhile must not keep the connection's slot
                response.close()
            answer = upstream_failure(response.status, refusal, response.headers)
            if (proxy := self.pool.proxy(url)) is not None:  # the proxy may be who answered
                answer.message += f" (through the proxy {proxy.host}:{proxy.port})"
            raise answer
        if response.failure is not None:
            response.close()
            raise ErrorReply(502, "internal_error", response.failure)
        return TranslatedFeed(response, reader, self.vendor.name)

    async def aclose(self) -> None:
        self.pool.close()


class TranslatedFeed(EventFeed):
    """An upstream's answer read as it arrives: the body's bytes are translated when the
    relay takes them, all that came at once."""

    def __init__(self, response: Response, reader: StreamReader, vendor: str) -> None:
        super().__init__()
        self._response = response
        self._reader = reader
        self._vendor = vendor
        self._closed = False
        self._ended = False
        """stream.end has come: the reader wants nothing more of the body."""
        response.on_data = self.wake

    def take(self) -> EventBatch:
        response = self._response
        if self._closed:
            return []
        data = response.take()
        if not (data or response.complete or response.failure):
            return []  # woken for nothing, or taken twice
        events: EventBatch = self._reader.feed(data)
        if events and events[-1].get("type") == "stream.end":
            self._ended = True
        if response.complete:
            events = [*events, *self._reader.close()]
            self._close()
        elif response.failure is not None and not events:
            self._close()
            raise UpstreamBroke("truncated", f"the upstream connection failed mid-stream "
                                f"({response.failure})")
        return events

    @property
    def finished(self) -> bool:
        return self._closed

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._response.close(finishing=self._ended)
        if self._reader.diagnostics:
            LOGGER.warning("%s upstream stream: %s", self._vendor, ", ".join(
                f"{d.rule}@{d.line}" for d in self._reader.diagnostics[:20]))

    async def aclose(self) -> None:
        self._close()
