"""The TypeScript validators against the Python ones, on the same instances.

For every structure of the spec, for each keyword case of the compiler's own tests and for its
differential schemas, the two must find the same errors: the same rules and pointers in the same
order, and the same messages wherever the instance reads the same in both languages (JSON.parse
makes 2.0 the integer 2, so a message that names the type of such a value may differ). Patterns
are held to Python's `re` on the inputs where the two dialects differ, and what has no ECMAScript
counterpart is refused when the validators are generated.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from differential import instances_for
from node_package import (
    ROOT,
    as_javascript_reads_it,
    reads_alike,
    requires_node,
    run_driver,
)
from test_validator_compiler import DIFFERENTIAL_SCHEMAS, KEYWORD_CASES, SEEDS
from test_validators_differential import EVENT_URN, ROOTS, SCHEMAS, seeds

from llm_stream_codegen.ts_literals import pascal
from llm_stream_codegen.ts_validators import compile_typescript_validators
from llm_stream_codegen.validator_compiler import (
    SchemaCompileError,
    ValidatorRoot,
    compile_validators,
)

pytestmark = requires_node

STATIC = ROOT / "codegen" / "templates" / "typescript" / "static"
RUNTIME = ("schema_runtime.ts", "jsontext.ts", "diagnostics.ts")
PER_ROOT = 600
"""Instances per structure of the spec, sampled from the corpus: the Python validators' own
differential tests generate the large corpora; this one needs the variety, not the volume."""


def json_instance(value: Any) -> bool:
    """Whether a value survives JSON text unchanged (tuples, bytes and NaN do not)."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return repr(json.loads(text)) == repr(value)


def typescript_errors(
    schemas: dict[str, Any], roots: list[ValidatorRoot], instances: dict[str, list[Any]],
    folder: Path,
) -> dict[str, list[dict[str, Any]]]:
    """Each root's answers on its instances, from the TypeScript validators of `schemas`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME:
        shutil.copy(STATIC / name, folder / name)
    (folder / "validators.ts").write_text(compile_typescript_validators(schemas, roots))
    (folder / "index.ts").write_text('export * from "./validators.js";\n')
    cases = [{"function": f"validate{pascal(root.name)}", "instances": instances[root.name]}
             for root in roots]
    answer = run_driver({"validate": {"module": "validators.js", "cases": cases}}, folder)
    return {root.name: found for root, found in zip(roots, answer["validate"], strict=True)}


def compare(module: Any, roots: list[ValidatorRoot], instances: dict[str, list[Any]],
            answers: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The disagreements, on the instances JSON.parse reads as the same numbers (integers past
    2^53 that a double cannot hold are another value there, and may be judged otherwise)."""
    problems = []
    for root in roots:
        validate = getattr(module, f"validate_{root.name}")
        for instance, typescript in zip(instances[root.name], answers[root.name], strict=True):
            if as_javascript_reads_it(instance) != instance:
                continue
            python = [[e.rule, e.pointer, e.message] for e in validate(instance)]
            same_reading = reads_alike(instance)
            got = typescript["errors"] if same_reading else [e[:2] for e in typescript["errors"]]
            wanted = python if same_reading else [e[:2] for e in python]
            if got != wanted or typescript["valid"] != (not python):
                problems.append(f"{root.name} on {instance!r}: Python {wanted}, TypeScript {got}")
    return problems


def python_module(schemas: dict[str, Any], roots: list[ValidatorRoot]) -> Any:
    from differential import load_compiled

    return load_compiled(compile_validators(schemas, roots))


def test_the_spec_validators_agree(tmp_path: Path) -> None:
    import llm_stream.validators as shipped

    instances = {}
    for root in ROOTS:
        generated = 4 if root.schema_id.startswith(EVENT_URN) else 0
        corpus = [i for i in instances_for(SCHEMAS, root.schema_id, valid=generated,
                                           seeds=seeds(root.schema_id)) if json_instance(i)]
        instances[root.name] = random.Random(root.name).sample(corpus, min(PER_ROOT, len(corpus)))
    answers = typescript_errors(SCHEMAS, ROOTS, instances, tmp_path)
    problems = compare(shipped, ROOTS, instances, answers)
    assert not problems, f"{len(problems)} disagreements, the first: {problems[:3]}"
    assert sum(not a["valid"] for found in answers.values() for a in found) > 500


def _renamed(schema: Any, schema_id: str) -> Any:
    return json.loads(json.dumps(schema).replace("urn:test:root", schema_id))


def test_every_keyword_case_agrees(tmp_path: Path) -> None:
    schemas, roots, instances = {}, [], {}
    for i, (_, schema, valid, invalid) in enumerate(KEYWORD_CASES):
        schema_id = f"urn:test:case-{i}"
        schemas[schema_id] = _renamed(schema, schema_id)
        roots.append(ValidatorRoot(f"case_{i}", schema_id, "LS-DEFAULT"))
        instances[f"case_{i}"] = [x for x in [*valid, *invalid] if json_instance(x)]
    answers = typescript_errors(schemas, roots, instances, tmp_path)
    problems = compare(python_module(schemas, roots), roots, instances, answers)
    assert not problems, f"{len(problems)} disagreements, the first: {problems[:3]}"


def test_the_differential_schemas_agree(tmp_path: Path) -> None:
    roots = [ValidatorRoot(f"schema_{i}", schema_id, "LS-DEFAULT")
             for i, schema_id in enumerate(DIFFERENTIAL_SCHEMAS)]
    instances = {
        root.name: [x for x in instances_for(DIFFERENTIAL_SCHEMAS, root.schema_id, valid=12,
                                             noise=100, seeds=SEEDS.get(root.schema_id, ()))
                    if json_instance(x)]
        for root in roots
    }
    answers = typescript_errors(DIFFERENTIAL_SCHEMAS, roots, instances, tmp_path)
    problems = compare(python_module(DIFFERENTIAL_SCHEMAS, roots), roots, instances, answers)
    assert not problems, f"{len(problems)} disagreements, the first: {problems[:3]}"


PATTERNS = [
    ("^a$", ["a", "a\n", "a\n\n", "\na", "ab"]),
    ("a.b", ["a\rb", "a\nb", "a\u2028b", "axb"]),
    ("x{2", ["x{2", "xx"]),
    ("a{,2}b", ["b", "aab", "a{,2}b"]),
    ("[]a]+", ["]", "a]", "b"]),
    (r"\-\#\:", ["-#:", "#"]),
    ("}{", ["}{", "x"]),
    ("(?P<word>[a-z]+)-(?=[0-9])", ["ab-1", "ab-", "-"]),
    ("^\U0001f600.$", ["\U0001f600\U0001f600", "\U0001f600a", "\U0001f600"]),
    (r"[\u00e9-\u00ea]", ["\u00e9", "e"]),
]


def test_patterns_match_what_python_matches(tmp_path: Path) -> None:
    schemas, roots, instances = {}, [], {}
    for i, (pattern, strings) in enumerate(PATTERNS):
        schemas[f"urn:test:pattern-{i}"] = {"pattern": pattern}
        roots.append(ValidatorRoot(f"pattern_{i}", f"urn:test:pattern-{i}", "LS-DEFAULT"))
        instances[f"pattern_{i}"] = strings
    answers = typescript_errors(schemas, roots, instances, tmp_path)
    problems = compare(python_module(schemas, roots), roots, instances, answers)
    assert not problems, problems


@pytest.mark.parametrize(("pattern", "words"), [
    (r"^\d+$", "\\d means a Unicode class"),
    (r"\bword", "\\b means a Unicode class"),
    ("(?i)abc", "not supported"),
    (r"a\Z", "no ECMAScript counterpart"),
    ("a*+", "possessive"),
    (r"(a)\1", "back references"),
])
def test_a_pattern_without_an_ecmascript_counterpart_is_refused(pattern: str, words: str) -> None:
    schema = {"properties": {"a": {"pattern": pattern}}}
    with pytest.raises(SchemaCompileError) as caught:
        compile_typescript_validators({"urn:test:x": schema},
                                      [ValidatorRoot("x", "urn:test:x", "R")])
    assert caught.value.pointer == "/properties/a" and words in str(caught.value)
