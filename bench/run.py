"""`nox -s bench`: the decoder and the validators against their peers, as ratios from one run.

The decoder body follows the decoder issue: 100,000 content.delta events with token-sized texts
(non-ASCII, JSON escapes), LF and CRLF, fed in 4 KiB chunks and one event per chunk. Peers: the
`openai` SDK's SSE decoder and httpx-sse's, each followed by json.loads, and the floor of the
work, bytes.split plus orjson.loads. Peak memory is read from a child process decoding 1 GB.
"""

from __future__ import annotations

import argparse
import codecs
import json
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import orjson
from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
from httpx_sse._decoders import SSELineDecoder as HttpxSSELineDecoder
from openai._streaming import SSEDecoder as OpenAISSEDecoder

from llm_stream import Decoder

sys.path.insert(0, str(Path(__file__).parent))
from bench_sse import rates
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
    decoder = Decoder(typed=typed)
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
            rows[f"{label}, {feed}"] = rates(runs, total)
    names = list(next(iter(rows.values())))
    print(f"\nDecoder: events per second, {EVENTS:,} content.delta events, best of 3")
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


def stream_gigabyte(size: int) -> Iterator[bytes]:
    """A conforming body of about `size` bytes, produced lazily in 64 KiB chunks."""
    start, *deltas, stop, usage, end = body(400)
    yield start
    template = b"".join(deltas)
    produced, seq = 0, 1
    while produced < size:
        block = template.replace(b'"seq":', b'"seq":@')
        parts = block.split(b"@")
        out = [parts[0]]
        for part in parts[1:]:
            digits = part.index(b",")
            out.append(str(seq).encode() + part[digits:])
            seq += 1
        chunk = b"".join(out)
        produced += len(chunk)
        yield chunk
    for tail in (stop, usage, end):
        data = json.loads(tail.split(b"data: ")[1])
        data["seq"] = seq
        seq += 1
        yield f"event: {data['type']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def memory_child(size: int) -> None:
    decoder = Decoder(typed=False)
    count = 0
    for chunk in stream_gigabyte(size):
        count += len(decoder.feed(chunk))
    count += len(decoder.close())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"events": count, "peak_mb": peak, "conforming": decoder.conforming}))


def memory_report(size: int) -> None:
    baseline = subprocess.run([sys.executable, __file__, "--memory-child", "0"],
                              capture_output=True, text=True, check=True)
    result = subprocess.run([sys.executable, __file__, "--memory-child", str(size)],
                            capture_output=True, text=True, check=True)
    base, used = json.loads(baseline.stdout), json.loads(result.stdout)
    print(f"\nMemory: decoding {size / 1e9:.1f} GB ({used['events']:,} events, conforming: "
          f"{used['conforming']}): peak RSS {used['peak_mb']:.1f} MB, of which "
          f"{used['peak_mb'] - base['peak_mb']:.1f} MB above the interpreter with the package "
          f"imported (target: under 64 MB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--memory-bytes", type=int, default=1_000_000_000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["decoder", "validators",
                                                                   "memory"])
    args = parser.parse_args()
    if args.memory_child is not None:
        memory_child(args.memory_child)
        return
    if "validators" not in args.skip:
        compare_validators()
    if "decoder" not in args.skip:
        decoder_table()
    if "memory" not in args.skip:
        memory_report(args.memory_bytes)


if __name__ == "__main__":
    main()
