"""The validator compiler: each keyword, rule attribution, messages, compile-time refusals,
the shape of the generated code, and differential agreement with jsonschema."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from differential import (
    DIAGNOSTICS,
    REPO,
    assert_agreement,
    compile_and_load,
    instances_for,
    sample,
)
from hypothesis import strategies as st

from llm_stream_codegen.validator_compiler import (
    SchemaCompileError,
    ValidatorRoot,
    compile_validators,
)

ROOT = "urn:test:root"
D2020 = "https://json-schema.org/draft/2020-12/schema"


def load(schema: Any, *, rule: str = "LS-DEFAULT", **others: Any) -> ModuleType:
    """Compile one schema (as urn:test:root, next to ``others`` by $id) and import it."""
    schemas = {ROOT: schema, **others}
    module, _ = compile_and_load(schemas, [ValidatorRoot("root", ROOT, rule)])
    return module


def errors_of(module: ModuleType, instance: Any) -> list[tuple[str, str, str]]:
    return [(e.rule, e.pointer, e.message) for e in module.validate_root(instance)]


# ---- each keyword: valid and invalid instances, checked against jsonschema too ------------

KEYWORD_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    # (id, schema, valid, invalid)
    ("type-integer", {"type": "integer"}, [1, -5, 1.0, 2**70, -0.0], [1.5, True, "1", None]),
    ("type-number", {"type": "number"}, [1, 1.5, -0.0, 10**400], [True, False, "1", [], None]),
    ("type-string", {"type": "string"}, ["", "é", "\U0001f600"], [1, None, b"x", ["a"]]),
    ("type-boolean", {"type": "boolean"}, [True, False], [0, 1, "true", None]),
    ("type-null", {"type": "null"}, [None], [0, False, "", [], {}]),
    ("type-array", {"type": "array"}, [[], [1, "a"]], [{}, "[]", (1, 2)]),
    ("type-object", {"type": "object"}, [{}, {"a": 1}], [[], "{}", None]),
    ("type-list", {"type": ["string", "null"]}, ["a", None], [0, False, []]),
    ("type-int-bool", {"type": ["integer", "boolean"]}, [1, True, 2.0], [1.5, None]),
    ("const-string", {"const": "1.0"}, ["1.0"], ["1", 1.0, None]),
    ("const-one", {"const": 1}, [1, 1.0], [True, "1", 2]),
    ("const-zero", {"const": 0.0}, [0, 0.0, -0.0], [False, None, ""]),
    ("const-true", {"const": True}, [True], [1, 1.0, "true"]),
    ("const-null", {"const": None}, [None], [0, False, "null"]),
    (
        "const-deep",
        {"const": {"a": [1, {"b": None}], "c": True}},
        [{"a": [1.0, {"b": None}], "c": True}, {"c": True, "a": [1, {"b": None}]}],
        [{"a": [True, {"b": None}], "c": True}, {"a": [1, {"b": None}], "c": 1}, {"a": [1]}],
    ),
    ("enum-strings", {"enum": ["a", "b"]}, ["a", "b"], ["c", ["a"], {"a": 1}, None]),
    ("enum-many", {"enum": [f"s{i}" for i in range(12)]}, ["s0", "s11"], ["s12", 0, []]),
    ("enum-mixed", {"enum": [1, "1", None]}, [1, 1.0, "1", None], [True, "2", 0]),
    (
        "enum-deep",
        {"enum": [[1], {"a": False}, 2.5]},
        [[1.0], {"a": False}, 2.5],
        [[True], {"a": 0}],
    ),
    (
        "required",
        {"required": ["a", "b"]},
        [{"a": 1, "b": None}, [], "x"],
        [{"a": 1}, {}, {"b": 1, "c": 2}],
    ),
    (
        "properties",
        {"properties": {"a": {"type": "integer"}, "b": False}},
        [{}, {"a": 1}, {"c": "x"}, 3],
        [{"a": "1"}, {"b": 1}, {"a": 1.5}],
    ),
    (
        "additionalProperties-false",
        {"properties": {"a": True}, "additionalProperties": False},
        [{}, {"a": [1]}],
        [{"b": 1}, {"a": 1, "b": 2}],
    ),
    (
        "additionalProperties-schema",
        {"properties": {"a": True}, "additionalProperties": {"type": "string"}},
        [{"a": 1, "b": "x"}],
        [{"b": 1}],
    ),
    (
        "patternProperties",
        {
            "patternProperties": {"^x-": {"type": "string"}, "[0-9]": {"minimum": 3}},
            "additionalProperties": False,
        },
        [{"x-a": "s", "1": 5, "x-1": "s"}, {}],
        [{"x-a": 1}, {"1": 2}, {"y": 1}, {"x-1": 5}],
    ),
    (
        "propertyNames",
        {"propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}},
        [{"abc": 1}, {}],
        [{"ABC": 1}, {"abcd": 1}],
    ),
    (
        "min-maxProperties",
        {"minProperties": 1, "maxProperties": 2},
        [{"a": 1}, {"a": 1, "b": 2}],
        [{}, {"a": 1, "b": 2, "c": 3}],
    ),
    (
        "dependentRequired",
        {"dependentRequired": {"a": ["b", "c"]}},
        [{}, {"b": 1}, {"a": 1, "b": 2, "c": 3}],
        [{"a": 1}, {"a": 1, "b": 2}],
    ),
    (
        "dependentSchemas",
        {"dependentSchemas": {"a": {"required": ["b"]}}},
        [{}, {"a": 1, "b": 2}],
        [{"a": 1}],
    ),
    ("items", {"items": {"type": "integer"}}, [[], [1, 2.0]], [[1, "2"], [True]]),
    (
        "prefixItems",
        {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "null"}},
        [[], [1], [1, "a"], [1, "a", None, None]],
        [["a"], [1, 2], [1, "a", 0]],
    ),
    ("items-false", {"prefixItems": [True], "items": False}, [[], [1]], [[1, 2]]),
    ("min-maxItems", {"minItems": 1, "maxItems": 2}, [[1], [1, 2]], [[], [1, 2, 3]]),
    (
        "uniqueItems",
        {"uniqueItems": True},
        [[], [1, "1", True], [[1], [True]], [{"a": 1}, {"a": True}], [0, False]],
        [[1, 1.0], ["a", "a"], [{"a": 1}, {"a": 1.0}], [[1, 2], [1, 2]], [None, None]],
    ),
    (
        "contains",
        {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3},
        [[1, 2], [1, "a", 2, 3], "not an array"],
        [[1], [1, 2, 3, 4], []],
    ),
    ("contains-default", {"contains": {"const": "x"}}, [["x"], ["a", "x"]], [[], ["a"]]),
    (
        "min-maxLength",
        {"minLength": 2, "maxLength": 3},
        ["ab", "\U0001f600\U0001f600", "é" * 3, 5],
        ["a", "abcd", "\U0001f600"],
    ),
    ("pattern", {"pattern": "[0-9]"}, ["a1", "9", 5], ["a", ""]),
    (
        "minimum-maximum",
        {"minimum": 0, "maximum": 10.5},
        [0, 10.5, 5, "x", True],
        [-1, -0.001, 10.6, 11],
    ),
    (
        "exclusive",
        {"exclusiveMinimum": 0, "exclusiveMaximum": 10},
        [0.5, 9, False],
        [0, 10, -3],
    ),
    ("multipleOf-int", {"multipleOf": 3}, [0, 3, -9, 6.0, 2**80 * 3], [1, 3.5, 2**80 + 1]),
    # jsonschema divides in floating point: 0.07 / 0.01 == 7.000000000000001, not a multiple
    ("multipleOf-float", {"multipleOf": 0.01}, [0.25, 1, 12.34], [0.005, 1.0001, 0.07]),
    (
        "allOf",
        {"allOf": [{"type": "integer"}, {"minimum": 2}]},
        [2, 3],
        [1, 2.5, "3"],
    ),
    (
        "anyOf",
        {"anyOf": [{"type": "string"}, {"minimum": 2}]},
        ["a", 3, None],
        [1, 0.5],
    ),
    (
        "oneOf",
        {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
        [1, 2.5, "x"],
        [3, 0.5],
    ),
    ("not", {"not": {"type": "string"}}, [1, None], ["a"]),
    (
        "if-then-else",
        {"if": {"minimum": 10}, "then": {"multipleOf": 2}, "else": {"maximum": 5}},
        [12, 4, "x"],
        [11, 7],
    ),
    ("if-then", {"if": {"type": "string"}, "then": {"minLength": 2}}, ["ab", 1], ["a"]),
    ("if-else", {"if": {"type": "string"}, "else": {"type": "null"}}, ["a", None], [1]),
    ("then-without-if", {"then": False, "else": False}, [1, None], []),
    ("true", True, [1, None, {}], []),
    ("false", False, [], [1, None, {}]),
    (
        "annotations",
        {
            "title": "t",
            "description": "d",
            "examples": [1],
            "$comment": "c",
            "format": "email",
            "contentEncoding": "base64",
            "contentMediaType": "application/json",
            "default": 3,
            "deprecated": True,
            "readOnly": True,
            "x-anything": {"type": "integer"},
        },
        ["not an email", 3, None],
        [],
    ),
    (
        "defs-ref",
        {
            "$schema": D2020,
            "$defs": {"pos": {"type": "integer", "minimum": 1}},
            "properties": {"a": {"$ref": "#/$defs/pos"}, "b": {"$ref": f"{ROOT}#/$defs/pos"}},
        },
        [{"a": 1, "b": 2}],
        [{"a": 0}, {"b": "x"}],
    ),
    (
        "ref-with-siblings",
        {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 2},
        ["ab"],
        ["abc", 1],
    ),
    (
        "anchor",
        {"$defs": {"x": {"$anchor": "pos", "minimum": 0}}, "items": {"$ref": "#pos"}},
        [[0, 1]],
        [[-1]],
    ),
    (
        "recursion",
        {"properties": {"v": {"type": "integer"}, "kids": {"items": {"$ref": "#"}}}},
        [{"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}],
        [{"kids": [{"kids": [{"v": "x"}]}]}],
    ),
    (
        "odd-property-names",
        {"required": ['q"{x}/~\\'], "properties": {'q"{x}/~\\': {"type": "integer"}}},
        [{'q"{x}/~\\': 1}],
        [{}, {'q"{x}/~\\': "1"}],
    ),
]


@pytest.mark.parametrize(
    ("schema", "valid", "invalid"),
    [case[1:] for case in KEYWORD_CASES],
    ids=[case[0] for case in KEYWORD_CASES],
)
def test_keyword(schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    module = load(schema)
    for instance in valid:
        assert module.is_valid_root(instance), instance
        assert module.validate_root(instance) == [], instance
    for instance in invalid:
        assert not module.is_valid_root(instance), instance
        assert module.validate_root(instance), instance
    assert_agreement({ROOT: schema}, ROOT, [*valid, *invalid])


# ---- pointers and messages ----------------------------------------------------------------

EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["v", "seq", "delta"],
    "properties": {
        "v": {"const": "1.0"},
        "seq": {"type": "integer", "minimum": 0},
        "delta": {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string"}},
            "additionalProperties": False,
        },
        "role": {"enum": ["assistant", "tool"]},
    },
}


def test_messages_name_the_pointer_and_the_problem() -> None:
    module = load(EVENT, rule="LS-X")
    assert errors_of(module, {"v": "1.1", "seq": "7", "delta": {}}) == [
        ("LS-X", "/v", '/v must be "1.0"'),
        ("LS-X", "/seq", "/seq must be an integer, got a string"),
        ("LS-X", "/delta/text", "/delta/text is required"),
    ]
    assert errors_of(module, {"v": "1.0", "seq": -1, "delta": {"text": "", "a/b": 1}}) == [
        ("LS-X", "/seq", "/seq must be >= 0, got -1"),
        ("LS-X", "/delta/a~1b", "/delta/a~1b is not allowed (unknown property)"),
    ]
    assert errors_of(module, {"v": "1.0", "seq": 0, "delta": {"text": ""}, "role": "x"}) == [
        ("LS-X", "/role", '/role must be one of "assistant", "tool"'),
    ]
    assert errors_of(module, []) == [("LS-X", "", "the value must be an object, got an array")]
    assert errors_of(module, {}) == [
        ("LS-X", "/v", "/v is required"),
        ("LS-X", "/seq", "/seq is required"),
        ("LS-X", "/delta", "/delta is required"),
    ]


def test_integer_accepts_integral_floats_and_never_bools() -> None:
    module = load(EVENT)
    base = {"v": "1.0", "delta": {"text": "hi"}}
    assert module.is_valid_root({**base, "seq": 1.0})
    assert not module.is_valid_root({**base, "seq": True})
    assert errors_of(module, {**base, "seq": True}) == [
        ("LS-DEFAULT", "/seq", "/seq must be an integer, got a boolean")
    ]


def test_pointers_through_arrays_and_refs() -> None:
    schema = {
        "$defs": {"item": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "type": "array",
        "items": {"$ref": "#/$defs/item"},
    }
    module = load(schema)
    assert errors_of(module, [{"n": 1}, {"n": "x"}, 3]) == [
        ("LS-DEFAULT", "/1/n", "/1/n must be an integer, got a string"),
        ("LS-DEFAULT", "/2", "/2 must be an object, got an integer"),
    ]


def test_a_discriminated_union_reports_the_branch_the_value_meant() -> None:
    parts = {
        "type": "array",
        "items": {
            "oneOf": [
                {
                    "type": "object",
                    "required": ["type", "text"],
                    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                },
                {
                    "type": "object",
                    "required": ["type", "url"],
                    "properties": {"type": {"const": "image"}, "url": {"type": "string"}},
                },
            ]
        },
    }
    module = load(parts)
    assert errors_of(module, [{"type": "text"}, {"type": "image", "url": 1}]) == [
        ("LS-DEFAULT", "/0/text", "/0/text is required"),
        ("LS-DEFAULT", "/1/url", "/1/url must be a string, got an integer"),
    ]
    assert errors_of(module, [{"type": "video"}]) == [
        ("LS-DEFAULT", "/0", "/0 must match exactly one of 2 alternatives"),
    ]


def test_every_error_is_reported_in_a_stable_order() -> None:
    module = load(EVENT)
    bad = {"v": 2, "seq": -1.5, "delta": {"text": 1, "x": 1, "y": 2}, "role": 3}
    first = module.validate_root(bad)
    assert first == module.validate_root(bad)
    assert len(first) == 7


# ---- rule attribution ---------------------------------------------------------------------

RULES: dict[str, Any] = {
    "x-rule": "R-ROOT",
    "type": "object",
    "required": ["a", "b", "c", "d"],
    "$defs": {
        "plain": {"type": "integer"},
        "ruled": {"type": "integer", "x-rule": "R-DEF"},
    },
    "properties": {
        "a": {"type": "string", "x-rule": "R-A"},
        "b": {"type": "object", "properties": {"c": {"type": "integer"}}},
        "c": {"$ref": "#/$defs/plain"},
        "d": {"$ref": "#/$defs/ruled"},
        "e": {"x-rule": "R-E", "$ref": "#/$defs/plain"},
        "f": {"x-rule": "R-F", "$ref": "#/$defs/ruled"},
        "g": {"allOf": [{"x-rule": "R-G0", "minimum": 0}, {"maximum": 10}]},
    },
}


def test_rules_come_from_the_node_or_its_nearest_ancestor() -> None:
    module = load(RULES, rule="R-DEFAULT")
    bad = {"a": 1, "b": {"c": "x"}, "c": "x", "d": "x", "e": "x", "f": "x", "g": -20}
    assert errors_of(module, bad) == [
        ("R-A", "/a", "/a must be a string, got an integer"),
        ("R-ROOT", "/b/c", "/b/c must be an integer, got a string"),
        ("R-ROOT", "/c", "/c must be an integer, got a string"),  # plain inherits from the use
        ("R-DEF", "/d", "/d must be an integer, got a string"),  # the target's own rule
        ("R-E", "/e", "/e must be an integer, got a string"),  # the same helper, another rule
        ("R-DEF", "/f", "/f must be an integer, got a string"),  # target's rule wins inside it
        ("R-G0", "/g", "/g must be >= 0, got -20"),
    ]
    assert module.validate_root({"a": "", "b": {}, "c": 1, "d": 1, "g": 11}) == [
        module.SchemaError("R-ROOT", "/g", "/g must be <= 10, got 11")
    ]


def test_a_missing_property_takes_the_rule_of_its_subschema() -> None:
    module = load(RULES, rule="R-DEFAULT")
    assert errors_of(module, {}) == [
        ("R-A", "/a", "/a is required"),
        ("R-ROOT", "/b", "/b is required"),
        ("R-ROOT", "/c", "/c is required"),
        ("R-ROOT", "/d", "/d is required"),  # the property's subschema ($ref only) has none
    ]


def test_the_default_rule_applies_where_no_node_has_one() -> None:
    module = load({"type": "object", "properties": {"a": {"type": "integer"}}}, rule="R-D")
    assert errors_of(module, {"a": None}) == [
        ("R-D", "/a", "/a must be an integer, got null"),
    ]


def test_refs_across_schemas_keep_their_rules() -> None:
    env = {
        "$id": "urn:test:env",
        "x-rule": "R-ENV",
        "type": "object",
        "required": ["v"],
        "properties": {"v": {"const": "1.0", "x-rule": "R-V"}},
    }
    event = {
        "$id": ROOT,
        "allOf": [{"$ref": "urn:test:env"}],
        "required": ["n"],
        "properties": {"n": {"type": "integer"}},
    }
    module = load(event, rule="R-EVENT", **{"urn:test:env": env})
    assert errors_of(module, {"n": "x"}) == [
        ("R-EVENT", "/n", "/n must be an integer, got a string"),
        ("R-V", "/v", "/v is required"),
    ]


# ---- the generated code ---------------------------------------------------------------------


def test_a_ref_target_compiles_to_one_shared_helper() -> None:
    schema = {
        "$defs": {"pos": {"type": "integer", "minimum": 1}},
        "properties": {k: {"$ref": "#/$defs/pos"} for k in "abcdef"},
    }
    source = compile_validators({ROOT: schema}, [ValidatorRoot("root", ROOT, "R")])
    assert source.count("def _is_valid_root_pos(") == 1
    assert source.count("def _validate_root_pos(") == 1
    assert source.count("_is_valid_root_pos(v") == 6


def test_output_is_deterministic() -> None:
    schemas = {ROOT: RULES, "urn:test:other": {"$id": "urn:test:other", "enum": ["b", "a"]}}
    roots = [ValidatorRoot("root", ROOT, "R"), ValidatorRoot("other", "urn:test:other", "R")]
    first = compile_validators(schemas, roots)
    assert first == compile_validators(dict(reversed(list(schemas.items()))), roots)
    assert first == compile_validators(schemas, roots)


def test_the_module_imports_only_the_standard_library_and_diagnostics() -> None:
    source = compile_validators(DIFFERENTIAL_SCHEMAS, DIFFERENTIAL_ROOTS)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            assert (node.module, [a.name for a in node.names]) == ("diagnostics", ["SchemaError"])
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = (
                [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            )
            for name in names:
                assert name is not None and name.split(".")[0] in sys.stdlib_module_names


def test_is_valid_keeps_nothing_on_success() -> None:
    module = load(EVENT | {"properties": {**EVENT["properties"], "s": {"pattern": "^[a-z]+$"}}})
    event = {"v": "1.0", "seq": 17, "delta": {"text": "hi"}, "role": "assistant", "s": "abc"}
    for _ in range(10):
        assert module.is_valid_root(event)
    before = sys.getallocatedblocks()
    for _ in range(10_000):
        module.is_valid_root(event)
    assert sys.getallocatedblocks() - before < 10


def test_generated_code_is_ruff_and_mypy_strict_clean(tmp_path: Path) -> None:
    source = compile_validators(DIFFERENTIAL_SCHEMAS, DIFFERENTIAL_ROOTS)
    package = tmp_path / "generated_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(DIAGNOSTICS, package / "diagnostics.py")
    (package / "validators.py").write_text(source)
    ruff_bin = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff_bin is not None, "ruff is a dev dependency"
    ruff = subprocess.run(
        [
            ruff_bin,
            "check",
            "--no-cache",
            "--config",
            str(REPO / "pyproject.toml"),
            str(package / "validators.py"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    mypy = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-version",
            "3.11",
            "--config-file",
            "/dev/null",
            str(package / "validators.py"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr


# ---- refusals at compile time ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        (
            {"properties": {"a": {"unevaluatedProperties": False}}},
            "/properties/a",
            "unevaluatedProperties",
        ),
        ({"items": {"$dynamicRef": "#x"}}, "/items", "$dynamicRef"),
        ({"requried": ["a"]}, "", "requried"),
        ({"dependencies": {"a": ["b"]}}, "", "dependencies"),
        ({"pattern": "(unclosed"}, "", "not a regular expression"),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "", "not draft 2020-12"),
        ({"$ref": "urn:test:nowhere"}, "", "does not resolve"),
        ({"$ref": "#/$defs/missing"}, "", "does not resolve"),
        ({"$ref": "other.json"}, "", "not hierarchical"),
        ({"type": "int"}, "", "type must be"),
        ({"minLength": -1}, "", "non-negative integer"),
        ({"multipleOf": 0}, "", "greater than 0"),
        ({"allOf": []}, "", "non-empty array"),
        ({"x-rule": 5}, "", "x-rule"),
        ({"contains": {"bogus": 1}, "minContains": 0}, "/contains", "bogus"),
        ({"if": {"properties": {"a": {"bogus": 1}}}}, "/if/properties/a", "bogus"),
        ({"anyOf": [{"type": "string"}, {"not": {"unevaluatedItems": False}}]}, "/anyOf/1/not", ""),
    ],
)
def test_what_it_cannot_compile_is_an_error_naming_schema_and_node(
    schema: Any, pointer: str, words: str
) -> None:
    with pytest.raises(SchemaCompileError) as caught:
        compile_validators({ROOT: schema}, [ValidatorRoot("root", ROOT, "R")])
    assert caught.value.schema_id == ROOT
    assert caught.value.pointer == pointer
    assert words in str(caught.value) and f"{ROOT}#{pointer}" in str(caught.value)


def test_a_root_must_name_a_schema_and_a_python_identifier() -> None:
    with pytest.raises(SchemaCompileError):
        compile_validators({ROOT: {}}, [ValidatorRoot("root", "urn:test:nowhere", "R")])
    with pytest.raises(ValueError, match="identifier"):
        compile_validators({ROOT: {}}, [ValidatorRoot("content.delta", ROOT, "R")])


# ---- differential agreement with jsonschema ----------------------------------------------------

U = "urn:test:"
DIFFERENTIAL_SCHEMAS: dict[str, Any] = {
    U + "types": {
        "$id": U + "types",
        "type": "object",
        "properties": {
            "i": {"type": "integer"},
            "n": {"type": "number"},
            "s": {"type": "string"},
            "b": {"type": "boolean"},
            "z": {"type": "null"},
            "a": {"type": "array"},
            "o": {"type": "object"},
            "m": {"type": ["string", "null"]},
            "mi": {"type": ["integer", "boolean"]},
        },
    },
    U + "consts": {
        "$id": U + "consts",
        "type": "object",
        "properties": {
            "s": {"const": "1.0"},
            "one": {"const": 1},
            "zero": {"const": 0.0},
            "t": {"const": True},
            "nul": {"const": None},
            "arr": {"const": [1, "a", True]},
            "obj": {"const": {"a": [1, {"b": None}]}},
            "e1": {"enum": ["a", "b", "c"]},
            "e2": {"enum": [1, "1", True, None]},
            "e3": {"enum": [[1], {"a": 1}, 0, False, "x", 2.5]},
        },
    },
    U + "objects": {
        "$id": U + "objects",
        "type": "object",
        "x-rule": "LS-OBJ",
        "required": ["id", "kind"],
        "properties": {
            "id": {"type": "string", "minLength": 1, "x-rule": "LS-ID"},
            "kind": {"const": "k"},
            "n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
        },
        "patternProperties": {"^x-": {"type": "string"}, "^n_[0-9]+$": {"type": "number"}},
        "additionalProperties": False,
        "propertyNames": {"maxLength": 8},
        "minProperties": 2,
        "maxProperties": 5,
        "dependentRequired": {"n": ["id", "x-extra"]},
    },
    U + "open": {
        "$id": U + "open",
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": {"type": "string", "maxLength": 3},
        "dependentSchemas": {"a": {"required": ["b"]}},
    },
    U + "arrays": {
        "$id": U + "arrays",
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": {"type": "boolean"},
        "minItems": 1,
        "maxItems": 4,
    },
    U + "unique": {"$id": U + "unique", "type": "array", "uniqueItems": True, "maxItems": 6},
    U + "contains": {
        "$id": U + "contains",
        "contains": {"type": "integer", "minimum": 5},
        "minContains": 2,
        "maxContains": 3,
    },
    U + "strings": {
        "$id": U + "strings",
        "type": "string",
        "minLength": 2,
        "maxLength": 5,
        "pattern": "[0-9]",
    },
    U + "numbers": {
        "$id": U + "numbers",
        "type": "number",
        "minimum": -5,
        "maximum": 100.5,
        "exclusiveMinimum": -5.5,
        "multipleOf": 0.5,
    },
    U + "untyped": {
        "$id": U + "untyped",
        "minimum": 2,
        "maxLength": 2,
        "required": ["a"],
        "minItems": 1,
        "multipleOf": 2,
    },
    U + "combinators": {
        "$id": U + "combinators",
        "anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}],
        "not": {"const": "forbidden"},
        "allOf": [{"not": {"const": 7}}],
    },
    U + "oneof": {
        "$id": U + "oneof",
        "oneOf": [
            {"type": "integer"},
            {"type": "number", "minimum": 2},
            {"type": "object", "properties": {"type": {"const": "a"}}, "required": ["type"]},
        ],
    },
    U + "conditional": {
        "$id": U + "conditional",
        "type": "object",
        "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        "then": {"required": ["a"]},
        "else": {"required": ["b"]},
    },
    U + "parts": {
        "$id": U + "parts",
        "type": "array",
        "items": {
            "oneOf": [
                {
                    "type": "object",
                    "required": ["type", "text"],
                    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "required": ["type", "url"],
                    "properties": {
                        "type": {"const": "image"},
                        "url": {"type": "string", "format": "uri"},
                    },
                    "additionalProperties": False,
                },
            ]
        },
    },
    U + "tree": {
        "$id": U + "tree",
        "type": "object",
        "required": ["v"],
        "properties": {
            "v": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
    },
    U + "defs": {
        "$id": U + "defs",
        "$schema": D2020,
        "$defs": {
            "pos": {"type": "integer", "minimum": 1, "x-rule": "LS-POS"},
            "name": {"$ref": U + "strings"},
        },
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/pos"},
            "b": {"$ref": U + "defs#/$defs/pos"},
            "c": {"$ref": "#/$defs/name"},
        },
    },
    U + "embedded": {
        "$id": U + "embedded",
        "properties": {
            "e": {
                "$id": U + "inner",
                "$defs": {"q": {"type": "string"}},
                "items": {"$ref": "#/$defs/q"},
            }
        },
    },
    U + "envelope": {
        "$id": U + "envelope",
        "x-rule": "LS-ENV",
        "type": "object",
        "required": ["v", "seq", "type"],
        "properties": {
            "v": {"type": "string", "const": "1.0"},
            "seq": {"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 2**53 - 1}]},
            "type": {"type": "string", "pattern": "^[a-z]+(\\.[a-z_]+)*$"},
        },
    },
    U + "content.delta": {
        "$id": U + "content.delta",
        "allOf": [{"$ref": U + "envelope"}],
        "type": "object",
        "required": ["type", "index", "role", "delta"],
        "properties": {
            "type": {"const": "content.delta"},
            "index": {"type": "integer", "minimum": 0},
            "role": {"enum": ["assistant", "tool"]},
            "delta": {
                "type": "object",
                "required": ["text"],
                "properties": {"text": {"type": "string"}},
                "additionalProperties": False,
            },
        },
    },
}
DIFFERENTIAL_ROOTS = [
    ValidatorRoot(sid.removeprefix(U).replace(".", "_"), sid, "LS-DEFAULT")
    for sid in DIFFERENTIAL_SCHEMAS
]
TREES = st.recursive(
    st.builds(lambda v: {"v": v}, st.integers()),
    lambda kids: st.builds(lambda v, c: {"v": v, "children": c}, st.integers(), st.lists(kids)),
    max_leaves=8,
)
SEEDS: dict[str, list[Any]] = {
    # hypothesis-jsonschema cannot generate recursive schemas or 2020-12 prefixItems
    U + "tree": sample(TREES, 40),
    U + "arrays": [[1], [1, "a"], [1, "a", True, False]],
    U + "embedded": [{"e": ["a", "b"]}, {"e": []}],
}


@pytest.mark.deep
@pytest.mark.parametrize("root_id", list(DIFFERENTIAL_SCHEMAS))
def test_compiled_validators_agree_with_jsonschema(root_id: str) -> None:
    instances = instances_for(
        DIFFERENTIAL_SCHEMAS, root_id, valid=30, noise=400, seeds=SEEDS.get(root_id, ())
    )
    assert len(instances) >= 1000
    valid, invalid = assert_agreement(DIFFERENTIAL_SCHEMAS, root_id, instances)
    assert valid and invalid
