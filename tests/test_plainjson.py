"""The parse that the decoder's fast path parses each event with: for every input, what
pydantic-core's `from_json(data, allow_inf_nan=False)` gives, a value of the same types with the
members in the same order, or the same error. Compiled, the C parser builds the value of every
plain text itself (so that it spares the decoder pydantic-core's parse), which its interned
member names show, and gives any other to `from_json`.

It runs as the process loaded it: the C extension module when the package is compiled, the pure
module (`from_json` itself) under `LLM_STREAM_PURE=1`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llm_stream
from llm_stream.jsontext import from_json
from llm_stream.plainjson import parse

COMPILED = llm_stream.implementation() == "compiled"


def same(built: Any, expected: Any) -> bool:
    """Equal values of the same types, with the members of each object in the same order (==
    holds True equal to 1, -0.0 to 0.0, and dicts equal in any order)."""
    if type(built) is not type(expected):
        return False
    if type(built) is dict:
        return list(built) == list(expected) and all(
            same(built[name], expected[name]) for name in built)
    if type(built) is list:
        return len(built) == len(expected) and all(map(same, built, expected))
    if type(built) is float:  # the same double, to its sign (-0.0 == 0.0)
        return built.hex() == expected.hex()
    return bool(built == expected)


def outcome(parser: Any, data: Any) -> tuple[str, Any]:
    try:
        return "value", parser(data)
    except Exception as error:  # which error, and its message, is what is compared
        return type(error).__name__, str(error)


def held_to_from_json(data: Any) -> None:
    """The parse gives what `from_json` gives: the same value, or the same error."""
    (kind, value), (expected_kind, expected) = outcome(parse, data), outcome(
        lambda text: from_json(text, allow_inf_nan=False), data)
    assert kind == expected_kind, data
    assert same(value, expected) if kind == "value" else value == expected, data


def interned(value: Any) -> dict[str, str]:
    """The interned str of each short member name of the value written without escapes: a new
    object interned, or one that was already; the C parser interns its own such names, so that
    a value it built holds these very objects, and one that `from_json` built holds others."""
    return {name: sys.intern(name[:1] + name[1:]) for name in walk(value)
            if 1 < len(name) <= 24 and name.isascii() and name.isprintable()
            and '"' not in name and "\\" not in name}


def walk(value: Any) -> list[Any]:
    """The member names of every object in the value."""
    if type(value) is dict:
        return [*value, *(name for member in value.values() for name in walk(member))]
    if type(value) is list:
        return [name for item in value for name in walk(item)]
    return []


def test_the_c_parser_is_the_one_loaded_when_compiled() -> None:
    expected = "builtin_function_or_method" if COMPILED else "function"
    assert type(parse).__name__ == expected


TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
"""Strings of every width of character: ASCII, Latin-1, the BMP, the astral; long enough to pass
the parser's table of short strings and its buffer for escapes, in some."""
PLAIN_SCALARS = (st.none() | st.booleans() | st.integers(-(10**18) + 1, 10**18 - 1) | TEXT
                 | st.floats(allow_nan=False, allow_infinity=False))
"""The scalars of a plain text: integers of at most 18 digits, and any finite float."""
SCALARS = PLAIN_SCALARS | st.integers()


def nested(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(TEXT, children, max_size=5),
        max_leaves=30,
    )


def written(value: Any, draw: st.DrawFn) -> str:
    """The value as a JSON text, in any layout: raw non-ASCII or escaped, with any white space."""
    return json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 0, 1, "\t", "\r\n "])),
        separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])),
    )


@st.composite
def plain_texts(draw: st.DrawFn) -> str:
    return written(draw(nested(PLAIN_SCALARS)), draw)


NOISE = ['"', "\\", ",", ":", "{", "}", "[", "]", " ", "\n", "\x00", "\x1f", "\x7f", "-", "0",
         "1", ".", "e", "E", "+", "u", "\\u", "\\ud800", "\\udc00", "\\u00e9", "\\x", "\udc80",
         "\u00e9", "\U0001F600", "true", "null", "NaN", "Infinity", "1e400", "9" * 20]
"""What is put into a text to make it something else: JSON's own characters, escapes good and
bad, raw surrogates and control characters, numbers beyond the plain ones."""


@st.composite
def texts(draw: st.DrawFn) -> bytes | str:
    """Any text, most near JSON: a JSON text of any value, changed at a few places or not, cut
    short or not, as str or as its UTF-8 (or, to hold a surrogate, its surrogate-passing
    bytes, which are no UTF-8)."""
    text = written(draw(nested(SCALARS)), draw)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 2))
        text = text[:at] + draw(st.sampled_from(NOISE)) + text[at + cut:]
    if draw(st.booleans()):
        text = text[:draw(st.integers(0, len(text)))]
    if draw(st.booleans()):
        return text
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=600)
@given(plain_texts())
def test_every_plain_text_is_built_as_from_json_builds_it(text: str) -> None:
    expected = from_json(text, allow_inf_nan=False)
    names = interned(expected)
    for data in (text, text.encode()):
        built = parse(data)
        assert same(built, expected), data
        if COMPILED:  # built by the C parser, not given to `from_json`
            assert all(name is names[name] for name in walk(built) if name in names), data


@settings(max_examples=1500)
@given(texts())
def test_any_text_gives_what_from_json_gives(data: bytes | str) -> None:
    held_to_from_json(data)


NUMBERS = st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?",
                        fullmatch=True)
"""Numbers as JSON writes them, of any length of digits and exponent: their doubles are the
nearest to the text, which both parsers find (or none, beyond the largest)."""


@settings(max_examples=1500)
@given(NUMBERS)
def test_every_number_is_read_as_from_json_reads_it(text: str) -> None:
    held_to_from_json(text)
    held_to_from_json(f'{{"n":{text}}}')


@pytest.mark.parametrize(
    "text, value",
    [
        ('{"a":1,"b":2,"a":3}', {"a": 3, "b": 2}),  # a name written twice: first place, last value
        (' \t\r\n{"a" : [ ] , "b":{}}\n', {"a": [], "b": {}}),
        ("-0", 0),
        ("123456789012345678", 123456789012345678),
        ("-123456789012345678", -123456789012345678),
        ("[1.5,-0.0,1e5,-1E+2,2.5e-3,0e0,1E-400]", [1.5, -0.0, 1e5, -100.0, 0.0025, 0.0, 0.0]),
        ('"\\u0000\\u00e9\\u20ac\\"\\\\\\/\\b\\f\\n\\r\\t"', '\x00\u00e9\u20ac"\\/\b\f\n\r\t'),
        ('"caf\u00e9 \U0001F600"', "caf\u00e9 \U0001F600"),
        ('"\\ud83d\\ude00\\uD83D\\uDE00"', "\U0001F600\U0001F600"),
        ('"' + "x" * 300 + '\\n"', "x" * 300 + "\n"),  # past the buffer for escapes on the stack
        ('"\x7f"', "\x7f"),
        ("[true,false,null]", [True, False, None]),
    ],
)
def test_a_plain_text_is_built(text: str, value: Any) -> None:
    for data in (text, text.encode()):
        assert same(parse(data), value)


EDGES = ["1234567890123456789", "-1234567890123456789", "1e400", "-1E+309", "0." + "1" * 70,
         "[" * 64 + "]" * 64, "[" * 65 + "]" * 65, "[" * 300 + "]" * 300,
         "", " ", "01", "-", "1.", ".5", "1.e5", "1e", "1e+", "-.5", "+1", "0x10", "[1,]",
         '{"a":1,}', '{"a":1}x', "nul", "NaN", "Infinity", '"\\ud800"', '"\\ud800\\u0041"',
         '"\\udc00\\ud800"', '"\\ud800\\ud800"', '"\\ud800\\u', '"\\x"', '"\x1f"', '"open',
         "{'a':1}", '{"a" 1}', "[1 2]", "\ufeff{}", "\udc80", '"\udc80"']
"""Texts at the C parser's bounds and past them (long integers and floats, deep nesting,
surrogates) and texts that are no JSON: all given to `from_json`, or built as it builds them."""


@pytest.mark.parametrize("text", EDGES)
def test_a_text_at_the_bounds_or_no_json_gives_what_from_json_gives(text: str) -> None:
    held_to_from_json(text)
    held_to_from_json(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("data", [b'"\xff"', b'"\xed\xa0\x80"', b'{"a\xc3":1}',
                                  bytearray(b"[1]"), memoryview(b"[1]"), 12, None])
def test_what_is_neither_utf_8_nor_str_gives_what_from_json_gives(data: Any) -> None:
    held_to_from_json(data)


@pytest.mark.skipif(not COMPILED, reason="the C parser's tables of strings")
def test_member_names_are_interned_and_values_are_not() -> None:
    # Interned first as other objects, which interning the parser's own names then gives.
    name = sys.intern("".join(["a_name", "_seen_once"]))
    value = sys.intern("".join(["a_value", "_seen_once"]))
    built = parse(b'{"a_name_seen_once":"a_value_seen_once"}')
    assert list(built) == [name] and next(iter(built)) is name
    assert built[name] == value and built[name] is not value
