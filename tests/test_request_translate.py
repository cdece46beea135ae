"""Request translation: our requests into each vendor's request body, an OpenAI Chat body into
ours, and every refusal naming the field a vendor cannot express.

The expected vendor bodies under tests/requests/<format>/ are written by hand from each
vendor's documented request format; a request of ours that a vendor cannot take is listed in
REFUSED with the field the refusal names.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from llm_stream import check_request_text
from llm_stream.translate import (
    FORMATS,
    TranslationError,
    request_from,
    request_path,
    request_to,
)

REQUESTS = Path(__file__).resolve().parent / "requests"
OURS = sorted(p.stem for p in (REQUESTS / "ours").glob("*.json"))
REFUSED = {
    ("stop-sequences", "openai-responses"): "parameters.stop_sequences",
    ("audio", "openai-responses"): "messages[0].content[1].type",
    ("audio", "anthropic"): "messages[0].content[1].type",
    ("named-documents", "gemini"): "messages[0].content[1].filename",
    ("participant-names", "openai-responses"): "messages[0].name",
    ("participant-names", "anthropic"): "messages[0].name",
    ("participant-names", "gemini"): "messages[0].name",
    ("sampling", "anthropic"): "parameters.temperature",
}
TRANSLATED = [
    (name, fmt) for name in OURS for fmt in FORMATS if (name, fmt) not in REFUSED
]


def ours(name: str) -> dict[str, Any]:
    return json.loads((REQUESTS / "ours" / f"{name}.json").read_text())


def expected(fmt: str, name: str) -> Any:
    return json.loads((REQUESTS / fmt / f"{name}.json").read_text())


def refusal(fmt: str, body: dict[str, Any]) -> TranslationError:
    with pytest.raises(TranslationError) as caught:
        request_to(fmt, body)
    return caught.value


def test_every_request_has_an_expected_body_or_a_refusal_for_every_format() -> None:
    for name in OURS:
        for fmt in FORMATS:
            has_body = (REQUESTS / fmt / f"{name}.json").exists()
            assert has_body != ((name, fmt) in REFUSED), (name, fmt)
    assert {p.stem for fmt in FORMATS for p in (REQUESTS / fmt).glob("*.json")} <= set(OURS)


@pytest.mark.parametrize(("name", "fmt"), TRANSLATED)
def test_request_to_gives_the_documented_vendor_body(name: str, fmt: str) -> None:
    assert request_to(fmt, ours(name)) == expected(fmt, name)


@pytest.mark.parametrize(("name", "fmt"), sorted(REFUSED))
def test_request_to_refuses_what_the_vendor_cannot_express(name: str, fmt: str) -> None:
    assert refusal(fmt, ours(name)).field == REFUSED[(name, fmt)]


def test_the_request_is_not_changed_by_translation() -> None:
    for name in OURS:
        body = ours(name)
        before = copy.deepcopy(body)
        for fmt in FORMATS:
            try:
                translated = request_to(fmt, body)
            except TranslationError:
                continue
            translated.clear()
        assert body == before, name


# Refusals beyond the request set, each naming the field.

def _message_request(*messages: dict[str, Any], **members: Any) -> dict[str, Any]:
    return {"version": "1.0", "stream": True, "model": "m", "messages": list(messages),
            "parameters": {"max_tokens": 10}, **members}


USER = {"role": "user", "content": "Hi"}
PNG = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "name": "f", "arguments": "[1, 2]"}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "done"}


@pytest.mark.parametrize(("fmt", "body", "field", "words"), [
    ("anthropic", {**_message_request(USER), "parameters": {}},
     "parameters.max_tokens", "requires max_tokens"),
    ("anthropic", _message_request(USER, {"role": "system", "content": "Late"}),
     "messages[1].role", "system messages only before"),
    ("gemini", _message_request(USER, {"role": "system", "content": "Late"}),
     "messages[1].role", "system messages only before"),
    ("openai-chat", _message_request(
        USER, {**CALL, "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]},
        {**RESULT, "name": "f"}), "messages[2].name", "tool message"),
    ("openai-chat", {**_message_request(USER), "parameters": {
        "stop_sequences": ["a", "b", "c", "d", "e"]}}, "parameters.stop_sequences", "at most 4"),
    ("openai-chat", _message_request({"role": "user", "content": [
        {"type": "audio", "media_type": "audio/mp4", "data": "AAAA"}]}),
     "messages[0].content[0].media_type", "wav or mp3"),
    ("anthropic", _message_request({"role": "user", "content": [
        {**PNG, "media_type": "image/bmp"}]}), "messages[0].content[0].media_type", "image/png"),
    ("anthropic", _message_request({"role": "user", "content": [
        {"type": "document", "media_type": "application/msword", "data": "AAAA"}]}),
     "messages[0].content[0].media_type", "application/pdf"),
    ("anthropic", _message_request({"role": "user", "content": [
        {"type": "document", "media_type": "text/plain", "data": "/w=="}]}),
     "messages[0].content[0].data", "UTF-8"),
    ("openai-chat", _message_request(USER, {"role": "assistant", "content": [PNG]}),
     "messages[1].content[0].type", "no image part in a assistant message"),
    ("openai-responses", _message_request(USER, {"role": "assistant", "content": [PNG]}),
     "messages[1].content[0].type", "assistant message"),
    ("anthropic", _message_request(USER, {"role": "assistant", "content": [PNG]}),
     "messages[1].content[0].type", "assistant message"),
    ("openai-chat", _message_request({"role": "system", "content": [PNG]}, USER),
     "messages[0].content[0].type", "system message"),
    ("anthropic", _message_request(USER, CALL, RESULT),
     "messages[1].tool_calls[0].arguments", "JSON object"),
    ("gemini", _message_request(USER, CALL, RESULT),
     "messages[1].tool_calls[0].arguments", "JSON object"),
    ("gemini", _message_request(
        USER, {**CALL, "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]},
        {**RESULT, "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
     "messages[2].content", "one text"),
    ("gemini", _message_request(
        USER, {**CALL, "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]},
        {**RESULT, "content": [PNG]}), "messages[2].content[0].type", "tool message"),
    ("openai-chat", _message_request(USER, {"role": "user", "content": [
        {"type": "text", "text": "x", "filename": "x.txt"}]}),
     "messages[1].content[0].filename", "only a document"),
    ("openai-chat", _message_request(USER, metadata={"request_id": "r", "count": 3}),
     "metadata.count", "string"),
    ("openai-responses", _message_request(USER, metadata={f"k{i}": "v" for i in range(17)}),
     "metadata", "at most 16"),
    ("openai-chat", _message_request(USER, extensions={"vendor:openai": {"model": "other"}}),
     'extensions["vendor:openai"].model', "conflicts"),
    ("gemini", {**_message_request(USER), "extensions": {
        "vendor:google": {"generationConfig": {"maxOutputTokens": 99}}}},
     'extensions["vendor:google"].generationConfig.maxOutputTokens', "conflicts"),
    ("anthropic", _message_request(USER, extensions={"vendor:anthropic": [1]}),
     'extensions["vendor:anthropic"]', "object"),
])
def test_each_refusal_names_the_field(
    fmt: str, body: dict[str, Any], field: str, words: str
) -> None:
    error = refusal(fmt, body)
    assert (error.field, words in error.message) == (field, True), error.message


def test_a_non_conforming_request_is_refused_with_the_rule_it_breaks() -> None:
    body = _message_request(USER, {"role": "tool", "tool_call_id": "nowhere", "content": "x"})
    error = refusal("openai-chat", body)
    assert (error.field, error.message.split()[0]) == ("messages[1].tool_call_id", "LS-MSG-5")
    assert refusal("gemini", {**body, "version": "2.0"}).message.startswith("LS-REQ-1")


def test_the_refused_field_is_also_a_json_pointer() -> None:
    error = refusal("openai-chat", _message_request(
        USER, extensions={"vendor:openai": {"messages": []}}))
    assert (error.field, error.pointer) == (
        'extensions["vendor:openai"].messages', "/extensions/vendor:openai/messages")


def test_an_unknown_format_is_a_value_error_that_lists_the_formats() -> None:
    with pytest.raises(ValueError, match="openai-chat, openai-responses, anthropic, gemini"):
        request_to("cohere", ours("audio"))
    with pytest.raises(ValueError, match="unknown format 'anthropic'"):
        request_from("anthropic", {})


def test_an_empty_text_beside_tool_calls_is_left_out_where_vendors_refuse_empty_text() -> None:
    call = {"role": "assistant", "content": "",
            "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]}
    body = _message_request(USER, call, RESULT)
    assert request_to("anthropic", body)["messages"][1]["content"] == [
        {"type": "tool_use", "id": "c1", "name": "f", "input": {}}]
    assert request_to("gemini", body)["contents"][1]["parts"] == [
        {"functionCall": {"id": "c1", "name": "f", "args": {}}}]
    assert request_to("openai-chat", body)["messages"][1]["content"] == ""


def test_gemini_names_the_model_in_the_path() -> None:
    assert "model" not in request_to("gemini", ours("audio"))
    assert request_path("gemini", "gemini-2.5-flash") == (
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    assert request_path("anthropic", "claude") == "/v1/messages"


# From OpenAI Chat into ours, and back.

IMAGE_URL = "data:image/png;base64,iVBORw0KGgo="
CHAT_BODY: dict[str, Any] = {
    "model": "gpt-4.1",
    "messages": [
        {"role": "system", "content": "You are terse.", "name": "policy"},
        {"role": "user", "name": "alice", "content": [
            {"type": "text", "text": "Look at these."},
            {"type": "image_url", "image_url": {"url": IMAGE_URL}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "mp3"}},
            {"type": "file", "file": {"filename": "r.pdf",
                                      "file_data": "data:application/pdf;base64,JVBERg=="}},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "found"},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ],
    "tools": [{"type": "function", "function": {
        "name": "lookup", "description": "Look a thing up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
    "max_completion_tokens": 200,
    "temperature": 0.5,
    "top_p": 1,
    "stop": ["END"],
    "metadata": {"request_id": "r-9", "user_id": "u-1"},
    "stream": True,
    "stream_options": {"include_usage": True},
    "n": 2,
    "seed": 3,
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "response_format": {"type": "text"},
    "user": "u-1",
}


def test_openai_chat_into_ours_is_a_conforming_request() -> None:
    request = request_from("openai-chat", CHAT_BODY)
    assert check_request_text(json.dumps(request)) == []
    assert request["messages"][1]["content"][1:] == [
        {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="},
        {"type": "audio", "media_type": "audio/mpeg", "data": "UklGRg=="},
        {"type": "document", "media_type": "application/pdf", "data": "JVBERg==",
         "filename": "r.pdf"},
    ]
    assert request["parameters"] == {"max_tokens": 200, "temperature": 0.5, "top_p": 1,
                                     "stop_sequences": ["END"]}
    assert request["extensions"] == {"vendor:openai": {
        "n": 2, "seed": 3, "tool_choice": "auto", "parallel_tool_calls": False,
        "response_format": {"type": "text"}, "user": "u-1"}}


def test_openai_chat_through_ours_and_back_keeps_everything_expressible() -> None:
    assert request_to("openai-chat", request_from("openai-chat", CHAT_BODY)) == CHAT_BODY


@pytest.mark.parametrize(("member", "value", "ours_value"), [
    ("stop", "END", {"stop_sequences": ["END"]}),
    ("max_tokens", 50, {"max_tokens": 50}),
])
def test_openai_chat_older_forms_become_ours(member: str, value: Any, ours_value: Any) -> None:
    body = {"model": "m", "messages": [{"role": "developer", "content": "Be brief."}],
            member: value}
    request = request_from("openai-chat", body)
    assert (request["messages"][0]["role"], request["parameters"]) == ("system", ours_value)


def test_openai_chat_defaults_become_explicit_in_ours() -> None:
    body = {"model": "m", "messages": [USER], "tools": [
        {"type": "function", "function": {"name": "now"}}], "stream": False}
    request = request_from("openai-chat", body)
    assert request["tools"] == [{"name": "now", "description": "",
                                 "parameters": {"type": "object", "properties": {}}}]
    assert request["stream"] is True


def _chat(*messages: Any, **members: Any) -> dict[str, Any]:
    return {"model": "m", "messages": list(messages), **members}


def _user(*parts: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(parts)}


@pytest.mark.parametrize(("body", "field"), [
    (_chat(_user({"type": "image_url", "image_url": {"url": "https://x.test/a.png"}})),
     "messages[0].content[0].image_url.url"),
    (_chat(_user({"type": "image_url", "image_url": {"url": IMAGE_URL, "detail": "high"}})),
     "messages[0].content[0].image_url.detail"),
    (_chat(_user({"type": "file", "file": {"file_id": "file-1"}})), "messages[0].content[0].file"),
    (_chat(_user({"type": "input_audio", "input_audio": {"data": "AA==", "format": "flac"}})),
     "messages[0].content[0].input_audio.format"),
    (_chat(USER, {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}),
     "messages[1].content[0].type"),
    (_chat(USER, {"role": "assistant", "content": "Hi", "audio": {"id": "a1"}}),
     "messages[1].audio"),
    (_chat({"role": "function", "name": "f", "content": "x"}), "messages[0].role"),
    (_chat({"role": "user", "content": None}), "messages[0].content"),
    (_chat(USER, tools=[{"type": "function", "function": {"name": "f", "strict": True}}]),
     "tools[0].function.strict"),
    (_chat(USER, tools=[{"type": "custom", "custom": {"name": "f"}}]), "tools[0].type"),
    (_chat(USER, max_tokens=5, max_completion_tokens=6), "max_completion_tokens"),
    (_chat(USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "custom", "custom": {"name": "f", "input": "x"}}]}),
     "messages[1].tool_calls[0].type"),
    ({"messages": [USER]}, "model"),
    ({"model": "m", "messages": {}}, "messages"),
])
def test_each_refusal_from_openai_chat_names_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(TranslationError) as caught:
        request_from("openai-chat", body)
    assert caught.value.field == field, caught.value.message


def test_a_malformed_openai_chat_body_is_a_translation_error_not_a_crash() -> None:
    with pytest.raises(TranslationError, match="not a openai-chat request body"):
        request_from("openai-chat", _chat(USER, {"role": "assistant", "content": None,
                                                  "tool_calls": [{"id": "c"}]}))

