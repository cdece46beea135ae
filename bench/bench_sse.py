"""Throughput of the SSE layer against the decoders clients use today.

Run as ``.venv/bin/python bench/bench_sse.py``; it needs the ``bench`` extra (httpx-sse, openai).
The body is 100,000 ``content.delta`` events, fed in 4 KiB chunks, 64-byte chunks (about two an
event, one of them ending none) and one event per chunk, with LF and CRLF line ends. ``split`` is
the floor: ``body.split`` on the blank line, with no parsing.
"""

from __future__ import annotations

import codecs
import gc
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial

import polite
from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
from httpx_sse._decoders import SSELineDecoder as HttpxSSELineDecoder
from openai._streaming import SSEDecoder as OpenAISSEDecoder

from llm_stream.sse import SSEDecoder

EVENTS = 100_000
EVENT = (
    "event: content.delta\n"
    'data: {"v":"1.0","seq":17,"type":"content.delta","index":0,"role":"assistant",'
    '"delta":{"text":" caf\u00e9 \\"q\\" ü"}}\n'
    "\n"
).encode()


def ours(chunks: Sequence[bytes]) -> int:
    decoder = SSEDecoder()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count + len(decoder.close())


def httpx_sse(chunks: Sequence[bytes]) -> int:
    """As ``EventSource.iter_sse`` does: httpx's text decoding, then lines, then events."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = HttpxSSELineDecoder()
    decoder = HttpxSSEDecoder()
    count = 0
    for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            if decoder.decode(line.rstrip("\n")) is not None:
                count += 1
    for line in lines.flush():
        if decoder.decode(line.rstrip("\n")) is not None:
            count += 1
    return count


def openai(chunks: Sequence[bytes]) -> int:
    """As ``openai.Stream`` does: the response's byte iterator into ``iter_bytes``."""
    return sum(1 for _ in OpenAISSEDecoder().iter_bytes(iter(chunks)))


def floor(body: bytes, blank: bytes) -> int:
    return len(body.split(blank)) - 1


def rates(runs: dict[str, Callable[[], int]], expected: int, rounds: int = 3) -> dict[str, float]:
    """Events per second of each run's best of ``rounds``.

    The runs take turns, after one untimed turn to warm up, so that a machine that slows down
    for a while slows them all alike; as in ``timeit``, the garbage collector is off while timing.
    Each run is timed in CPU time, which other processes on a shared machine do not inflate as
    much as they do the wall clock.
    """
    for name, run in runs.items():
        if (count := run()) != expected:
            raise AssertionError(f"{name} gave {count} events, not {expected}")
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            gc.collect()
            gc.disable()
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
            gc.enable()
    return {name: expected / seconds for name, seconds in best.items()}


def main() -> None:
    decoders: dict[str, Callable[[Sequence[bytes]], int]] = {
        "llm_stream": ours,
        "httpx-sse": httpx_sse,
        "openai": openai,
    }
    table: dict[str, dict[str, float]] = {}
    for eol in ("LF", "CRLF"):
        event = EVENT if eol == "LF" else EVENT.replace(b"\n", b"\r\n")
        body = event * EVENTS
        blank = b"\n\n" if eol == "LF" else b"\r\n\r\n"
        feeds = {
            "4 KiB": [body[i : i + 4096] for i in range(0, len(body), 4096)],
            "64 B": [body[i : i + 64] for i in range(0, len(body), 64)],
            "1 event": [event] * EVENTS,
        }
        for feed, chunks in feeds.items():
            runs: dict[str, Callable[[], int]] = {
                name: partial(decode, chunks) for name, decode in decoders.items()
            }
            runs["split (floor)"] = partial(floor, body, blank)
            table[f"{eol}, {feed}"] = rates(runs, EVENTS)

    print(f"events per CPU second, {EVENTS:,} events of {len(EVENT)} bytes, best of 3")
    print(f"{'':16}" + "".join(f"{column:>16}" for column in table))
    for name in [*decoders, "split (floor)"]:
        print(f"{name:16}" + "".join(f"{row[name]:16,.0f}" for row in table.values()))
    for peer in ("httpx-sse", "openai"):
        ratios = [row["llm_stream"] / row[peer] for row in table.values()]
        print(f"{'x ' + peer:16}" + "".join(f"{ratio:16.2f}" for ratio in ratios))


if __name__ == "__main__":
    sys.exit(polite.run(main))
