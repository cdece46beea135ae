"""The bindings' JSON parsers alone, against pydantic-core and orjson, on the events of the
decoder's workloads: `plainjson.parse` (each event's data, on the decoder's fast path and in the
translators) against `from_json`, which it must equal, and orjson, the floor's parser; and
`jsonscan.certainly_json` (a tool call's arguments, LS-CALL-2) against the `from_json` it spares.
Each says which modules it measured, compiled or pure.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import orjson
import polite
from bench_sse import rates
from pydantic_core import from_json
from workloads import deltas, reasoning, tool_call_fragments, tool_calls

from llm_stream import implementation
from llm_stream.jsonscan import certainly_json
from llm_stream.plainjson import parse


def _data(chunks: Sequence[bytes]) -> list[bytes]:
    """The data of each event of a stream's chunks, one event a chunk."""
    return [chunk[chunk.index(b"data: ") + 6:].rstrip(b"\n") for chunk in chunks]


def _each(parser: Callable[[Any], object], texts: Sequence[Any]) -> Callable[[], int]:
    def run() -> int:
        for text in texts:
            parser(text)
        return len(texts)
    return run


def _strictly(text: Any) -> object:
    return from_json(text, allow_inf_nan=False)


def parsers_table(count: int = 2_000, rounds: int = 7) -> None:
    """Nanoseconds of CPU time a text of each parser, best of `rounds`, the parsers taking
    turns; ours is `plainjson.parse` on events' data, `certainly_json` on arguments."""
    streams = {"text deltas": deltas(count), "tool calls": tool_calls(count // 2),
               "tool-call fragments": tool_call_fragments(count // 8),
               "reasoning, then text": reasoning(count // 2)}
    print(f"\nParsers ({implementation()} modules): nanoseconds a text of CPU time, best of "
          f"{rounds}")
    print(f"{'texts':34}{'ours':>11}{'from_json':>11}{'orjson':>9}{'ours/from_json':>16}")
    for name, chunks in streams.items():
        texts = _data(chunks)
        speed = rates({"plainjson": _each(parse, texts), "from_json": _each(_strictly, texts),
                       "orjson": _each(orjson.loads, texts)}, len(texts), rounds)
        print(f"{'events: ' + name:34}" + "".join(
            f"{1e9 / speed[key]:{width}.0f}" for key, width in
            (("plainjson", 11), ("from_json", 11), ("orjson", 9)))
            + f"{speed['from_json'] / speed['plainjson']:16.2f}")
    arguments = [event["arguments"] for event in map(from_json, _data(tool_calls(count)))
                 if event.get("type") == "tool.call"]
    speed = rates({"scan": _each(certainly_json, arguments),
                   "from_json": _each(_strictly, arguments)}, len(arguments), rounds)
    print(f"{'tool-call arguments: certainly_json':34}{1e9 / speed['scan']:11.0f}"
          f"{1e9 / speed['from_json']:11.0f}{'':9}{speed['from_json'] / speed['scan']:16.2f}")


if __name__ == "__main__":
    sys.exit(polite.run(parsers_table))
