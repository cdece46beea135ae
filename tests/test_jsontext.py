"""The bindings' JSON parser reads exactly what the standard library reads, refusing what JSON
refuses (NaN, Infinity, unpaired surrogates) and keeping integers of any size exact."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from depth import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_stream.jsontext import (
    MAX_DEPTH,
    MAX_DIGITS,
    JSONLimitError,
    duplicate_name,
    duplicate_names,
    loads,
    member_bound,
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**80), 2**80) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def reference(text: str) -> Any:
    """The standard library, refusing NaN and Infinity as JSON does."""
    def refuse(name: str) -> None:
        raise ValueError(name)

    return json.loads(text, parse_constant=refuse)


@settings(max_examples=examples(250))
@given(value=JSON_VALUES, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]))
def test_reads_what_the_standard_library_reads(value: Any, ascii_only: bool,
                                               indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    expected = reference(text)
    for given_text in (text, text.encode()):
        parsed = loads(given_text)
        assert parsed == expected
        assert json.dumps(parsed) == json.dumps(expected)  # same types: no int became a float


@pytest.mark.parametrize("text", [
    "NaN", "[Infinity]", '{"a": -Infinity}', '"\\ud800"', '["\\udc00x"]', "[1,]", "{'a': 1}",
    "01", "+1", ".5", "1.", '"\\x41"', '"a\tb"', "[1] 2", "", "tru", "\ufeff{}",
])
def test_refuses_what_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        loads(text)
    with pytest.raises(ValueError):
        loads(text.encode("utf-8", "surrogatepass"))


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(ValueError):
        loads(b'"\xff"')


def nested(depth: int, inner: str = "1") -> str:
    """An object holding arrays, `depth` deep in all."""
    return '{"a":' + "[" * (depth - 1) + inner + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200, 202, 600, 100_000])
@pytest.mark.parametrize("inner", ["1", "", "[1"], ids=["value", "empty", "broken"])
def test_nesting_past_the_limit_is_refused_with_its_rule(depth: int, inner: str) -> None:
    """The same limit whatever the parser underneath would take (pydantic-core takes about 200
    levels, the standard library the interpreter's recursion limit), JSON or not."""
    with pytest.raises(JSONLimitError) as refused:
        loads(nested(depth, inner))
    assert refused.value.rule == "LS-LIMIT-3"


def test_nesting_up_to_the_limit_is_json_whatever_the_callers_stack() -> None:
    text = nested(MAX_DEPTH)
    assert loads(text) == reference(text)

    def deep_caller(frames: int) -> Any:
        return loads(text) if frames == 0 else deep_caller(frames - 1)

    assert deep_caller(sys.getrecursionlimit() - 60) == reference(text)
    assert loads(nested(MAX_DEPTH, '"[[[[' + "[" * 200 + '"')) is not None  # brackets in text


@pytest.mark.parametrize("unclosed", [
    '{"a":"b","c":"' + "[" * (2 * MAX_DEPTH + 1),  # a string never closed
    '{"a":"b\\"' + "[" * (2 * MAX_DEPTH + 1),  # its last quote escaped
    '{"a":"b","c":"' + "[" * (2 * MAX_DEPTH + 1) + "\\",  # ending in a backslash
    '{"a":"b","c":"' + "7" * (MAX_DIGITS + 1),  # digits, not brackets
])
def test_an_unclosed_string_runs_to_the_end_of_the_text(unclosed: str) -> None:
    """Its brackets and digits are text, not nesting or a number: the text is refused as no
    JSON, never as past a limit (the TypeScript bindings read it alike)."""
    with pytest.raises(ValueError) as refused:
        loads(unclosed)
    assert not isinstance(refused.value, JSONLimitError)


def test_a_number_past_the_digit_limit_is_refused_with_its_rule() -> None:
    digits = "7" * MAX_DIGITS
    assert loads(f"[{digits}]") == [int(digits)]
    assert loads(f'["{digits}7"]') == [digits + "7"]  # a string may be longer
    assert loads(f"[0.{digits}7]") is not None  # so may a fraction
    for exponent in (f"1e{digits}7", f"1e+{digits}7", f"1E-{digits}7"):  # and an exponent
        assert loads(f"[{exponent}]") is not None
        with pytest.raises(ValueError) as refused:  # not JSON for another reason: that one
            loads(f'[{exponent}, "\\ud800"]')
        assert not isinstance(refused.value, JSONLimitError)
    for text in (f"[{digits}7]", f"[-{digits}7]", f"[{digits}7.0]", f"[{digits}7e0]"):
        with pytest.raises(JSONLimitError) as refused:
            loads(text)
        assert refused.value.rule == "LS-LIMIT-4"


@settings(max_examples=examples(300))
@given(value=JSON_VALUES, ascii_only=st.booleans(), data=st.data())
def test_a_member_name_written_twice_is_found(value: Any, ascii_only: bool,
                                              data: st.DataObject) -> None:
    """No false alarm on any JSON text, and every object given a name twice is caught, however
    its quotes are escaped (as \\" or as \\u0022)."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert not duplicate_names(text, loads(text))
    name = data.draw(st.sampled_from(['a', 'q"q', "\u00e9"]))
    key = json.dumps(name, ensure_ascii=ascii_only)
    inner = json.dumps(value, ensure_ascii=ascii_only)
    for written_key in (key, key.replace('\\"', "\\u0022")):
        written = f'{{{written_key}: 1, "x": {inner}, {written_key}: {inner}}}'
        assert duplicate_names(written, loads(written))
        assert duplicate_name(written) == name


WRITTEN_STRINGS = st.text(alphabet=st.sampled_from('\\":ab\u00e9 '), max_size=8)
"""Strings of backslashes, quotes and colons, the characters `member_bound` counts."""


@settings(max_examples=examples(300))
@given(value=st.recursive(
           WRITTEN_STRINGS,
           lambda children: st.lists(children, max_size=4)
           | st.dictionaries(WRITTEN_STRINGS, children, max_size=4),
           max_leaves=20),
       ascii_only=st.booleans(),
       separators=st.sampled_from([(",", ":"), (", ", ": "), (",", " : "), (",\n", "\t:")]))
def test_the_member_bound_is_never_below_the_members_written(
        value: Any, ascii_only: bool, separators: tuple[str, str]) -> None:
    """However the strings escape their quotes and backslashes, and whatever the white space
    around the colons, the bound the decoder trusts to rule out a name written twice holds."""
    text = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
    members = 0

    def count(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal members
        members += len(pairs)
        return dict(pairs)

    json.loads(text, object_pairs_hook=count)
    assert member_bound(text) >= members
    assert member_bound(text.encode()) >= members


def test_the_member_bound_leaves_out_the_colons_of_a_tool_calls_arguments() -> None:
    text = ('{"v":"1.0","seq":1,"type":"tool.call","index":0,"id":"c","name":"f",'
            '"arguments":"{\\"q\\":\\"a \\\\\\"b\\\\\\":\\",\\"k\\\\\\\\\\":1}"}')
    assert len(json.loads(json.loads(text)["arguments"])) == 2
    assert member_bound(text) == 7


def test_numbers_at_the_edges() -> None:
    assert loads("1e999") == float("inf")  # a number JSON allows; too large for a double
    assert loads("-0") == 0 and type(loads("-0")) is int
    assert loads("18446744073709551616") == 2**64
    assert loads("-9223372036854775809") == -(2**63) - 1
    assert loads('{"a": 1, "a": 2}') == {"a": 2}  # the last member wins; the decoder refuses it
