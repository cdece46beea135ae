"""Peak memory of the decoder on a long body: `python bench/memory.py BYTES`.

Imports nothing but llm_stream, so that the peak measured is the decoder's, not a peer's; the
body is produced lazily in 64 KiB chunks, so the input holds no memory either.
"""

from __future__ import annotations

import json
import resource
import sys
import tracemalloc
from collections.abc import Iterator

import polite

from llm_stream import Decoder

TEXTS = (" caf\u00e9", ' "q"', " \u00fc", " the", "\n", " \u65e5\u672c")


def event(kind: str, seq: int, **fields: object) -> bytes:
    data = json.dumps({"v": "1.0", "seq": seq, "type": kind, **fields}, ensure_ascii=False,
                      separators=(",", ":"))
    return f"event: {kind}\ndata: {data}\n\n".encode()


def stream(size: int) -> Iterator[bytes]:
    """A conforming stream of about `size` bytes of content.delta events."""
    yield event("stream.start", 0, model="m", created=1749292800)
    produced, seq = 0, 1
    while produced < size:
        chunk = b"".join(
            event("content.delta", seq + i, index=0, role="assistant",
                  delta={"text": TEXTS[(seq + i) % len(TEXTS)]})
            for i in range(400)
        )
        seq += 400
        produced += len(chunk)
        yield chunk
    yield event("content.stop", seq, index=0, stop_reason="end_turn")
    yield event("usage", seq + 1, input_tokens=9, output_tokens=seq)
    yield event("stream.end", seq + 2)


def rss_mb() -> float:
    """The process's peak resident set (VmHWM; unlike ru_maxrss it does not inherit the peak of
    the process that started this one)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    size = int(sys.argv[1])
    before = rss_mb()
    decoder, events = Decoder(typed=False), 0
    for chunk in stream(size):
        events += len(decoder.feed(chunk))
    events += len(decoder.close())
    after = rss_mb()
    tracemalloc.start()
    traced = Decoder(typed=False)
    for chunk in stream(min(size, 50_000_000)):
        traced.feed(chunk)
    traced.close()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    print(f"Memory: decoding {size / 1e9:.2f} GB ({events:,} events, conforming: "
          f"{decoder.conforming}): peak RSS {after:.1f} MB for the whole process, "
          f"{after - before:.1f} MB of it gained while decoding; Python heap peak while "
          f"decoding 50 MB: {peak:.2f} MB (target: under 64 MB)")


if __name__ == "__main__":
    sys.exit(polite.run(main))
