"""Validator benchmark: the compiled validators against jsonschema, jsonschema-rs, fastjsonschema.

    .venv/bin/python bench/bench_validators.py

``compare_validators(schemas, root_id, instances)`` compiles ``schemas`` (a mapping of $id to
schema document) with llm_stream_codegen.validator_compiler, then prints, for each engine, the
microseconds per instance (the mean over ``instances``), the throughput, and the ratio of its time
to jsonschema's; and whether it agrees with jsonschema on every instance. Engines: the compiled
``is_valid`` and ``validate``, jsonschema's Draft202012Validator.is_valid (with a referencing
registry of every schema), jsonschema-rs (with its Registry) and fastjsonschema (with a handler for
the schemas' URI scheme), each only if installed and able to compile the schema. ``extra`` adds
engines (the pydantic models, say) as name -> callable(instance). Called with no arguments it
runs on a stand-in content.delta schema.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polite

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from differential import load_compiled, oracle  # noqa: E402

from llm_stream_codegen.validator_compiler import ValidatorRoot, compile_validators  # noqa: E402

Schemas = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Row:
    engine: str
    microseconds: float | None  # per instance; None when the engine cannot run the schema
    note: str = ""

    @property
    def per_second(self) -> float | None:
        return None if not self.microseconds else 1e6 / self.microseconds


def per_instance(check: Callable[[Any], object], instances: Sequence[Any], seconds: float) -> float:
    """Microseconds per instance: the best of five runs, each looping over all instances."""
    rounds = 1
    while True:  # calibrate: enough rounds to last about seconds / 5
        start = time.perf_counter()
        for _ in range(rounds):
            for instance in instances:
                check(instance)
        elapsed = time.perf_counter() - start
        if elapsed > seconds / 5:
            break
        rounds *= 2 if elapsed == 0 else max(2, min(10, int(seconds / 5 / elapsed) + 1))
    best = elapsed
    for _ in range(4):
        start = time.perf_counter()
        for _ in range(rounds):
            for instance in instances:
                check(instance)
        best = min(best, time.perf_counter() - start)
    return best / rounds / len(instances) * 1e6


def engines(schemas: Schemas, root_id: str) -> dict[str, Callable[[Any], object] | str]:
    """Each engine's is-valid callable, or why it cannot run this schema."""
    found: dict[str, Callable[[Any], object] | str] = {}
    source = compile_validators(schemas, [ValidatorRoot("root", root_id, "BENCH")])
    module = load_compiled(source)
    found["compiled is_valid"] = module.is_valid_root
    found["compiled validate"] = module.validate_root
    found["jsonschema"] = oracle(schemas, root_id).is_valid
    try:
        import jsonschema_rs

        registry = jsonschema_rs.Registry([(uri, dict(doc)) for uri, doc in schemas.items()])
        found["jsonschema-rs"] = jsonschema_rs.validator_for(
            dict(schemas[root_id]), registry=registry
        ).is_valid
    except ImportError:
        found["jsonschema-rs"] = "not installed"
    except Exception as error:  # any failure means: cannot handle it
        found["jsonschema-rs"] = f"cannot compile the schema: {error}"
    try:
        import fastjsonschema

        schemes = {urlsplit(uri).scheme for uri in schemas}
        handlers = {scheme: (lambda uri: schemas[uri.partition("#")[0]]) for scheme in schemes}
        validate = fastjsonschema.compile(dict(schemas[root_id]), handlers=handlers)

        def fast_is_valid(instance: Any) -> bool:
            try:
                validate(instance)
            except fastjsonschema.JsonSchemaException:
                return False
            return True

        found["fastjsonschema"] = fast_is_valid
    except ImportError:
        found["fastjsonschema"] = "not installed"
    except Exception as error:
        found["fastjsonschema"] = f"cannot compile the schema: {type(error).__name__}: {error}"
    return found


def compare_validators(
    schemas: Schemas | None = None,
    root_id: str | None = None,
    instances: Sequence[Any] | None = None,
    *,
    extra: Mapping[str, Callable[[Any], object]] | None = None,
    seconds: float = 1.0,
    title: str | None = None,
) -> list[Row]:
    """Time every engine on ``instances`` against ``root_id`` and print the table."""
    if schemas is None or root_id is None or instances is None:
        schemas, root_id, instances = STAND_IN, STAND_IN_ROOT, STAND_IN_INSTANCES
        title = title or "stand-in content.delta schema"
    candidates = {**engines(schemas, root_id), **(extra or {})}
    reference = oracle(schemas, root_id)
    expected = [reference.is_valid(instance) for instance in instances]
    rows: list[Row] = []
    for name, check in candidates.items():
        if isinstance(check, str):
            rows.append(Row(name, None, check))
            continue
        try:
            results = [check(instance) for instance in instances]
        except Exception as error:
            rows.append(Row(name, None, f"fails: {type(error).__name__}: {error}"))
            continue
        verdicts = [not r if name == "compiled validate" else bool(r) for r in results]
        disagree = sum(v != e for v, e in zip(verdicts, expected, strict=True))
        note = "agrees with jsonschema" if not disagree else f"DISAGREES on {disagree}"
        rows.append(Row(name, per_instance(check, instances, seconds), note))
    print_table(rows, title or root_id, len(instances), sum(expected))
    return rows


def print_table(rows: Sequence[Row], title: str, count: int, valid: int) -> None:
    base = next((r.microseconds for r in rows if r.engine == "jsonschema"), None)
    print(f"\nvalidators: {title} ({count} instances, {valid} valid)")
    print(f"  {'engine':<20} {'us/instance':>12} {'instances/s':>13} {'/jsonschema':>12}  note")
    for row in rows:
        if row.microseconds is None:
            print(f"  {row.engine:<20} {'-':>12} {'-':>13} {'-':>12}  {row.note}")
            continue
        ratio = f"{row.microseconds / base:.4f}" if base else "-"
        print(
            f"  {row.engine:<20} {row.microseconds:>12.3f} {row.per_second:>13,.0f} "
            f"{ratio:>12}  {row.note}"
        )


# ---- the stand-in: an envelope and a content.delta event, as the draft shows them ---------

ENVELOPE = "urn:ietf:params:llm-stream:event-envelope:1.0"
STAND_IN_ROOT = "urn:ietf:params:llm-stream:event:content.delta:1.0"
STAND_IN: dict[str, dict[str, Any]] = {
    ENVELOPE: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ENVELOPE,
        "x-rule": "LS-ENV-3",
        "type": "object",
        "required": ["v", "seq", "type"],
        "properties": {
            "v": {"type": "string", "const": "1.0", "x-rule": "LS-ENV-1"},
            "seq": {"type": "integer", "minimum": 0, "maximum": 2**53 - 1, "x-rule": "LS-ENV-2"},
            "type": {"type": "string", "minLength": 1},
        },
    },
    STAND_IN_ROOT: {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": STAND_IN_ROOT,
        "x-rule": "LS-DELTA-1",
        "allOf": [{"$ref": ENVELOPE}],
        "type": "object",
        "required": ["type", "index", "role", "delta"],
        "properties": {
            "type": {"const": "content.delta"},
            "index": {"type": "integer", "minimum": 0},
            "role": {"const": "assistant"},
            "delta": {
                "type": "object",
                "required": ["text"],
                "properties": {"text": {"type": "string"}},
                "x-rule": "LS-DELTA-2",
            },
        },
    },
}
STAND_IN_INSTANCES: list[Any] = [
    {
        "v": "1.0",
        "seq": 17,
        "type": "content.delta",
        "index": 0,
        "role": "assistant",
        "delta": {"text": "hi"},
    }
]


def main() -> None:
    """Both tables: the shipped schema's valid events, then the stand-in's invalid one."""
    compare_validators()
    invalid = {**STAND_IN_INSTANCES[0], "seq": "17", "delta": {}}
    compare_validators(
        STAND_IN,
        STAND_IN_ROOT,
        [invalid],
        title="stand-in content.delta schema, an invalid event",
    )


if __name__ == "__main__":
    sys.exit(polite.run(main))
