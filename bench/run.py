"""`nox -s bench`: the decoder and the validators against their peers, as ratios from one run.

The decoder body follows the decoder issue: 100,000 content.delta events with token-sized texts
(non-ASCII, JSON escapes), LF and CRLF, fed in 4 KiB chunks and one event per chunk. Peers: the
`openai` SDK's SSE decoder and httpx-sse's, each followed by json.loads, and the floor of the
work, bytes.split plus orjson.loads; the same bytes through the TypeScript decoder in Node,
against eventsource-parser and JSON.parse. Peak memory is read from a child process decoding 1 GB.
"""

from __future__ import annotations

import argparse
import codecs
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
from httpx_sse._decoders import SSELineDecoder as HttpxSSELineDecoder
from openai._streaming import SSEDecoder as OpenAISSEDecoder

from llm_stream import Decoder

sys.path.insert(0, str(Path(__file__).parent))
from bench_sse import rates
from bench_typescript import typescript_table
from bench_validators import compare_validators

EVENTS = 100_000
TOKENS = (" caf\u00e9", ' "q"', " \u00fc", " the", "\n", " \u65e5\u672c", " \\", " \U0001F600")


def body(events: int, eol: bytes = b"\n") -> list[bytes]:
    """One conforming stream, as a list of one encoded event each."""
    def event(kind: str, fields: dict[str, object], seq: int) -> bytes:
        data = json.dumps({"v": "1.0", "seq": seq, "type": kind, **fields},
                          ensure_ascii=False, separators=(",", ":"))
        return f"event: {kind}\ndata: {data}\n\n".replace("\n", eol.decode()).encode()

    out = [event("stream.start", {"model": "m", "created": 1749292800}, 0)]
    for i in range(events):
        text = TOKENS[i % len(TOKENS)]
        out.append(event("content.delta", {"index": 0, "role": "assistant",
                                           "delta": {"text": text}}, i + 1))
    out.append(event("content.stop", {"index": 0, "stop_reason": "end_turn"}, events + 1))
    out.append(event("usage", {"input_tokens": 9, "output_tokens": events}, events + 2))
    out.append(event("stream.end", {}, events + 3))
    return out


def ours(chunks: Sequence[bytes], typed: bool) -> int:
    """Typed: every event validated and built as its model; else the fast path (dicts,
    envelope and lifecycle checks), as the decoder issue defines the two."""
    decoder = Decoder(typed=typed, validate=typed)
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    count += len(decoder.close())
    if not decoder.conforming:
        raise AssertionError(decoder.diagnostics[:3])
    return count


def openai_sdk(chunks: Sequence[bytes]) -> int:
    return sum(1 for sse in OpenAISSEDecoder().iter_bytes(iter(chunks)) if json.loads(sse.data))


def httpx_sse(chunks: Sequence[bytes]) -> int:
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines, decoder, count = HttpxSSELineDecoder(), HttpxSSEDecoder(), 0
    for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            sse = decoder.decode(line.rstrip("\n"))
            if sse is not None and json.loads(sse.data):
                count += 1
    return count


def floor(whole: bytes, blank: bytes) -> int:
    count = 0
    for part in whole.split(blank):
        if part:
            orjson.loads(part[part.index(b"data: ") + 6:])
            count += 1
    return count


def validators_table() -> None:
    """The shipped content.delta validator against jsonschema, jsonschema-rs, fastjsonschema and
    the pydantic model, on the same instances: the deltas of the benchmark body."""
    from pydantic import ValidationError

    from llm_stream import validators
    from llm_stream.models import ContentDeltaEvent
    from llm_stream_codegen.check import schema_store
    from llm_stream_codegen.load import load

    spec = load(Path(__file__).resolve().parent.parent)
    schemas = {key: dict(value) for key, value in schema_store(spec).items()}
    instances = [json.loads(e.split(b"data: ")[1]) for e in body(2000)[1:-3]]

    def pydantic_model(instance: object) -> bool:
        try:
            ContentDeltaEvent.model_validate(instance)
        except ValidationError:
            return False
        return True

    compare_validators(
        schemas, spec.event_type("content.delta").schema_id, instances,  # type: ignore[union-attr]
        extra={"shipped is_valid": validators.is_valid_content_delta,
               "pydantic model": pydantic_model},
        title="content.delta events of the decoder benchmark",
    )


def decoder_table() -> None:
    rows: dict[str, dict[str, float]] = {}
    for eol in (b"\n", b"\r\n"):
        events = body(EVENTS, eol)
        whole = b"".join(events)
        total = len(events)
        feeds = {"4 KiB": [whole[i:i + 4096] for i in range(0, len(whole), 4096)],
                 "1 event": events}
        for feed, chunks in feeds.items():
            runs: dict[str, Callable[[], int]] = {
                "llm_stream (validating, typed)": lambda c=chunks: ours(c, True),
                "llm_stream (fast path, dicts)": lambda c=chunks: ours(c, False),
                "openai SDK + json.loads": lambda c=chunks: openai_sdk(c),
                "httpx-sse + json.loads": lambda c=chunks: httpx_sse(c),
                "floor: split + orjson": lambda w=whole, e=eol: floor(w, e + e),
            }
            label = "LF" if eol == b"\n" else "CRLF"
            rows[f"{label}, {feed}"] = rates(runs, total, rounds=5)
    names = list(next(iter(rows.values())))
    print(f"\nDecoder: events per second, {EVENTS:,} content.delta events, best of 5")
    print(f"{'':34}" + "".join(f"{column:>16}" for column in rows))
    for name in names:
        print(f"{name:34}" + "".join(f"{row[name]:16,.0f}" for row in rows.values()))
    for ours_name, peer, target in (
        ("llm_stream (validating, typed)", "openai SDK + json.loads", 2.0),
        ("llm_stream (validating, typed)", "httpx-sse + json.loads", 1.0),
        ("llm_stream (fast path, dicts)", "floor: split + orjson", 0.5),
    ):
        ratios = [row[ours_name] / row[peer] for row in rows.values()]
        label = f"{ours_name.split(' (')[1][:-1]} / {peer.split(' ')[0]} (target {target})"
        print(f"{label:34}" + "".join(f"{r:16.2f}" for r in ratios))


def memory_report(size: int) -> None:
    """Peak memory of decoding `size` bytes, in a child process that imports only llm_stream."""
    script = Path(__file__).with_name("memory.py")
    result = subprocess.run([sys.executable, str(script), str(size)],
                            capture_output=True, text=True, check=True)
    print(result.stdout.rstrip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-bytes", type=int, default=1_000_000_000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["decoder", "validators",
                                                                   "memory", "typescript"])
    args = parser.parse_args()
    if "validators" not in args.skip:
        validators_table()
    if "decoder" not in args.skip:
        decoder_table()
    if "typescript" not in args.skip:
        typescript_table(body, EVENTS)
    if "memory" not in args.skip:
        memory_report(args.memory_bytes)


if __name__ == "__main__":
    main()
