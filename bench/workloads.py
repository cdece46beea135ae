"""The stream shapes the decoder benchmark measures, each a conforming body cut into chunks.

A workload is one or more streams (a client decodes each with its own decoder), each a list of
chunks as a server's flushes would deliver them: 4 KiB reads, 64-byte reads, or one event per
chunk, as servers that flush every event send them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

TOKENS = (" caf\u00e9", ' "q"', " \u00fc", " the", "\n", " \u65e5\u672c", " \\", " \U0001F600")
ARGUMENTS = '{"city":"Vienna","unit":"celsius","days":3,"note":"caf\u00e9 \\"q\\""}'


MAX_BLOCKS = 1 << 20
"""The block limit (`max_blocks`, LS-LIMIT-5) of every decoder the benchmark runs: a tool-call
workload opens one block a call, 5,000 in a stream, past the default of 4,096 that guards a
client against a hostile server; the limit is a bound, not a cost, so raising it measures the
same work."""


@dataclass(frozen=True)
class Workload:
    """Streams as their chunks; `events` is how many events they carry in all."""

    name: str
    streams: list[list[bytes]]
    events: int
    eol: bytes = b"\n"

    @property
    def wholes(self) -> list[bytes]:
        """Each stream's body in one piece, for the floor, which is given it whole."""
        return [b"".join(chunks) for chunks in self.streams]


class _Stream:
    """Builds one conforming stream event by event, numbering them."""

    def __init__(self, eol: bytes) -> None:
        self.eol = eol.decode()
        self.events: list[bytes] = []
        self.add("stream.start", model="m", created=1749292800)

    def add(self, kind: str, **fields: object) -> None:
        data = json.dumps({"v": "1.0", "seq": len(self.events), "type": kind, **fields},
                          ensure_ascii=False, separators=(",", ":"))
        text = f"event: {kind}\ndata: {data}\n\n"
        self.events.append(text.replace("\n", self.eol).encode())

    def end(self, output_tokens: int, **usage: object) -> list[bytes]:
        self.add("usage", input_tokens=9, output_tokens=output_tokens, **usage)
        self.add("stream.end")
        return self.events


def deltas(count: int, eol: bytes = b"\n") -> list[bytes]:
    """`count` content.delta events in one text block."""
    stream = _Stream(eol)
    for i in range(count):
        stream.add("content.delta", index=0, role="assistant",
                   delta={"text": TOKENS[i % len(TOKENS)]})
    stream.add("content.stop", index=0, stop_reason="end_turn")
    return stream.end(count)


def tool_calls(count: int) -> list[bytes]:
    """`count` tool calls, each a block of one tool.call and its content.stop, each followed
    by a usage event with the running totals."""
    stream = _Stream(b"\n")
    for i in range(count):
        stream.add("tool.call", index=i, id=f"call_{i}", name="get_weather", arguments=ARGUMENTS)
        stream.add("content.stop", index=i, stop_reason="tool_use")
        stream.add("usage", input_tokens=9, output_tokens=i + 1)
    return stream.end(count)


def tool_call_fragments(count: int, pieces: int = 6) -> list[bytes]:
    """`count` tool calls, each streamed as tool.call.delta fragments of its arguments and then
    the whole tool.call, in a block of its own."""
    stream = _Stream(b"\n")
    step = -(-len(ARGUMENTS) // pieces)
    for i in range(count):
        call = {"id": f"call_{i}", "name": "get_weather"}
        stream.add("tool.call.delta", index=i, **call, arguments="")
        for start in range(0, len(ARGUMENTS), step):
            stream.add("tool.call.delta", index=i, arguments=ARGUMENTS[start:start + step])
        stream.add("tool.call", index=i, **call, arguments=ARGUMENTS)
        stream.add("content.stop", index=i, stop_reason="tool_use")
    return stream.end(count)


def reasoning(count: int) -> list[bytes]:
    """`count` reasoning.delta events and their signature, then `count` content.delta events."""
    stream = _Stream(b"\n")
    for i in range(count):
        stream.add("reasoning.delta", index=0, delta={"text": TOKENS[i % len(TOKENS)]})
    stream.add("reasoning.signature", index=0, signature="EqQBCkgIBhABGAIiQGxsbS1zdHJlYW0")
    stream.add("content.stop", index=0, stop_reason="end_turn")
    for i in range(count):
        stream.add("content.delta", index=1, role="assistant",
                   delta={"text": TOKENS[i % len(TOKENS)]})
    stream.add("content.stop", index=1, stop_reason="end_turn")
    return stream.end(count, reasoning_tokens=count)


def cut(events: list[bytes], size: int) -> list[bytes]:
    """The body in chunks of `size` bytes; 0 means one event per chunk."""
    if size == 0:
        return events
    whole = b"".join(events)
    return [whole[i:i + size] for i in range(0, len(whole), size)]


def _one(name: str, events: list[bytes], size: int, eol: bytes = b"\n") -> Workload:
    return Workload(name, [cut(events, size)], len(events), eol)


def _thousands(count: int) -> str:
    return f"{count // 1000}k" if count >= 1000 else str(count)


def matrix(scale: float = 1.0) -> Iterator[Workload]:
    """Every workload of the benchmark; `scale` shrinks them for a quick run."""
    def n(count: int) -> tuple[int, str]:
        scaled = max(1, int(count * scale))
        return scaled, _thousands(scaled)

    count, k = n(100_000)
    text = deltas(count)
    yield _one(f"{k} deltas, 4 KiB", text, 4096)
    yield _one(f"{k} deltas, 1 event/chunk", text, 0)
    yield _one(f"{k} deltas, CRLF, 4 KiB", deltas(count, b"\r\n"), 4096, b"\r\n")
    count, k = n(50_000)
    yield _one(f"{k} deltas, 64 B chunks", deltas(count), 64)
    count, k = n(5_000)
    calls = tool_calls(count)
    yield _one(f"{k} tool.call+stop+usage, 4 KiB", calls, 4096)
    yield _one(f"{k} tool.call+stop+usage, 1 event", calls, 0)
    count, k = n(2_000)
    fragments = tool_call_fragments(count)
    yield _one(f"{k} calls as fragments, 4 KiB", fragments, 4096)
    yield _one(f"{k} calls as fragments, 1 event", fragments, 0)
    count, k = n(50_000)
    thoughts = reasoning(count)
    yield _one(f"{k} reasoning+{k} text, 4 KiB", thoughts, 4096)
    yield _one(f"{k} reasoning+{k} text, 1 event", thoughts, 0)
    count, k = n(10_000)
    short = [deltas(16) for _ in range(count)]
    yield Workload(f"{k} streams of 20 events, whole", [[b"".join(s)] for s in short],
                   sum(map(len, short)))
    yield Workload(f"{k} streams of 20 events, 1 event", short, sum(map(len, short)))
