"""The bindings' JSON parser reads exactly what the standard library reads, refusing what JSON
refuses (NaN, Infinity, unpaired surrogates) and keeping integers of any size exact."""

from __future__ import annotations

import json
from typing import Any

import pytest
from depth import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_stream.jsontext import loads

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


def test_nesting_deeper_than_the_fast_parser_takes_is_still_json() -> None:
    text = "[" * 600 + "]" * 600
    assert loads(text) == reference(text)


def test_nesting_beyond_the_recursion_limit_is_refused_not_raised() -> None:
    with pytest.raises(ValueError):
        loads("[" * 100_000 + "]" * 100_000)


def test_numbers_at_the_edges() -> None:
    assert loads("1e999") == float("inf")  # a number JSON allows; too large for a double
    assert loads("-0") == 0 and type(loads("-0")) is int
    assert loads("18446744073709551616") == 2**64
    assert loads("-9223372036854775809") == -(2**63) - 1
    assert loads('{"a": 1, "a": 2}') == {"a": 2}  # the last member wins, as everywhere
