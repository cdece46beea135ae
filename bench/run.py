"""`nox -s bench`: the decoder and the validators against their peers, as ratios from one run.

The decoder is measured on every workload of `workloads.matrix` (text deltas in 4 KiB, 64-byte
and one-event chunks, LF and CRLF; tool calls whole and as fragments; reasoning; many short
streams), typed and on the fast path, against the `openai` SDK's SSE decoder and httpx-sse's,
each followed by json.loads, and the floor of the work, bytes.split plus orjson.loads; the table
gives the ratios the targets are set on, with the ceiling near which the fast path's ratio tops
out (the floor's split making the parses the rules require with the decoder's parsers), and
names the decoder's modules it measured, compiled or pure (`--pure` measures them a second time
on the pure-Python modules, in a child process, for the two to be compared in one command); the
same bytes go through the TypeScript decoder in Node, against eventsource-parser and JSON.parse.
Start-up is timed in fresh interpreters, the bindings' JSON parsers alone against pydantic-core
and orjson (`bench_parsers`), and peak memory is read from a child process decoding 1 GB.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
import polite
from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
from httpx_sse._decoders import SSELineDecoder as HttpxSSELineDecoder
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from pydantic_core import from_json

from llm_stream import Decoder, implementation
from llm_stream.jsonscan import certainly_json
from llm_stream.lifecycle import FIELD_CHECKS
from llm_stream.plainjson import parse

sys.path.insert(0, str(Path(__file__).parent))
from bench_parsers import parsers_table
from bench_sse import rates
from bench_translate import translate_table
from bench_typescript import typescript_table
from bench_validators import compare_validators
from check_command import check_report
from workloads import MAX_BLOCKS, deltas, matrix


def ours(streams: Sequence[Sequence[bytes]], typed: bool) -> int:
    """Typed: every event validated and built as its model; else the fast path (dicts,
    envelope and lifecycle checks), as the decoder issue defines the two."""
    count = 0
    for chunks in streams:
        decoder = Decoder(typed=typed, validate=typed, max_blocks=MAX_BLOCKS)
        for chunk in chunks:
            count += len(decoder.feed(chunk))
        count += len(decoder.close())
        if not decoder.conforming:
            raise AssertionError(decoder.diagnostics[:3])
    return count


def openai_sdk(streams: Sequence[Sequence[bytes]]) -> int:
    return sum(1 for chunks in streams
               for sse in OpenAISSEDecoder().iter_bytes(iter(chunks)) if json.loads(sse.data))


def httpx_sse(streams: Sequence[Sequence[bytes]]) -> int:
    count = 0
    for chunks in streams:
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        lines, decoder = HttpxSSELineDecoder(), HttpxSSEDecoder()
        for chunk in chunks:
            for line in lines.decode(text.decode(chunk)):
                sse = decoder.decode(line.rstrip("\n"))
                if sse is not None and json.loads(sse.data):
                    count += 1
    return count


def floor(wholes: Sequence[bytes], blank: bytes) -> int:
    count = 0
    for whole in wholes:
        for part in whole.split(blank):
            if part:
                orjson.loads(part[part.index(b"data: ") + 6:])
                count += 1
    return count


JSON_TEXTS = {kind: tuple(field for check, field, _ in checks if check == "json-text")
              for kind, checks in FIELD_CHECKS.items()}
"""The members each event type holds to be JSON text (LS-CALL-2's `arguments`), which the
decoder scans (`certainly_json`), and parses a second time only where the scan is not sure."""


def parses(wholes: Sequence[bytes], blank: bytes) -> int:
    """The floor's split with the decoder's parsers in place of orjson, making every parse the
    rules require as the decoder makes it: each event's data (`plainjson.parse`), and each field
    its type holds to be JSON text, a tool.call's `arguments` (LS-CALL-2:
    `jsonscan.certainly_json`, and pydantic-core for what that is not sure of). Over the floor,
    it is about the ceiling of the fast path's ratio: the rest of its work adds to these parses,
    and only a cut of the events cheaper than the floor's split takes it past."""
    count = 0
    for whole in wholes:
        for part in whole.split(blank):
            if part:
                data = part[part.index(b"data: ") + 6:]
                event = parse(data)
                for field in JSON_TEXTS.get(event["type"], ()):
                    if not certainly_json(event[field]):
                        from_json(event[field], allow_inf_nan=False)
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
    instances = [json.loads(e.split(b"data: ")[1]) for e in deltas(2000)[1:-3]]

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


PEERS = {
    "typed": "llm_stream, validating, typed",
    "fast": "llm_stream, fast path, dicts",
    "openai": "openai SDK + json.loads",
    "httpx": "httpx-sse + json.loads",
    "floor": "floor: split + orjson",
    "parses": "the floor's split, parsing as the decoder does, with its parsers",
}
TARGETS = (("typed", "openai", 2.0), ("typed", "httpx", 1.2), ("fast", "floor", 0.5))


def decoder_table(scale: float, rounds: int, only: str) -> None:
    """Every workload, every decoder, in one run: the runs of a workload take turns (`rates`),
    so a machine that slows down for a while slows them alike, and the ratios hold."""
    rows: dict[str, dict[str, float]] = {}
    for workload in matrix(scale):
        if only not in workload.name:
            continue
        streams, wholes, blank = workload.streams, workload.wholes, workload.eol * 2
        runs: dict[str, Callable[[], int]] = {
            "typed": lambda s=streams: ours(s, True),
            "fast": lambda s=streams: ours(s, False),
            "openai": lambda s=streams: openai_sdk(s),
            "httpx": lambda s=streams: httpx_sse(s),
            "floor": lambda w=wholes, b=blank: floor(w, b),
            "parses": lambda w=wholes, b=blank: parses(w, b),
        }
        rows[workload.name] = rates(runs, workload.events, rounds=rounds)
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    width = max(map(len, rows)) + 2
    title = f"Decoder ({implementation()} modules)"
    print(f"\n{title}: thousands of events per CPU second, best of {rounds}")
    print(f"{'workload':{width}}" + "".join(f"{key:>9}" for key in PEERS))
    for name, row in rows.items():
        print(f"{name:{width}}" + "".join(f"{row[key] / 1000:9,.0f}" for key in PEERS))
    print("\n" + "; ".join(f"{key}: {label}" for key, label in PEERS.items()))
    heads = [f"{ours}/{peer} >= {target}" for ours, peer, target in TARGETS]
    print(f"\n{title}: ratios in the same run (* below target; the fast path's ceiling is "
          "about parses/floor, the floor's split parsing as the decoder does)")
    print(f"{'workload':{width}}" + "".join(f"{head:>20}" for head in heads)
          + f"{'ceiling: parses/floor':>24}")
    missed = 0
    for name, row in rows.items():
        cells = []
        for ours_key, peer, target in TARGETS:
            ratio = row[ours_key] / row[peer]
            missed += ratio < target
            cells.append(f"{ratio:.2f}{'*' if ratio < target else ' '}")
        print(f"{name:{width}}" + "".join(f"{cell:>20}" for cell in cells)
              + f"{row['parses'] / row['floor']:23.2f}")
    print(f"{missed} of {len(rows) * len(TARGETS)} cells below target")


def pure_decoder_table(scale: float, rounds: int, only: str) -> None:
    """The decoder table again, on the pure-Python modules (`LLM_STREAM_PURE=1`), in a child
    process: which modules load is settled when the package is first imported."""
    command = [sys.executable, __file__, "--tables", "decoder", "--scale", str(scale),
               "--rounds", str(rounds), "--only", only]
    subprocess.run(command, env={**os.environ, "LLM_STREAM_PURE": "1"}, check=True)


def import_times(rounds: int) -> None:
    """Start-up cost: best of `rounds` fresh interpreters, and what each takes over one that
    imports nothing (which the timer's noise can put below it). The modules' bytecode is cached
    first (in a temporary folder), as an installed package has it."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def run(code: str) -> str:
            return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, check=True).stdout

        cases = {
            "nothing": "pass",
            "import llm_stream": "import llm_stream",
            "an untyped Decoder": "import llm_stream; llm_stream.Decoder(typed=False)",
            "a typed Decoder": "import llm_stream; llm_stream.Decoder()",
        }
        best = dict.fromkeys(cases, float("inf"))
        for code in cases.values():
            run(code)  # caches the bytecode
        for _ in range(rounds):  # the cases take turns, so that load slows them alike
            for label, code in cases.items():
                start = time.perf_counter()
                run(code)
                best[label] = min(best[label], (time.perf_counter() - start) * 1000)
        bare = best.pop("nothing")
        print(f"\nStart-up: best of {rounds} fresh interpreters; one that imports nothing takes "
              f"{bare:.1f} ms")
        for label, milliseconds in best.items():
            target = "  (target: under 40 ms)" if label == "import llm_stream" else ""
            code = cases[label]
            models = run(f"{code}; import sys; print('llm_stream.models' in sys.modules)")
            print(f"  {label:20} {milliseconds:7.1f} ms, {milliseconds - bare:+6.1f} over it  "
                  f"models built: {models.strip() == 'True'}{target}")


def memory_report(size: int) -> None:
    """Peak memory of decoding `size` bytes, in a child process that imports only llm_stream."""
    script = Path(__file__).with_name("memory.py")
    result = subprocess.run([sys.executable, str(script), str(size)],
                            capture_output=True, text=True, check=True)
    print(result.stdout.rstrip())


TABLES = ("startup", "validators", "parsers", "decoder", "typescript", "translate", "memory",
          "check")
"""The tables of a run, in the order they are printed."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-bytes", type=int, default=1_000_000_000)
    parser.add_argument("--check-bytes", type=int, default=200_000_000,
                        help="the size of the capture llm-stream check is timed on")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="shrink every decoder workload by this factor, for a quick run")
    parser.add_argument("--only", default="", help="only the decoder workloads so named")
    parser.add_argument("--rounds", type=int, default=5, help="best of how many runs")
    parser.add_argument("--pure", action="store_true",
                        help="measure the decoder table a second time, on the pure-Python "
                             "modules, to compare with the compiled ones")
    parser.add_argument("--skip", nargs="*", default=[], choices=TABLES,
                        help="leave these tables out")
    parser.add_argument("--tables", nargs="*", default=list(TABLES), choices=TABLES,
                        help="only these tables (`--tables typescript` for the TypeScript "
                             "decoder's alone)")
    args = parser.parse_args()
    tables = set(args.tables) - set(args.skip)
    if "startup" in tables:
        import_times(max(args.rounds, 10))
    if "validators" in tables:
        validators_table()
    if "parsers" in tables:
        parsers_table()
    if "decoder" in tables:
        decoder_table(args.scale, args.rounds, args.only)
        if args.pure:
            pure_decoder_table(args.scale, args.rounds, args.only)
    if "typescript" in tables:
        typescript_table(matrix(args.scale), args.rounds, args.only)
    if "translate" in tables:
        translate_table()
    if "memory" in tables:
        memory_report(args.memory_bytes)
    if "check" in tables:
        check_report(args.check_bytes, min(args.rounds, 3))


if __name__ == "__main__":
    sys.exit(polite.run(main))
