"""Two languages, one verdict: the TypeScript bindings against the Python ones.

Every stream example of the spec and a corpus of mutated ones (the fuzz test's mutations, drawn
deterministically) is decoded by both; the TypeScript decoder, fed in several chunkings, must give
the Python decoder's events and diagnostics (rule, line, severity), in order, in each. Strict mode
must stop at the same diagnostic. The encoder must write the same bytes and the aggregator fold
the same result. Events are compared as JSON.parse reads them (2.0 is 2).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from node_package import ROOT, canonical, requires_node, run_driver

from llm_stream import Decoder, LLMStreamError, aggregate, encode_event
from llm_stream_codegen.examples import EXAMPLES_DIR, decoder_options
from llm_stream_codegen.load import load

pytestmark = requires_node

SPEC = load(ROOT)
STREAM_KINDS = ("stream", "http-response", "events")
CHUNKINGS = [[0], [1], [2, 5, 64], [4096]]
"""Whole, byte by byte, cut at odd places, and as a server's buffered writes."""
FUZZ_CASES = int(os.environ.get("LLM_STREAM_TS_FUZZ_CASES", "400"))
Case = tuple[str, bytes, dict[str, Any]]


def _body(content: bytes) -> bytes:
    """A capture's body: a whole HTTP response loses its head, up to the first blank line, as
    `llm-stream check` reads it."""
    if not content.startswith(b"HTTP/"):
        return content
    blank = re.search(rb"\r?\n\r?\n", content)
    return b"" if blank is None else content[blank.end():]


def example_cases() -> list[Case]:
    cases = []
    for example in SPEC.examples:
        if example.kind not in STREAM_KINDS or example.expect is None:
            continue
        options = decoder_options(example.options, ROOT / EXAMPLES_DIR)
        options["lifecycle"] = example.kind != "events"
        cases.append((example.file, _body(example.content), options))
    return cases


def fuzz_cases(count: int) -> list[Case]:
    """The fuzz test's cases, the same `count` of them on every run: its mutated examples with
    its decoder options (limits, tools, lifecycle and validation on or off); the TypeScript
    decoder makes no typed events, and strict mode has a test of its own."""
    path = ROOT / "tests" / "fuzz" / "test_fuzz_decoder.py"
    spec = importlib.util.spec_from_file_location("fuzz_mutations", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases: list[Case] = []

    @settings(max_examples=count, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(module.mutated(), module.OPTIONS)
    def collect(body: bytes, options: dict[str, Any]) -> None:
        options = {key: list(value) if isinstance(value, tuple) else value
                   for key, value in options.items() if key not in ("typed", "strict")}
        cases.append((f"mutation {len(cases)} with {options}", body, options))

    collect()
    return cases


def python_verdict(body: bytes, options: dict[str, Any]) -> dict[str, Any]:
    decoder = Decoder(typed=False, **options)
    events = decoder.feed(body) + decoder.close()
    return {
        "events": [canonical(event) for event in events],
        "diagnostics": [[d.rule, d.line, d.severity.value] for d in decoder.diagnostics],
    }


def python_strict(body: bytes, options: dict[str, Any]) -> dict[str, Any]:
    decoder = Decoder(typed=False, strict=True, **options)
    events: list[Any] = []
    try:
        events += decoder.feed(body)
        events += decoder.close()
    except LLMStreamError as error:
        events += error.events
        return {"events": [canonical(e) for e in events],
                "raised": [error.diagnostic.rule, error.diagnostic.line]}
    return {"events": [canonical(e) for e in events],
            "diagnostics": [[d.rule, d.line, d.severity.value] for d in decoder.diagnostics]}


def typescript_verdicts(cases: list[Case], chunkings: list[list[int]]) -> list[list[Any]]:
    job = {"decode": [
        {"name": name, "body": base64.b64encode(body).decode(), "options": options,
         "chunkings": chunkings}
        for name, body, options in cases
    ]}
    answers: list[list[dict[str, Any]]] = run_driver(job)["decode"]
    for runs in answers:
        for run in runs:
            run["events"] = [canonical(json.loads(e)) for e in run["events"]]
    return answers


def disagreements(
    cases: list[Case], chunkings: list[list[int]], verdict: Callable[[bytes, dict[str, Any]], Any]
) -> list[str]:
    found = []
    for (name, body, options), runs in zip(cases, typescript_verdicts(cases, chunkings),
                                           strict=True):
        expected = verdict(body, {k: v for k, v in options.items() if k != "strict"})
        for chunking, run in zip(chunkings, runs, strict=True):
            if run != expected:
                found.append(f"{name} in chunks of {chunking}: Python {expected}, "
                             f"TypeScript {run}")
    return found


@pytest.fixture(scope="module")
def examples() -> list[Case]:
    cases = example_cases()
    assert len(cases) > 90
    return cases


def test_every_example_gets_the_same_verdict_in_every_chunking(examples: list[Case]) -> None:
    found = disagreements(examples, CHUNKINGS, python_verdict)
    assert not found, f"{len(found)} disagreements, the first: {found[:3]}"


def test_strict_mode_stops_at_the_same_diagnostic(examples: list[Case]) -> None:
    strict = [(name, body, {**options, "strict": True}) for name, body, options in examples]
    found = disagreements(strict, [[0], [3]], python_strict)
    assert not found, f"{len(found)} disagreements, the first: {found[:3]}"


def test_every_mutated_example_gets_the_same_verdict() -> None:
    cases = fuzz_cases(FUZZ_CASES)
    found = disagreements(cases, [[0], [1], [3, 11, 256]], python_verdict)
    assert not found, f"{len(found)} of {len(cases)} disagree, the first: {found[:2]}"


def test_json_past_a_limit_or_broken_before_it_gets_the_same_verdict() -> None:
    """Brackets and digits past the limits, in the data's JSON or in a string it never closes
    (which is no JSON, whatever it holds)."""
    start = b'data: {"v":"1.0","seq":0,"type":"stream.start","model":"m","created":1}\n\n'
    deep, digits = "[" * 300 + "]" * 300, "7" * 4301
    datas = [f'{{"v":"1.0","seq":1,"type":"usage","x":{deep}}}',
             f'{{"v":"1.0","seq":1,"type":"usage","x":{digits}}}',
             f'{{"v":"1.0","seq":1,"type":"usage","x":"{deep}}}',
             f'{{"v":"1.0","seq":1,"type":"usage","x":"{digits}}}',
             f'{{"v":"1.0","seq":1,"type":"usage","x":"\\"{deep}}}',
             f'{{"v":"1.0","seq":1,"type":"usage","x":","y":{deep}}}']
    cases: list[Case] = [(data[40:60], start + f"data: {data}\n\n".encode(), {})
                         for data in datas]
    found = disagreements(cases, [[0], [7]], python_verdict)
    assert not found, found[:2]
    refusals = [[rule for rule, line, _ in python_verdict(body, {})["diagnostics"]
                 if line == 3 and rule != "LS-END-2"] for _, body, _ in cases]
    assert refusals == [["LS-LIMIT-3"], ["LS-LIMIT-4"], *[["LS-SSE-2"]] * 4]


def _tool_call_in_fragments(arguments: str, fragments: list[str], late: int = 0) -> bytes:
    """A stream of one tool call sent as `fragments`, then whole with `arguments`, then `late`
    more fragments in its block."""
    call = {"index": 0, "id": "call_1", "name": "get_weather"}
    events: list[dict[str, Any]] = [
        {"type": "stream.start", "model": "m", "created": 1749292800},
        *({"type": "tool.call.delta", **(call if i == 0 else {"index": 0}), "arguments": piece}
          for i, piece in enumerate(fragments)),
        {"type": "tool.call", **call, "arguments": arguments},
        *({"type": "tool.call.delta", "index": 0, "arguments": "}"} for _ in range(late)),
        {"type": "content.stop", "index": 0, "stop_reason": "tool_use"},
        {"type": "usage", "input_tokens": 9, "output_tokens": 9},
        {"type": "stream.end"},
    ]
    return b"".join(encode_event({"v": "1.0", "seq": seq, **event})
                    for seq, event in enumerate(events))


def test_long_and_late_fragments_get_the_same_verdict() -> None:
    """Fragments whose text runs past what the TypeScript decoder keeps as text, and is hashed
    from there on: joined right, joined wrong at the end or at the start, and followed by more
    fragments after the call they build (which the hot path must leave to the general one)."""
    text = "caf\u00e9 \U0001F600 " * 8000
    arguments = json.dumps({"note": text}, ensure_ascii=False)
    pieces = [arguments[i:i + 7000] for i in range(0, len(arguments), 7000)]
    wrong_last = [*pieces[:-1], pieces[-1][:-1] + " "]
    cases: list[Case] = [
        ("long fragments that add up", _tool_call_in_fragments(arguments, pieces), {}),
        ("one fragment that runs past the text kept",
         _tool_call_in_fragments(arguments, [arguments]), {}),
        ("long fragments wrong at the end", _tool_call_in_fragments(arguments, wrong_last), {}),
        ("long fragments wrong at the start",
         _tool_call_in_fragments(arguments, ["[", *pieces[1:]]), {}),
        ("fragments after their tool call", _tool_call_in_fragments(arguments, pieces, 2), {}),
    ]
    assert len(arguments) > 3 * (1 << 14)
    found = disagreements(cases, [[0], [4096]], python_verdict)
    assert not found, found[:2]
    rules = [python_verdict(body, {})["diagnostics"] for _, body, _ in cases]
    assert rules[:2] == [[], []]
    assert all(diagnostics for diagnostics in rules[2:])


def _events(examples: list[Case]) -> list[list[dict[str, Any]]]:
    streams = []
    for _, body, options in examples:
        decoder = Decoder(typed=False, **options)
        events = decoder.feed(body) + decoder.close()
        if events:
            streams.append(events)
    return streams


def test_the_encoders_write_the_same_bytes(examples: list[Case]) -> None:
    events = [event for stream in _events(examples) for event in stream]
    answer = run_driver({"encode": events})["encode"]
    assert answer == [encode_event(event).decode() for event in events]


def test_the_aggregates_are_the_same(examples: list[Case]) -> None:
    streams = _events(examples)
    answer = run_driver({"aggregate": streams})["aggregate"]
    for stream, typescript in zip(streams, answer, strict=True):
        result = aggregate(stream)
        python = {
            "output_text": result.output_text,
            "reasoning": {str(k): v for k, v in result.reasoning.items()},
            "reasoning_signatures": {str(k): v for k, v in result.reasoning_signatures.items()},
            "tool_calls": [vars(call) for call in result.tool_calls],
            "stop_reason": result.stop_reason,
            "usage": None if result.usage is None else vars(result.usage),
            "model": result.model,
            "request_id": result.request_id,
            "error": None if result.error is None else list(result.error),
            "ended": result.ended,
        }
        assert canonical(typescript) == canonical(python)


def test_the_corpus_is_not_empty_of_findings(examples: list[Case]) -> None:
    """The comparison means something: the examples carry most rules between them."""
    rules = {rule for _, body, options in examples
             for rule, _, _ in python_verdict(body, options)["diagnostics"]}
    assert len(rules) > 40

