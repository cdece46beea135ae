"""Fuzzing the decoder with mutated spec examples and random bytes, in random chunkings.

Whatever the input, the decoder must terminate, raise nothing in default mode and nothing but
`LLMStreamError` in strict mode, and every diagnostic must name a rule of `llm_stream.rules.RULES`
and a line >= 0; cutting the body into chunks must change nothing.

The plain `pytest` run does one short batch (FUZZ_EXAMPLES examples). `nox -s fuzz` sets
LLM_STREAM_FUZZ_SECONDS and batches run until that time is spent, each batch with its own seed
(LLM_STREAM_FUZZ_SEED fixes the first, to replay a session; a failure prints its seed).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from general_path import general_only
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from llm_stream import Decoder, LLMStreamError
from llm_stream.diagnostics import Diagnostic, Severity
from llm_stream.models import EventEnvelope
from llm_stream.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "spec" / "examples"
SEEDS = [p.read_bytes() for pattern in ("*/*.sse", "*/*.http") for p in
         sorted(EXAMPLES.glob(pattern))]
FUZZ_EXAMPLES = int(os.environ.get("LLM_STREAM_FUZZ_EXAMPLES", "300"))
FUZZ_SECONDS = float(os.environ.get("LLM_STREAM_FUZZ_SECONDS", "0"))
EXAMPLE_TIMEOUT = 20.0
"""Seconds one example may take before the decoder is deemed not to terminate."""

TOKENS = [b"\n", b"\r", b"\r\n", b"\n\n", b"\r\n\r\n", b":", b" ", b"data:", b"data: ",
          b"event: ", b"id: ", b"retry: 5", b"{", b"}", b"[", b"]", b'"', b",", b"\\",
          b'"seq":', b'"type":', b'"v":"1.0"', b"0", b"-1", b"9007199254740993", b"1e400",
          b"NaN", b"null", b"true", b"\xff", b"\xc3", b"\xe2\x82", b"\xef\xbb\xbf", b"\x00",
          "\u00e9".encode(), "\u4e2d".encode(), "\U0001f600".encode(), b"\\ud800",
          b"9.0", b"0e0", b"1.0", b'"type":"tool.call",', b'"text":"x",', b"\\u0022",
          b"[" * 127, b"]" * 127, b"7" * 4301]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A spec example, mutated a few times: bytes flipped, inserted, deleted, duplicated,
    spliced with another example, or cut short; or random bytes now and then."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=300))
    body = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        size = len(body)
        at = draw(st.integers(0, size))
        how = draw(st.sampled_from(["flip", "insert", "token", "delete", "duplicate", "splice",
                                    "truncate"]))
        if how == "flip" and size:
            at = min(at, size - 1)
            body[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "insert":
            body[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif how == "token":
            body[at:at] = draw(st.sampled_from(TOKENS))
        elif how == "delete":
            del body[at : at + draw(st.integers(1, 40))]
        elif how == "duplicate":
            body[at:at] = body[at : at + draw(st.integers(1, 200))]
        elif how == "splice":
            other = draw(st.sampled_from(SEEDS))
            body = body[:at] + other[draw(st.integers(0, len(other))) :]
        elif how == "truncate":
            del body[at:]
    return bytes(body)


OPTIONS = st.fixed_dictionaries({}, optional={
    "typed": st.booleans(),
    "validate": st.booleans(),
    "strict": st.booleans(),
    "lifecycle": st.booleans(),
    "tools": st.sampled_from([[], ["get_weather"], ("get_weather", "get_forecast"),
                              [{"name": "get_weather", "description": "", "parameters": {}}]]),
    "max_line_bytes": st.sampled_from([16, 64, 100, 256, 1 << 20]),
    "max_event_bytes": st.sampled_from([16, 64, 100, 256, 8 << 20]),
    "max_blocks": st.sampled_from([1, 2, 4096]),
})


class _Timeout(Exception):
    pass


@contextmanager
def terminates(seconds: float) -> Iterator[None]:
    """Fail, rather than hang, when a decode does not finish in `seconds` (where SIGALRM is)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum: int, frame: Any) -> None:
        raise _Timeout(f"the decoder did not finish in {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def decode(
    body: bytes, cuts: list[int], options: dict[str, Any], general: bool = False
) -> tuple[list[Any], Any]:
    """The events and diagnostics, or ("raised", diagnostic) when strict mode raised; `general`
    keeps every event off the decoder's hot paths."""
    decoder = general_only(**options) if general else Decoder(**options)
    events: list[Any] = []
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(body)}), len(body)]
    try:
        for a, b in itertools.pairwise(bounds):
            events.extend(decoder.feed(body[a:b]))
        events.extend(decoder.close())
    except LLMStreamError as exc:
        assert options.get("strict"), f"LLMStreamError without strict mode: {exc}"
        check(exc.diagnostic)
        assert exc.diagnostic.severity is Severity.ERROR
        assert exc.diagnostic in decoder.diagnostics
        return ["raised"], exc.diagnostic
    for diagnostic in decoder.diagnostics:
        check(diagnostic)
    for event in events:
        assert isinstance(event, dict if options.get("typed") is False else EventEnvelope)
    assert decoder.conforming == all(d.severity is Severity.WARNING for d in decoder.diagnostics)
    if options.get("strict"):
        assert decoder.conforming
    return [json.dumps(e) if isinstance(e, dict) else e.model_dump_json() for e in events], \
        decoder.diagnostics


def check(diagnostic: Diagnostic) -> None:
    assert diagnostic.rule in RULES, diagnostic
    assert isinstance(diagnostic.line, int) and diagnostic.line >= 0, diagnostic
    assert isinstance(diagnostic.message, str) and diagnostic.message, diagnostic


def cuttings(draw: st.DrawFn, body: bytes) -> list[list[int]]:
    size = max(len(body) - 1, 1)
    return [
        draw(st.lists(st.integers(1, size), max_size=16)),
        list(range(0, len(body), draw(st.integers(1, 64)))),
        [m.end() for m in re.finditer(rb"\r\n\r\n|\n\n|\r\r", body)],  # flushed events
    ]


def fuzz_once(body: bytes, options: dict[str, Any], data: st.DataObject) -> None:
    """Every chunking gives what the whole body gives, and the hot paths decide as the general
    path does."""
    if options.get("validate") is False and options.get("typed") is not False:
        options = {**options, "typed": False}  # typed events are always validated
    with terminates(EXAMPLE_TIMEOUT):
        whole = decode(body, [], options)
        assert decode(body, [], options, general=True) == whole
        for cuts in cuttings(data.draw, body):
            assert decode(body, cuts, options) == whole, f"cuts at {cuts}"


def batch(seed_value: int, examples: int) -> None:
    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(body=mutated(), options=OPTIONS, data=st.data())
    def run(body: bytes, options: dict[str, Any], data: st.DataObject) -> None:
        fuzz_once(body, options, data)

    try:
        run()
    except BaseException:
        print(f"fuzz batch failed with seed {seed_value} (LLM_STREAM_FUZZ_SEED={seed_value})")
        raise


def test_fuzz_the_decoder() -> None:
    first = int(os.environ.get("LLM_STREAM_FUZZ_SEED", random.getrandbits(32)))
    ends = time.monotonic() + FUZZ_SECONDS
    batch(first, FUZZ_EXAMPLES)
    batches = 1
    while time.monotonic() < ends:
        batch(first + batches, min(FUZZ_EXAMPLES, 1000))
        batches += 1
    print(f"fuzz: {batches} batch(es) of up to {FUZZ_EXAMPLES} examples from seed {first}")


@given(body=mutated(), options=OPTIONS, data=st.data())
@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_fuzz_with_the_example_database(
    body: bytes, options: dict[str, Any], data: st.DataObject
) -> None:
    """A few examples through Hypothesis' own database, so that a failure found once is
    replayed first on the next run."""
    fuzz_once(body, options, data)
