"""The scenarios: each one request, and what a conforming endpoint must answer to it.

Every streaming scenario is judged as a whole response (200, `text/event-stream`, and a body
the decoder finds conforming, with the request's tools declared and its metadata to echo) and
then by what it asks of the model. The requests are small so that a real model answers them
cheaply, and each names what it asks for in words, so that the mock model of `llm-stream
serve` answers them too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_stream import Severity
from llm_stream.registry import REQUEST_MEDIA_TYPE, RESPONSE_PROFILE_MEDIA_TYPE

from .exchange import Exchange
from .findings import Finding

PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
"""A one-pixel PNG, base64-encoded."""

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name, e.g. Vienna"}},
        "required": ["city"],
    },
}

Judge = Callable[[Exchange], list[Finding]]


@dataclass(frozen=True)
class Scenario:
    """A request sent as `content_type` with `accept`, and how its answer is judged."""

    name: str
    summary: str
    request: dict[str, Any]
    judge: Judge
    content_type: str = REQUEST_MEDIA_TYPE
    accept: str = "text/event-stream"
    streams: bool = True
    """Whether a conforming answer is an LLM-Stream stream (else an HTTP refusal)."""
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> bytes:
        return json.dumps(self.request, ensure_ascii=False).encode()

    def declared_tools(self) -> list[str]:
        return [t["name"] for t in self.request.get("tools", ())]

    def metadata(self) -> dict[str, Any]:
        return dict(self.request.get("metadata", {}))


def _request(name: str, messages: list[dict[str, Any]], **members: Any) -> dict[str, Any]:
    return {
        "version": "1.0", "stream": True, "model": "",  # the command sets the model
        "messages": messages,
        **members,
        "metadata": {"request_id": f"conformance-{name}"},
    }


def judge_stream(exchange: Exchange) -> list[Finding]:
    """What every streaming answer must be: a complete 200 `text/event-stream` response whose
    body conforms, the decoder's findings with their rules and lines."""
    findings: list[Finding] = []
    if exchange.failure:
        findings.append(Finding("expect:response", exchange.failure))
    if exchange.status is None:
        return findings
    if exchange.status != 200:
        detail = exchange.body[:200].decode("utf-8", "replace")
        findings.append(Finding("expect:200", f"HTTP {exchange.status}: {detail}"))
        return findings
    if not exchange.is_event_stream:
        findings.append(Finding(
            "LS-HTTP-2", f"Content-Type is {exchange.content_type!r}, not text/event-stream"))
    findings.extend(Finding.of(d) for d in exchange.diagnostics)
    if not exchange.failure and exchange.of_type("error"):
        error = exchange.of_type("error")[0]
        findings.append(Finding(
            "expect:no-error", f"the stream carries an error: {error.get('code')}: "
            f"{error.get('message')}"))
    return findings


def text_answer(exchange: Exchange) -> list[Finding]:
    if not exchange.text.strip():
        return [Finding("expect:text", "no text in any content.delta")]
    return []


def tool_call(exchange: Exchange) -> list[Finding]:
    calls = exchange.of_type("tool.call")
    if not calls:
        return [Finding("expect:tool-call",
                        "no tool.call, though the request declared get_weather and asked for it")]
    if "tool_use" not in exchange.stop_reasons:
        return [Finding("expect:tool-call", "no content.stop with stop_reason tool_use")]
    return []


def max_tokens(exchange: Exchange) -> list[Finding]:
    findings = []
    if "max_tokens" not in exchange.stop_reasons:
        findings.append(Finding(
            "expect:max-tokens",
            f"parameters.max_tokens is 5 but the stop reasons are {exchange.stop_reasons}"))
    for usage in exchange.of_type("usage")[-1:]:
        if isinstance(usage.get("output_tokens"), int) and usage["output_tokens"] > 5:
            findings.append(Finding(
                "expect:max-tokens",
                f"usage reports {usage['output_tokens']} output tokens, over max_tokens 5"))
    return findings


def stop_sequence(exchange: Exchange) -> list[Finding]:
    findings = text_answer(exchange)
    if "gamma" in exchange.text:
        findings.append(Finding("expect:stop-sequence",
                                "the text goes on past the stop sequence \"gamma\""))
    if not set(exchange.stop_reasons) <= {"stop_sequence", "end_turn"}:
        findings.append(Finding(
            "expect:stop-sequence",
            f"stop reasons {exchange.stop_reasons}: expected stop_sequence (or end_turn, for "
            "upstreams that do not tell them apart)"))
    return findings


def refused_with(status: int, why: str) -> Judge:
    """An HTTP refusal before any stream, with a JSON error body (decision D-HTTP-ERRORS)."""

    def judge(exchange: Exchange) -> list[Finding]:
        if exchange.status is None:
            return [Finding("expect:response", exchange.failure or "no response")]
        if exchange.status != status:
            return [Finding("D-HTTP-ERRORS",
                            f"expected HTTP {status} ({why}), got {exchange.status}")]
        if not exchange.content_type.startswith("application/json"):
            return [Finding("D-HTTP-ERRORS", f"the {status} answer is not a JSON error body",
                            Severity.WARNING)]
        return []

    return judge


def _streaming(*judges: Judge) -> Judge:
    def judge(exchange: Exchange) -> list[Finding]:
        findings = judge_stream(exchange)
        if exchange.status == 200 and not exchange.failure:
            for more in judges:
                findings.extend(more(exchange))
        return findings

    return judge


USER_HELLO = {"role": "user", "content": "Say hello in five words."}

SCENARIOS: Sequence[Scenario] = (
    Scenario("plain-text", "a user message answered with text",
             _request("plain-text", [USER_HELLO]), _streaming(text_answer)),
    Scenario("system-prompt", "a system prompt before the user message",
             _request("system-prompt", [
                 {"role": "system", "content": "You answer in one short sentence."},
                 USER_HELLO]),
             _streaming(text_answer)),
    Scenario("multi-turn", "a conversation with an earlier assistant turn",
             _request("multi-turn", [
                 {"role": "system", "content": "You are a concise assistant."},
                 {"role": "user", "content": "Name a colour."},
                 {"role": "assistant", "content": "Blue."},
                 {"role": "user", "content": "Name another one."}]),
             _streaming(text_answer)),
    Scenario("tool-call", "a declared tool, asked for: a tool.call naming it, closed by "
             "tool_use",
             _request("tool-call", [
                 {"role": "user",
                  "content": "What is the weather in Vienna? Call get_weather to find out."}],
                 tools=[WEATHER_TOOL]),
             _streaming(tool_call)),
    Scenario("tool-result", "the turn after a tool call, carrying its result",
             _request("tool-result", [
                 {"role": "user", "content": "What is the weather in Vienna?"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": "call_1", "name": "get_weather",
                      "arguments": "{\"city\":\"Vienna\"}"}]},
                 {"role": "tool", "tool_call_id": "call_1", "content": "Vienna: 24C, sunny"}],
                 tools=[WEATHER_TOOL]),
             _streaming(text_answer)),
    Scenario("image-input", "a user message with a text part and an image part",
             _request("image-input", [{"role": "user", "content": [
                 {"type": "text", "text": "What colour is this image?"},
                 {"type": "image", "media_type": "image/png", "data": PIXEL_PNG}]}]),
             _streaming(text_answer)),
    Scenario("max-tokens", "parameters.max_tokens 5: the answer stops with max_tokens",
             _request("max-tokens", [{"role": "user", "content":
                                      "Count from one to fifty in words, separated by spaces."}],
                      parameters={"max_tokens": 5}),
             _streaming(max_tokens)),
    Scenario("stop-sequences", "parameters.stop_sequences: the text ends before the sequence",
             _request("stop-sequences", [{"role": "user", "content":
                                          "Repeat exactly: alpha beta gamma delta epsilon"}],
                      parameters={"stop_sequences": ["gamma"]}),
             _streaming(stop_sequence)),
    Scenario("malformed-request", "a request that breaks LS-REQ-2 and LS-MSG-1: 400 before "
             "any stream",
             {"version": "1.0", "stream": "yes", "model": "",
              "messages": [{"role": "wizard", "content": "hello"}]},
             refused_with(400, "a request that does not conform"), streams=False),
    Scenario("wrong-content-type", "a conforming body sent as text/plain: 415 (section 7.2)",
             _request("wrong-content-type", [USER_HELLO]),
             refused_with(415, "Unsupported Media Type for text/plain"),
             content_type="text/plain", streams=False),
    Scenario("accept-profile", "Accept: text/event-stream; profile=\"llm-stream-1.0\" selects "
             "LLM-Stream (section 7.3)",
             _request("accept-profile", [USER_HELLO]), _streaming(text_answer),
             accept=RESPONSE_PROFILE_MEDIA_TYPE),
)
"""Every scenario, in the order they run."""

BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
