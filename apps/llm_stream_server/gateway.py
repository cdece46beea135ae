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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from llm_stream import Decoder, Diagnostic
from llm_stream.registry import REQUEST_MEDIA_TYPE, RESPONSE_PROFILE_MEDIA_TYPE

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
    path: str
    """Appended to the base URL; {model} stands for the request's model."""
    body: Callable[[Mapping[str, Any]], dict[str, Any]]
    reader: Callable[[Mapping[str, Any]], StreamReader]
    auth: Callable[[str], dict[str, str]]
    accept: str = "text/event-stream"


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _as_is(request: Mapping[str, Any]) -> dict[str, Any]:
    return dict(request)


def _decoder(_: Mapping[str, Any]) -> StreamReader:
    return Decoder(typed=False)


FORMATS: dict[str, VendorFormat] = {
    "llm-stream": VendorFormat(
        "llm-stream", None, "LLM_STREAM_API_KEY", "", _as_is, _decoder, _bearer,
        accept=RESPONSE_PROFILE_MEDIA_TYPE),
}
"""Every upstream format the gateway speaks, by the name `--upstream` takes."""


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

    def url(self, request: Mapping[str, Any]) -> str:
        return self.base_url + self.vendor.path.format(model=request["model"])

    async def open(self, request: Mapping[str, Any]) -> EventStream:
        body = self.vendor.body(request)
        headers = {
            "Content-Type": REQUEST_MEDIA_TYPE if self.vendor.name == "llm-stream"
            else "application/json",
            "Accept": self.vendor.accept,
            **(self.vendor.auth(self.api_key) if self.api_key else {}),
        }
        outgoing = self.client.build_request(
            "POST", self.url(request), headers=headers,
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
        try:
            async for chunk in response.aiter_bytes():
                events = reader.feed(chunk)
                if events:
                    yield events
            tail = reader.close()
            if tail:
                yield tail
        except httpx.HTTPError as exc:
            raise UpstreamBroke(
                "internal_error",
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
