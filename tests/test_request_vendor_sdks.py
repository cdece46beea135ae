"""The vendor bodies of tests/requests/ checked against the vendors' own SDK request types.

The `openai` and `anthropic` packages describe request bodies as TypedDicts, which check
nothing at run time, so pydantic validates each body against them here: every member's type,
every Required member and every literal, with the iterables drained so that their items are
validated too. pydantic ignores members a TypedDict does not declare, so the validated value
must also equal the body, which fails on any member the SDK does not know. `google-genai`'s
types are pydantic models that forbid unknown members; each member of a Gemini body is
validated by its model in JSON mode (so base64 data is decoded) and dumped back unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from llm_stream.translate import request_to

REQUESTS = Path(__file__).resolve().parent / "requests"


def bodies(fmt: str) -> list[Any]:
    return [pytest.param(json.loads(path.read_text()), id=path.stem)
            for path in sorted((REQUESTS / fmt).glob("*.json"))]


def drained(value: Any) -> Any:
    """The validated value with pydantic's lazy iterators run, which validates their items."""
    if isinstance(value, dict):
        return {key: drained(member) for key, member in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    return [drained(item) for item in value]


def typed_dict_check(adapter: TypeAdapter[Any], body: dict[str, Any]) -> None:
    assert drained(adapter.validate_python(body)) == body


@pytest.fixture(scope="module")
def openai_chat() -> TypeAdapter[Any]:
    params = pytest.importorskip("openai.types.chat.completion_create_params")
    return TypeAdapter(params.CompletionCreateParamsStreaming)


@pytest.fixture(scope="module")
def openai_responses() -> TypeAdapter[Any]:
    params = pytest.importorskip("openai.types.responses.response_create_params")
    return TypeAdapter(params.ResponseCreateParamsStreaming)


@pytest.fixture(scope="module")
def anthropic_messages() -> TypeAdapter[Any]:
    params = pytest.importorskip("anthropic.types.message_create_params")
    return TypeAdapter(params.MessageCreateParamsStreaming)


@pytest.mark.parametrize("body", bodies("openai-chat"))
def test_openai_chat_bodies_are_openai_sdk_requests(
    openai_chat: TypeAdapter[Any], body: dict[str, Any]
) -> None:
    typed_dict_check(openai_chat, body)


@pytest.mark.parametrize("body", bodies("openai-responses"))
def test_openai_responses_bodies_are_openai_sdk_requests(
    openai_responses: TypeAdapter[Any], body: dict[str, Any]
) -> None:
    typed_dict_check(openai_responses, body)


@pytest.mark.parametrize("body", bodies("anthropic"))
def test_anthropic_bodies_are_anthropic_sdk_requests(
    anthropic_messages: TypeAdapter[Any], body: dict[str, Any]
) -> None:
    typed_dict_check(anthropic_messages, body)


def test_the_check_fails_on_a_member_the_sdk_does_not_know(
    openai_chat: TypeAdapter[Any],
) -> None:
    body = json.loads((REQUESTS / "openai-chat" / "audio.json").read_text())
    body["messages"][0]["content"][1]["input_audio"]["media_type"] = "audio/wav"
    with pytest.raises(AssertionError):
        typed_dict_check(openai_chat, body)


def gemini_models() -> dict[str, Any]:
    types = pytest.importorskip("google.genai.types")
    return {"systemInstruction": types.Content, "contents": list[types.Content],
            "tools": list[types.Tool], "generationConfig": types.GenerationConfig}


@pytest.mark.parametrize("body", bodies("gemini"))
def test_gemini_bodies_are_google_genai_requests(body: dict[str, Any]) -> None:
    models = gemini_models()
    assert set(body) <= set(models)
    for member, value in body.items():
        adapter = TypeAdapter(models[member])
        model = adapter.validate_json(json.dumps(value))
        dumped = adapter.dump_python(model, mode="json", by_alias=True, exclude_none=True)
        assert dumped == value, member


def test_a_translated_gemini_body_with_a_misnamed_member_fails_the_check() -> None:
    models = gemini_models()
    body = request_to("gemini", json.loads((REQUESTS / "ours" / "audio.json").read_text()))
    body["contents"][0]["parts"][1]["inline_data_typo"] = {}
    with pytest.raises(ValueError, match="inline_data_typo"):
        TypeAdapter(models["contents"]).validate_json(json.dumps(body["contents"]))
