"""The scanner that decides, without parsing, that a str is JSON text: whatever it accepts,
pydantic-core, `loads` and the depth limit accept; and it accepts every JSON text within its
bounds, so that it spares the decoder's quick path the parse.

It runs as the process loaded it: the C extension module when the package is compiled, the pure
module under `LLM_STREAM_PURE=1`, where it is exact (the parse it stands for), so that the cases
beyond the C scanner's bounds expect False of the one and the parse's answer of the other.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from depth import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import llm_stream
from llm_stream.jsonscan import certainly_json
from llm_stream.jsontext import MAX_DEPTH, from_json, loads, too_deep

COMPILED = llm_stream.implementation() == "compiled"


def parses(text: str) -> bool:
    """What the scanner stands for: pydantic-core reads the text, `loads` accepts it, and it is
    nested no deeper than the limit."""
    try:
        from_json(text, allow_inf_nan=False)
        loads(text)
    except (ValueError, TypeError):  # TypeError: a raw surrogate, which UTF-8 cannot encode
        return False
    return not too_deep(text)


def beyond_bounds(text: str) -> bool:
    """What the scanner says of a text beyond the C scanner's bounds: False, or when pure, the
    parse's answer."""
    return parses(text) if not COMPILED else False


def test_the_c_scanner_is_the_one_loaded_when_compiled() -> None:
    expected = "builtin_function_or_method" if COMPILED else "function"
    assert type(certainly_json).__name__ == expected


CHARACTERS = st.characters(exclude_categories=["Cs"])
"""Every code point but the surrogates, of each width: ASCII, Latin-1, the BMP, the astral."""
SCALARS = (st.none() | st.booleans() | st.integers(-(10**18) + 1, 10**18 - 1)
           | st.floats(allow_nan=False, allow_infinity=False).filter(
               lambda x: x == 0 or 1e-99 < abs(x) < 1e99))
"""Scalars that `json.dumps` writes within the bounds: integers of at most 18 digits, floats
whose exponent has at most two digits."""


def values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS | text,
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(text, children, max_size=4),
        max_leaves=25,
    )


@st.composite
def dumped(draw: st.DrawFn) -> str:
    """A JSON text within the bounds, of any layout: raw non-ASCII, or only the BMP escaped
    (`ensure_ascii` writes an astral character as a surrogate pair, which the scanner leaves
    to the parse)."""
    ascii_only = draw(st.booleans())
    text = st.text(st.characters(exclude_categories=["Cs"], max_codepoint=0xFFFF)
                   if ascii_only else CHARACTERS, max_size=8)
    value = draw(values(text))
    indent = draw(st.sampled_from([None, 0, 1, "\t", "\r\n "]))
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : ")]))
    return json.dumps(value, ensure_ascii=ascii_only, indent=indent, separators=separators)


@settings(max_examples=examples(400))
@given(text=dumped())
def test_every_json_text_within_the_bounds_is_accepted(text: str) -> None:
    assert certainly_json(text)
    assert certainly_json(f" \t\r\n{text}\n ")


INSERTED = st.sampled_from([
    '"', "\\", ",", ":", "[", "]", "{", "}", " ", "\f", "\v", "\x00", "\x1f", "\x7f", "\ud800",
    "\udfff", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u00", "\\x41", "\\'", "é", "中", "😀",
    "\u00a0", "\u2028", "\ufeff", "NaN", "-Infinity", "Infinity", "nul", "tru", "-", "+", ".",
    "e", "E", "0", "01", "1" * 19, "1" * 4400, "e100", "e-400", "1e400", ".5", "/*", "//",
    ",]", ",}", "[" * 129, "]" * 129,
])
"""What a mutation writes into a JSON text: structure, control characters, surrogates raw and
escaped, non-ASCII of every width, constants JSON lacks, numbers past the bounds."""


@st.composite
def json_like(draw: st.DrawFn) -> str:
    """A JSON text of any values (long integers, any floats, surrogates escaped or raw), then
    mutated: cut, characters inserted or removed, nested deep."""
    text = st.text(max_size=8)  # surrogates too
    value = draw(st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(text, children, max_size=4), max_leaves=20))
    try:
        written = json.dumps(value, ensure_ascii=draw(st.booleans()), allow_nan=True,
                             indent=draw(st.sampled_from([None, 1])))
    except ValueError:  # an integer past Python's conversion limit
        written = "1" * 5000
    depth = draw(st.integers(0, MAX_DEPTH + 2))
    if draw(st.booleans()):
        written = "[" * depth + written + "]" * depth
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(written)))
        change = draw(st.sampled_from(["insert", "delete", "cut"]))
        if change == "insert":
            written = written[:at] + draw(INSERTED | CHARACTERS) + written[at:]
        elif change == "delete":
            written = written[:at] + written[at + 1:]
        else:
            written = written[:at]
    return written


@settings(max_examples=examples(1500))
@given(text=json_like())
def test_what_the_scanner_accepts_every_parser_accepts(text: str) -> None:
    if certainly_json(text):
        assert parses(text), text


@pytest.mark.parametrize("text", [
    "0", "-0", "1.5", "-0.0e-0", "1E+05", "123456789012345678", "-123456789012345678",
    "1e99", "1e-99", "0." + "1" * 400, "1." + "0" * 5000 + "1", "true", "false", "null", '""',
    "[]", "{}", "[[], {}]", '{"a": 1, "a": 2}', '{"": null}', ' \t\r\n[1 , 2]\r\n ',
    '"\\u0000"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u00e9\\uABCD\\uffff\\ud7ff\\ue000"',
    '"\x7f"', '"é"', '"中"', '"😀"', '{"é": ["中", "😀"]}', '"\U0010ffff"',
    "[" * MAX_DEPTH + "]" * MAX_DEPTH, "{\"a\":" * MAX_DEPTH + "1" + "}" * MAX_DEPTH,
])
def test_json_texts_at_the_bounds_are_accepted(text: str) -> None:
    assert parses(text)
    assert certainly_json(text)


@pytest.mark.parametrize("text", [
    "", " ", "[", "]", "[1,]", "{,}", '{"a":1,}', "[1 2]", '{"a" 1}', "{1:2}", '{"a":}',
    "01", "-", "1.", ".5", "1e", "1e+", "+1", "0x1", "NaN", "-Infinity", "Infinity", "nul",
    "truex", "1 1", '"a', '"\\', '"\\u12"', '"\\u12g4"', '"\\x41"', '"\\\'"', "'a'",
    '"\x00"', '"\x1f"', '"a\nb"', "\f1", "\u00a01", "\ufeff1", "1/*c*/", "[1]x",
    '"\\ud800"', '"\\uDFFF"', '"\\udc00\\ud800"', '"\ud800"', '"é\udfff"', '"😀\ud800"',
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "{\"a\":" * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1),
])
def test_what_no_parser_accepts_is_refused(text: str) -> None:
    """Empty, broken, unclosed, NaN and Infinity, control characters, unpaired surrogates raw or
    escaped, nested past the limit: not JSON text, or not what `loads` accepts."""
    assert not parses(text)
    assert not certainly_json(text)


@pytest.mark.parametrize("text", [
    "1234567890123456789", "-1234567890123456789", "1" * 5000, "1e100", "1E-100", "1e400",
    "1.5e+100", "[1e0001]", '"\\ud83d\\ude00"', '{"a": "\\uD83D\\uDE00"}',
])
def test_json_beyond_the_bounds_is_left_to_the_parse(text: str) -> None:
    """19 digits or more, three-digit exponents (1e400 is infinity to pydantic-core), and
    escaped surrogate pairs are JSON, which the C scanner does not decide."""
    assert certainly_json(text) == beyond_bounds(text)


def test_the_depth_bound_is_the_parsers_limit() -> None:
    """The C scanner has its own constant for `jsontext.MAX_DEPTH`: the two must be equal, as
    deep as the limit accepted, one deeper refused."""
    for depth in (1, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 2 * MAX_DEPTH):
        for opened, closed in (("[", "]"), ('{"a":[', "]}")):
            text = opened * depth + closed * depth
            nested = depth * (2 if opened == '{"a":[' else 1)
            assert certainly_json(text) == (nested <= MAX_DEPTH) == parses(text), depth


@pytest.mark.parametrize("digits", [1, 17, 18, 19, 20])
def test_the_integer_part_bound(digits: int) -> None:
    for number in ("9" * digits, f"-{'9' * digits}", f"{'9' * digits}.5", f"{'9' * digits}e1"):
        assert parses(number)
        assert certainly_json(number) == (True if digits <= 18 else beyond_bounds(number))


@pytest.mark.parametrize("exponent", ["9", "99", "100", "09", "009", "308", "400"])
def test_the_exponent_bound(exponent: str) -> None:
    for number in (f"1e{exponent}", f"1E-{exponent}", f"-2.5e+{exponent}"):
        accepted = len(exponent) <= 2
        assert certainly_json(number) == (True if accepted else beyond_bounds(number))
        if accepted:
            assert math.isfinite(from_json(number))


@pytest.mark.parametrize("other", [b"1", bytearray(b"1"), None, 1, 1.5, ["1"], memoryview(b"1")])
def test_anything_but_a_str_is_refused(other: object) -> None:
    assert certainly_json(other) is False


def test_a_str_subclass_is_read_as_its_text() -> None:
    class Text(str):
        pass

    assert certainly_json(Text('{"a": [1, "é"]}')) is True
    assert certainly_json(Text("[1,]")) is False
