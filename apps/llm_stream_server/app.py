"""The ASGI application: the LLM-Stream route and the OpenAI-compatible route of one server.

`POST /v1/stream` takes `application/llm-request+json` and answers LLM-Stream (any other
Content-Type gets 415, draft section 7.2). `POST /v1/chat/completions` takes an OpenAI chat
request as `application/json` and answers as OpenAI does, or LLM-Stream when the client's Accept
header carries the profile `llm-stream-1.0` or the body is `application/llm-request+json`
(section 7.3). Every request is checked in full before anything is sent upstream.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from llm_stream import check_request_text
from llm_stream.diagnostics import Severity
from llm_stream.jsontext import loads
from llm_stream.registry import REQUEST_MEDIA_TYPE
from llm_stream.translate import OpenAIChatWriter, TranslationError, request_from

from .access_log import StreamRecord
from .completion import fold
from .errors import ErrorReply
from .negotiation import EVENT_STREAM, Wire, accepts, asks_for_llm_stream, request_wire
from .relay import Deadlines, Framing, LLMStreamFraming, Progress, Relay
from .streaming import EventStreamResponse
from .upstream import Upstream

STREAM_HEADERS = {"Cache-Control": "no-cache"}


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """What an operator tunes: the largest request body, and the stream deadlines."""

    max_body_bytes: int = 4 << 20
    deadlines: Deadlines = field(default_factory=Deadlines)


def create_app(upstream: Upstream, options: ServerOptions = ServerOptions()) -> Starlette:
    """The server answering from `upstream`, which it closes when it stops."""

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await upstream.aclose()

    server = _Server(upstream, options)
    return Starlette(
        routes=[
            Route("/v1/stream", server.llm_stream, methods=["POST"]),
            Route("/v1/chat/completions", server.chat_completions, methods=["POST"]),
            Route("/healthz", server.health, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


class _Server:
    def __init__(self, upstream: Upstream, options: ServerOptions) -> None:
        self.upstream = upstream
        self.options = options

    async def health(self, _: Request) -> Response:
        return JSONResponse({"status": "ok", "upstream": self.upstream.name})

    async def llm_stream(self, request: Request) -> Response:
        record = StreamRecord(route="/v1/stream", upstream=self.upstream.name)
        try:
            if request_wire(request.headers.get("content-type")) is not Wire.LLM_STREAM:
                raise ErrorReply(
                    415, "unsupported_media_type",
                    f"this route takes {REQUEST_MEDIA_TYPE} requests",
                    headers={"Accept-Post": REQUEST_MEDIA_TYPE})
            return await self._answer_llm_stream(request, record)
        except ErrorReply as refusal:
            return self._refuse(refusal, Wire.LLM_STREAM, record)

    async def chat_completions(self, request: Request) -> Response:
        record = StreamRecord(route="/v1/chat/completions", upstream=self.upstream.name)
        try:
            wire = request_wire(request.headers.get("content-type"))
            if wire is Wire.LLM_STREAM:
                return await self._answer_llm_stream(request, record)
            if wire is not Wire.OPENAI_CHAT:
                raise ErrorReply(
                    415, "unsupported_media_type",
                    f"this route takes application/json or {REQUEST_MEDIA_TYPE} requests",
                    headers={"Accept-Post": f"application/json, {REQUEST_MEDIA_TYPE}"})
            return await self._answer_openai(request, record)
        except ErrorReply as refusal:
            return self._refuse(refusal, wire_of_errors(request), record)

    async def _answer_openai(self, request: Request, record: StreamRecord) -> Response:
        """An OpenAI chat request, read into ours and checked, answered in chunks, in one
        chat.completion (`stream` false), or in LLM-Stream when the Accept profile asks."""
        body = await read_body(request, self.options.max_body_bytes)
        try:
            openai_request = loads(body)
            ours = request_from("openai-chat", openai_request)
        except TranslationError as refused:
            raise ErrorReply(400, "invalid_request", str(refused),
                             param=refused.field or None) from None
        except ValueError as exc:
            raise ErrorReply(400, "invalid_request", f"the body is not JSON: {exc}") from None
        checked = checked_request(json.dumps(ours).encode())
        record.model = checked["model"]
        if asks_for_llm_stream(request.headers.get("accept")):
            return await self._stream(checked, LLMStreamFraming(), record)
        writer = OpenAIChatWriter(completion_id=f"chatcmpl-{uuid.uuid4().hex}",
                                  model=checked["model"], created=int(time.time()))
        if openai_request.get("stream") is True:
            return await self._stream(checked, writer, record)
        return await self._complete(checked, writer, record)

    async def _complete(
        self, checked: Mapping[str, Any], writer: OpenAIChatWriter, record: StreamRecord
    ) -> Response:
        """The whole answer at once: the writer's chunks, folded."""
        feed = await self.upstream.open(checked)
        progress = Progress(start_fields(checked), record)
        chunks = [piece async for piece in Relay(feed, writer, progress,
                                                 self.options.deadlines).pieces()]
        completion, error = fold(b"".join(chunks))
        if error is not None:  # the access log has its line, from the relay
            return ErrorReply(502, str(error.get("code") or "internal_error"),
                              str(error.get("message"))).response(Wire.OPENAI_CHAT)
        return JSONResponse(completion)

    async def _answer_llm_stream(self, request: Request, record: StreamRecord) -> Response:
        """Check an LLM-Stream request and stream the upstream's answer to it."""
        if not accepts(request.headers.get("accept"), EVENT_STREAM):
            raise ErrorReply(406, "not_acceptable",
                             f"this route answers {EVENT_STREAM} only")
        body = await read_body(request, self.options.max_body_bytes)
        checked = checked_request(body)
        record.model = checked["model"]
        return await self._stream(checked, LLMStreamFraming(), record)

    async def _stream(
        self, checked: Mapping[str, Any], framing: Framing, record: StreamRecord
    ) -> Response:
        feed = await self.upstream.open(checked)
        body = Relay(feed, framing, Progress(start_fields(checked), record),
                     self.options.deadlines)
        return EventStreamResponse(body.pieces(), STREAM_HEADERS, stop=body.stop)

    def _refuse(self, refusal: ErrorReply, wire: Wire, record: StreamRecord) -> Response:
        record.status = refusal.status
        record.outcome = f"refused:{refusal.code}"
        record.emit()
        return refusal.response(wire)


def wire_of_errors(request: Request) -> Wire:
    """The format a route's errors take: OpenAI's, unless the client spoke LLM-Stream."""
    if request_wire(request.headers.get("content-type")) is Wire.LLM_STREAM:
        return Wire.LLM_STREAM
    return Wire.OPENAI_CHAT


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed `limit` bytes."""
    declared = request.headers.get("content-length", "")
    too_large = ErrorReply(413, "request_too_large",
                           f"the request body is larger than {limit} bytes")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def checked_request(body: bytes) -> dict[str, Any]:
    """The request, if it conforms; else a 400 whose diagnostics name each rule and line."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ErrorReply(400, "invalid_request", f"the body is not UTF-8: {exc}") from None
    diagnostics = check_request_text(text)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        summary = "; ".join(f"line {d.line}: {d.rule} {d.message}" for d in errors[:3])
        raise ErrorReply(400, "invalid_request",
                         f"the request does not conform: {summary}", diagnostics=diagnostics)
    request: dict[str, Any] = loads(text)
    return request


def start_fields(request: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the stream.start the relay sends if the upstream never sent one."""
    fields: dict[str, Any] = {"model": request["model"], "created": int(time.time())}
    request_id = (request.get("metadata") or {}).get("request_id")
    if isinstance(request_id, str):
        fields["request_id"] = request_id
    return fields
