"""Errors answered before a stream starts: an HTTP status and a JSON body (decision D-HTTP-ERRORS).

Once a stream has started its status is 200 and an error can only be an `error` event; before
that, the status says what went wrong and the body says it in the client's format: LLM-Stream
clients get `{"error": {"code", "message"}}` (and the request's diagnostics for a 400), OpenAI
clients the `{"error": {"message", "type", "param", "code"}}` that their SDK reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import JSONResponse

from llm_stream import Diagnostic
from llm_stream.jsontext import loads

from .negotiation import Wire

OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    406: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}


@dataclass(eq=False)
class ErrorReply(Exception):
    """A request refused, or an upstream failure met, before the response started."""

    status: int
    code: str
    message: str
    diagnostics: Sequence[Diagnostic] = ()
    param: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"

    def response(self, wire: Wire) -> JSONResponse:
        """The reply in the client's format."""
        body: dict[str, Any]
        if wire is Wire.OPENAI_CHAT:
            kind = OPENAI_TYPES.get(self.status, "api_error")
            body = {"error": {"message": self.message, "type": kind, "param": self.param,
                              "code": self.code}}
        else:
            body = {"error": {"code": self.code, "message": self.message}}
            if self.param is not None:
                body["error"]["param"] = self.param
            if self.diagnostics:
                body["diagnostics"] = [d.as_dict() for d in self.diagnostics]
        return JSONResponse(body, status_code=self.status, headers=dict(self.headers))


def upstream_failure(status: int, body: bytes, headers: Mapping[str, str]) -> ErrorReply:
    """The reply to an upstream that answered `status` instead of a stream.

    What the client can act on keeps its status (its own request was refused, or it should slow
    down); what it cannot (the gateway's key refused, the upstream failing) becomes a 502, 503
    or 504 naming the upstream's status.
    """
    detail = _vendor_message(body) or f"the upstream answered HTTP {status}"
    retry = {"Retry-After": headers["retry-after"]} if "retry-after" in headers else {}
    if status == 429:
        return ErrorReply(429, "rate_limited", detail, headers=retry)
    if status in (503, 529):
        return ErrorReply(503, "overloaded", detail, headers=retry)
    if status in (408, 504):
        return ErrorReply(504, "upstream_timeout", detail)
    if status in (401, 403):
        return ErrorReply(502, "internal_error",
                          f"the upstream refused the gateway's credentials (HTTP {status})")
    if status in (400, 404, 413, 422):
        code = "context_length_exceeded" if b"context_length" in body else "invalid_request"
        return ErrorReply(status, code, detail)
    return ErrorReply(502, "internal_error", f"upstream HTTP {status}: {detail}")


def _vendor_message(body: bytes) -> str | None:
    """The message of a vendor's JSON error body (OpenAI, Anthropic and Gemini all nest it
    under `error.message`), if there is one."""
    try:
        document = loads(body[:65536])
    except ValueError:
        return None
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, list) and error:  # Gemini wraps some errors in a list
        error = error[0].get("error") if isinstance(error[0], dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None
