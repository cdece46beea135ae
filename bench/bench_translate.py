"""Translation throughput: a vendor stream in, LLM-Stream bytes out, for each vendor format.

Each body is one vendor event per chunk (servers flush every event), token-sized texts with
non-ASCII and JSON escapes, then the vendor's finish, usage and terminal events. The floor of
the work is parsing each vendor event's JSON with orjson and writing one LLM-Stream event with
orjson: what any translator must at least do. LiteLLM's own chunk handling of OpenAI chunks
(its CustomStreamWrapper over parsed chunks) is a peer row where it is installed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import orjson
import polite
from bench_sse import rates

from llm_stream.translate import FORMATS, stream_translator

TOKENS = (" caf\u00e9", ' "q"', " \u00fc", " the", "\n", " \u65e5\u672c", " \\", " \U0001F600")
TARGET = 0.4


def _sse(data: Any, event: str | None = None) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (f"event: {event}\n" if event else "").encode() + f"data: {text}\n\n".encode()


def openai_chat(n: int) -> list[bytes]:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**head, "choices": [{"index": 0, "delta": delta,
                                          "finish_reason": finish}]})

    return [chunk({"role": "assistant", "content": ""}),
            *(chunk({"content": TOKENS[i % len(TOKENS)]}) for i in range(n)),
            chunk({}, "stop"),
            _sse({**head, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": n,
                                                    "total_tokens": n + 9}}),
            b"data: [DONE]\n\n"]


def openai_responses(n: int) -> list[bytes]:
    def event(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, **fields}, kind)

    return [event("response.created", response={"model": "m", "created_at": 1}),
            *(event("response.output_text.delta", item_id="msg_1", output_index=0,
                    content_index=0, delta=TOKENS[i % len(TOKENS)]) for i in range(n)),
            event("response.completed", response={"status": "completed", "usage": {
                "input_tokens": 9, "output_tokens": n, "total_tokens": n + 9}})]


def anthropic(n: int) -> list[bytes]:
    def event(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, **fields}, kind)

    return [event("message_start", message={"model": "m", "usage": {"input_tokens": 9,
                                                                    "output_tokens": 1}}),
            event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
            *(event("content_block_delta", index=0, delta={
                "type": "text_delta", "text": TOKENS[i % len(TOKENS)]}) for i in range(n)),
            event("content_block_stop", index=0),
            event("message_delta", delta={"stop_reason": "end_turn"},
                  usage={"output_tokens": n}),
            event("message_stop")]


def gemini(n: int) -> list[bytes]:
    def chunk(text: str, last: bool = False) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"},
                                     "index": 0}
        data: dict[str, Any] = {"candidates": [candidate], "modelVersion": "m",
                                "responseId": "r"}
        if last:
            candidate["finishReason"] = "STOP"
            data["usageMetadata"] = {"promptTokenCount": 9, "candidatesTokenCount": n}
        return _sse(data)

    return [*(chunk(TOKENS[i % len(TOKENS)]) for i in range(n - 1)), chunk(".", last=True)]


BODIES: dict[str, Callable[[int], list[bytes]]] = {
    "openai-chat": openai_chat, "openai-responses": openai_responses,
    "anthropic": anthropic, "gemini": gemini,
}


def translated(fmt: str, chunks: list[bytes]) -> int:
    """Vendor chunks in, LLM-Stream bytes out (`feed_encoded`, the bytes of `encode_events`
    over `feed`, as a gateway sends them on); returns the vendor events read."""
    translator = stream_translator(fmt, created=1)
    size = 0
    for chunk in chunks:
        size += len(translator.feed_encoded(chunk))
    size += len(translator.close_encoded())
    if translator.diagnostics or not size:
        raise AssertionError(translator.diagnostics[:3])
    return len(chunks)


def floor(chunks: list[bytes]) -> int:
    """Parse each vendor event's JSON with orjson and write one event with orjson."""
    written = 0
    for seq, chunk in enumerate(chunks):
        data = chunk[chunk.index(b"data: ") + 6:]
        if data[:1] == b"{":
            orjson.loads(data)
        out = orjson.dumps({"v": "1.0", "seq": seq, "type": "content.delta", "index": 0,
                            "role": "assistant", "delta": {"text": "x"}})
        written += len(b"event: content.delta\ndata: " + out + b"\n\n")
    return len(chunks) if written else 0


def litellm_peer() -> Callable[[list[bytes]], int] | None:
    """LiteLLM's streaming chunk handling over the same OpenAI chunks, parsed with orjson: its
    CustomStreamWrapper turning each into a ModelResponseStream. None when it is missing."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network look-up
    try:
        import litellm
        from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
    except ImportError:
        return None
    litellm.suppress_debug_info = True

    def run(chunks: list[bytes]) -> int:
        def parsed() -> Iterator[Any]:
            for chunk in chunks:
                data = chunk[6:].strip()
                if data != b"[DONE]":
                    yield litellm.ModelResponseStream(**orjson.loads(data))

        logging = litellm.Logging(model="gpt-4o", messages=[], stream=True,
                                  call_type="completion", start_time=datetime.now(),
                                  litellm_call_id="bench", function_id="bench")
        wrapper = CustomStreamWrapper(completion_stream=parsed(), model="gpt-4o",
                                      custom_llm_provider="openai", logging_obj=logging)
        for _ in wrapper:
            pass
        return len(chunks)

    return run


PEER_ROUNDS = 2
"""LiteLLM runs at a hundredth of our rate: a best of two is as telling, and far shorter."""


def translate_table(tokens: int = 20_000, rounds: int = 7) -> None:
    """Ours and the floor in the same run, taking turns; the ratio is what counts."""
    peer = litellm_peer()
    print(f"\nTranslation: vendor events per second of CPU time, {tokens:,} text deltas, one "
          f"vendor event per chunk, best of {rounds} (LiteLLM: of {PEER_ROUNDS})")
    print(f"{'format':18}{'llm_stream':>14}{'floor':>14}{'/floor':>9}  (target {TARGET})"
          + (f"{'LiteLLM':>14}" if peer else ""))
    for fmt in FORMATS:
        chunks = BODIES[fmt](tokens)
        result = rates({"ours": lambda c=chunks, f=fmt: translated(f, c),
                            "floor": lambda c=chunks: floor(c)}, len(chunks), rounds)
        line = (f"{fmt:18}{result['ours']:14,.0f}{result['floor']:14,.0f}"
                f"{result['ours'] / result['floor']:9.2f}")
        if peer is not None and fmt == "openai-chat":
            litellm = rates({"litellm": lambda c=chunks: peer(c)}, len(chunks), PEER_ROUNDS)
            line += f"{'':16}{litellm['litellm']:14,.0f}"
        print(line)
    if peer is None:
        print("LiteLLM: not installed here (pip install litellm adds it as a peer row)")


if __name__ == "__main__":
    sys.exit(polite.run(translate_table))
