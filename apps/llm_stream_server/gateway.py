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

import httpx

from llm_stream import Decoder, Diagnostic
from llm_stream.registry import REQUEST_MEDIA_TYPE, RESPONSE_PROFILE_MEDIA_TYPE
from llm_stream.translate import TranslationError, request_path, request_to, stream_translator

from .errors import ErrorReply, upstream_failure
from .upstream import EventStream, UpstreamBroke

LOGGER = logging.getLogger("llm_stream_server.gateway")
ERROR_BODY_BYTES = 1 << 16


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
        self.vendor = vendor
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(10.0, read=silence),
            limits=httpx.Limits(max_connections=connections,
                                max_keepalive_connections=min(connections, 100)),
        )

    @property
    def name(self) -> str:
        return self.vendor.name

    async def open(self, request: Mapping[str, Any]) -> EventStream:
        try:
            body = self.vendor.body(request)
        except TranslationError as refused:
            raise ErrorReply(400, "invalid_request",
                             f"{self.vendor.name} cannot express {refused}",
                             param=refused.field or None) from None
        headers = {
            "Content-Type": self.vendor.content_type,
            "Accept": self.vendor.accept,
            "Accept-Encoding": "identity",  # events are small and flushed one by one
            **self.vendor.headers,
            **(self.vendor.auth(self.api_key) if self.api_key else {}),
        }
        outgoing = self.client.build_request(
            "POST", self.base_url + self.vendor.path(request["model"]), headers=headers,
            content=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())
        try:
            response = await self.client.send(outgoing, stream=True)
        except httpx.TimeoutException:
            raise ErrorReply(504, "upstream_timeout",
                             "the upstream did not answer in time") from None
        except httpx.HTTPError as exc:
            raise ErrorReply(502, "internal_error",
                             f"the upstream could not be reached ({type(exc).__name__})") from None
        if response.status_code != 200:
            refusal = await _error_body(response)
            raise upstream_failure(response.status_code, refusal, response.headers)
        return self._events(response, self.vendor.reader(request))

    async def _events(self, response: httpx.Response, reader: StreamReader) -> EventStream:
        encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
        try:
            # the raw bytes, unless the upstream compressed them: no decoding layer per chunk
            async for chunk in response.aiter_bytes() if encoded else response.aiter_raw():
                events = reader.feed(chunk)
                if events:
                    yield events
            tail = reader.close()
            if tail:
                yield tail
        except httpx.HTTPError as exc:
            raise UpstreamBroke(
                "truncated",
                f"the upstream connection failed mid-stream ({type(exc).__name__})") from None
        finally:
            await response.aclose()
            if reader.diagnostics:
                LOGGER.warning("%s upstream stream: %s", self.vendor.name, ", ".join(
                    f"{d.rule}@{d.line}" for d in reader.diagnostics[:20]))

    async def aclose(self) -> None:
        await self.client.aclose()


async def _error_body(response: httpx.Response) -> bytes:
    """The start of a refusal's body (vendors explain themselves in JSON), then closed."""
    body = b""
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) >= ERROR_BODY_BYTES:
                break
    except httpx.HTTPError:
        pass
    finally:
        await response.aclose()
    return body
