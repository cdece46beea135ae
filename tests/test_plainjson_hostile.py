"""Hostile inputs for `plainjson.parse`, each held to `from_json(data, allow_inf_nan=False)`: the
texts at the C parser's edges (numbers at every bound of digits, exponent and double, every
escape and every malformed UTF-8, white space JSON does not allow, names written twice, nesting
at and past its depth, texts past its buffer for escapes), its tables of short strings (names
whose hashes collide), its references (no count moved, no memory kept, an allocation that fails
raising MemoryError) and its module state (imported again, reloaded, used from a second
interpreter, torn down at exit).

Run compiled, it tests the C parser; under `LLM_STREAM_PURE=1`, the same contract on `from_json`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
import sys
import textwrap
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_plainjson import COMPILED, held_to_from_json, same

from llm_stream.jsontext import from_json
from llm_stream.plainjson import parse


@st.composite
def numbers(draw: st.DrawFn) -> str:
    """A number as JSON writes it (or one step off it), of a length on both sides of the C
    parser's bounds: 18 digits of integer, 64 characters of float, the digits of the largest
    double, the smallest subnormal and the halfway points between them, exponents padded with
    zeros or far past any double."""
    mantissa = draw(st.sampled_from(
        ["", "17976931348623157", "17976931348623158", "17976931348623159", "49406564584124654",
         "24703282292062327", "24703282292062328", "22250738585072011", "22250738585072012",
         "9007199254740993", "999999999999999999", "1000000000000000000"]))
    digits = mantissa or draw(st.from_regex(r"(0|[1-9][0-9]{0,40})", fullmatch=True))
    whole = digits[:draw(st.integers(1, len(digits)))] if mantissa else digits
    if whole.startswith("0") and len(whole) > 1:
        whole = "0"
    fraction = digits[len(whole):] + draw(st.from_regex(r"[0-9]{0,45}", fullmatch=True))
    text = draw(st.sampled_from(["", "-"])) + whole
    if fraction or draw(st.booleans()):
        text += "." + fraction
    if draw(st.booleans()):
        zeros = "0" * draw(st.integers(0, 30))
        exponent = draw(st.sampled_from(["0", "1", "22", "307", "308", "309", "323", "324",
                                         "325", "400", "99999999999999999999"]))
        text += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"]))
        text += zeros + exponent
    return text


@settings(max_examples=800)
@given(numbers())
def test_every_number_at_the_bounds_is_read_as_from_json_reads_it(text: str) -> None:
    held_to_from_json(text)
    held_to_from_json(f"[{text}]".encode())


@pytest.mark.parametrize("text", [
    "-0", "-0.0", "0.0", "-0e0", "0e-0", "-0E+0", "1e-400", "-1e-400", "4.9e-324", "5e-324",
    "2.4703282292062327e-324", "2.4703282292062328e-324", "2.2250738585072011e-308",
    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e308",
    "1e309", "-1e309", "9" * 18, "-" + "9" * 18, "9" * 19, "-" + "9" * 19, "1" + "0" * 18,
    "0." + "0" * 61 + "1", "0." + "0" * 62 + "1", "1e" + "0" * 62 + "1", "1e-" + "0" * 61 + "1",
    "-" + "1" * 17 + "." + "1" * 46, "0." + "9" * 400, "1" * 400 + "e-400", "00", "-00", "0.",
    "-.0", "0e", "0e+", "0e-", "0ee1", "0.0.0", "1_0", "0x1p3", "1e1.5", "infinity", "-nan",
])
def test_numbers_at_every_bound_give_what_from_json_gives(text: str) -> None:
    held_to_from_json(text)
    held_to_from_json(text.encode())


ESCAPES = [b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t", b"\\u0000",
           b"\\u001f", b"\\u007F", b"\\u0080", b"\\u07ff", b"\\u0800", b"\\uFFFF", b"\\uFeFf",
           b"\\ud83d\\ude00", b"\\uDBFF\\uDFFF", b"\\ud800", b"\\udfff", b"\\ud800\\ud800",
           b"\\udc00\\ud800", b"\\ud800\\u0041", b"\\ud800\\", b"\\ud800\\u", b"\\ud800\\uDC0",
           b"\\u", b"\\u12", b"\\u12g4", b"\\U0041", b"\\x41", b"\\a", b"\\0", b"\\", b"\\'"]
"""Every escape JSON has, in both cases of hex, and the near misses: surrogates alone, reversed
or cut short, escapes cut short, escapes JSON does not have."""
RAW = [b"\x00", b"\x1f", b"\x20", b"\x7f", b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf",
       b"\xc2\x80", b"\xdf\xbf", b"\xe0\x80\x80", b"\xe0\xa0\x80", b"\xed\xa0\x80",
       b"\xed\xbf\xbf", b"\xef\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x90\x80\x80",
       b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xfe", b"\xff",
       b"\xe2\x82", b"\xf0\x9f\x98", "\u00e9".encode(), "\u20ac".encode(),
       "\U0001F600".encode(), b"a", b"Z", b"~", b" ", b'"']
"""Raw bytes of every class: controls, DEL, lone continuation bytes, overlong forms, encoded
surrogates, the last code point and past it, sequences cut short, and valid UTF-8 of every
length."""


@st.composite
def strings(draw: st.DrawFn) -> bytes:
    """A JSON string of escapes and raw bytes, of any length about the C parser's table of
    short strings (24) and its buffer for escapes on the stack (256)."""
    pieces = draw(st.lists(st.sampled_from(ESCAPES + RAW), max_size=12))
    padding = b"x" * draw(st.sampled_from([0, 1, 20, 24, 240, 250, 256, 300]))
    at = draw(st.integers(0, len(pieces)))
    return b'"' + b"".join([*pieces[:at], padding, *pieces[at:]]) + b'"'


@settings(max_examples=1500)
@given(strings(), st.sampled_from(["{}", "[{}]", '{{{}:1, "k":{}}}', "{}  ", "{}]"]))
def test_every_string_gives_what_from_json_gives(string: bytes, place: str) -> None:
    data = place.replace("{}", "\x00").encode().replace(b"\x00", string)
    held_to_from_json(data)
    try:
        text = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return
    held_to_from_json(text)  # as str: its UTF-8, or its surrogates, which UTF-8 cannot encode


SPACES = [" ", "\t", "\n", "\r", "\v", "\f", "\x00", "\x1c", "\x85", "\xa0", "\u1680",
          "\u2000", "\u2028", "\u2029", "\u3000", "\ufeff"]
"""JSON's four characters of white space, and every other one Python's str.isspace knows, the
NUL, the byte order mark: none of which JSON allows between tokens."""


@settings(max_examples=600)
@given(st.lists(st.sampled_from(SPACES), min_size=6, max_size=6),
       st.sampled_from(['{"a":[1,"b",true]}', '[1.5,null]', '"s"', "7", "false"]))
def test_only_json_white_space_is_allowed_between_tokens(spaces: list[str], text: str) -> None:
    tokens = text.replace(",", " , ").replace(":", " : ").replace("[", " [ ").split(" ")
    written = "".join(token + spaces[index % len(spaces)] for index, token in enumerate(tokens))
    data = spaces[-1] + written
    held_to_from_json(data)
    held_to_from_json(data.encode())


NAMES = ['"a"', '"\\u0061"', '"b"', '"\\u0062"', '"' + "n" * 30 + '"', '"\\u00e9"', '"\u00e9"',
         '""', '"\\u0000"', '"a\\u0000"']
"""Names, some the same name written two ways (raw, and escaped, which the C parser reads by
another path and keeps in no table), long and short, with a NUL and empty."""


@settings(max_examples=600)
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.integers(0, 9)), max_size=10))
def test_a_name_written_twice_keeps_its_first_place_and_last_value(
        members: list[tuple[str, int]]) -> None:
    text = "{" + ",".join(f"{name}:{number}" for name, number in members) + "}"
    held_to_from_json(text)
    held_to_from_json(text.encode())


@pytest.mark.parametrize("depth", [63, 64, 65, 66, 199, 200, 201, 202, 5000])
@pytest.mark.parametrize("shape", ["[", '{"a":', '[{"a":', " [ "])
@pytest.mark.parametrize("ending", ["", " ", "x", ",", "]"])
def test_nesting_at_and_past_the_depth_gives_what_from_json_gives(
        depth: int, shape: str, ending: str) -> None:
    closes = {"[": "]", '{"a":': "}", '[{"a":': "}]", " [ ": " ] "}[shape]
    count = depth // len(closes.strip())
    text = shape * count + "1" + closes * count + ending
    held_to_from_json(text)
    held_to_from_json(text.encode())


@pytest.mark.parametrize("text", [
    '"' + "x" * 1_000_000 + '\\n"',  # past the buffer on the stack: one on the heap
    '"\\n' + "x" * 300_000 + '\\ud83d\\ude00' * 1000 + '"',
    '"\\u00e9' + "\u00e9" * 200_000 + '"',
    '"' + "x" * 500_000 + '\\u00e9x',  # cut short: no closing quote
    '"' + "x" * 500_000 + '\\',
    "[" + "1," * 200_000 + '"\\t"]',
    '{"k' + "\\u0041" * 100_000 + '":[' + "1.5," * 100_000 + "0]}",
])
def test_huge_texts_give_what_from_json_gives(text: str) -> None:
    held_to_from_json(text)
    held_to_from_json(text.encode())


@pytest.mark.parametrize("value", ['{}', "[]", '""', "0", "1.5", "true", "false", "null",
                                   '"\\n"', '{"a":{}}', "[[]]"])
@pytest.mark.parametrize("after", ["", " \n\t\r", "x", "\x00", " 1", ",", "}", "]", '"', "/",
                                   "\ufeff", "\xa0", " \x00", "tru", "e5"])
def test_anything_after_the_value_but_white_space_is_refused(value: str, after: str) -> None:
    held_to_from_json(value + after)
    held_to_from_json((value + after).encode())
    held_to_from_json((after.strip() + value) if after.strip() else value)


@pytest.mark.parametrize("data", [b"", b" ", b"\x00", "", " ", "\x00", "\udcff", "\ud83d",
                                  b"\xff", b"\xef\xbb\xbf[]", "\ufeff[]", bytes(8)])
def test_empty_and_alien_texts_give_what_from_json_gives(data: Any) -> None:
    held_to_from_json(data)


class Text(str):
    """A str of another type: the C parser gives what is not exactly bytes or str to
    `from_json`."""


class Data(bytes):
    """Bytes of another type."""


@pytest.mark.parametrize("data", [Text('{"a":[1]}'), Data(b'{"a":[1]}'), Text("x"), Data(b"")])
def test_subclasses_of_str_and_bytes_give_what_from_json_gives(data: Any) -> None:
    held_to_from_json(data)


COLLIDING = ("OBTTS0MObC", "ZLnuTCohmk")
"""Two names of the same 32-bit hash in the C parser's tables, so of the same slot."""


@pytest.mark.parametrize("pair", [COLLIDING, ("aa", "abaa"), ("ba", "aab"), ("a", "a "),
                                  ("", "x"), ("ab", "ba")])
def test_strings_of_one_slot_are_never_taken_for_each_other(pair: tuple[str, str]) -> None:
    """Names and values of the same slot (a full collision, and of different lengths): each
    text gives its own string, however they alternate."""
    for _ in range(3):
        for first, second in (pair, pair[::-1]):
            built = parse(f'{{"{first}":"{first}","{second}":["{second}"]}}'.encode())
            assert same(built, {first: first, second: [second]})
            assert parse(f'"{first}"') == first and parse(f'"{second}"') == second
            assert parse(f'"{first}\\u0000"') == first + "\x00"


def varied() -> list[bytes | str]:
    """Texts through every path of the C parser and out of it: plain, escaped on the stack and
    on the heap, numbers of both kinds and past the bounds, names new and seen, errors."""
    texts: list[bytes | str] = []
    for index in range(64):
        texts += [
            f'{{"id":"call_{index}","n{index % 9}":[{index},{index}.5,-0.0,true,null]}}'.encode(),
            f'{{"text":"line {index}\\n\\u00e9\\ud83d\\ude00","deep":[[[{{}}]]]}}',
            ('"' + "y" * (200 + index) + '\\t"').encode(),
            f'[{"9" * (17 + index % 4)}, 1e{300 + index}, "\\ud800"]'.encode(),
            f'{{"a":1,"a":{index}}}', f'{{"bad":{index},}}'.encode(), "\u00e9\"x",
        ]
    return texts


def run(texts: list[bytes | str], times: int) -> None:
    for _ in range(times):
        for text in texts:
            with contextlib.suppress(ValueError):
                parse(text)


def test_no_reference_is_kept_or_lost() -> None:
    texts = varied()
    run(texts, 2)  # the tables of short strings filled
    built = parse(b'{"text":"call_1","deep":[]}')
    kept = [True, False, None, *built, built["text"]]
    gc.collect()
    before = [sys.getrefcount(thing) for thing in kept]
    run(texts, 20)
    gc.collect()
    assert [sys.getrefcount(thing) for thing in kept] == before


def test_no_memory_is_kept() -> None:
    texts = varied()
    run(texts, 3)
    gc.collect()
    tracemalloc.start()
    try:
        run(texts, 2)
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        run(texts, 40)  # 17,920 parses; a leak of even 4 bytes a parse shows
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 32_000, grown


NO_MEMORY = [b'{"a_new_name_0":[1,2.5,"v"],"b":{"c":null}}', b'"' + b"z" * 400 + b'\\n"',
             '{"\u00e9":"\\u20ac\\ud83d\\ude00"}', b"[" * 30 + b"1" + b"]" * 30,
             b'{"' + b"a_long_name_" * 4 + b'":"' + b"v" * 40 + b'","k":-12.5e-3}']


@pytest.mark.skipif(not COMPILED, reason="the C parser's failed allocations")
@pytest.mark.parametrize("data", NO_MEMORY, ids=["object", "escapes", "str", "deep", "long"])
def test_an_allocation_that_fails_raises_memory_error_or_changes_nothing(data: Any) -> None:
    """Every allocation of the parse made to fail in turn: it raises MemoryError, or gives the
    value as before (it fell back to `from_json`, whose result it is); never another error, a
    wrong value or an error left set (which CPython reports as SystemError)."""
    _testcapi = pytest.importorskip("_testcapi")
    failures = 0
    for start in range(1, 200):
        if isinstance(data, bytes):  # a text new to the tables, so that the parse allocates
            data = data.replace(b"_name_", b"_Name_" if start % 2 else b"_name_")
        expected = from_json(data, allow_inf_nan=False)
        _testcapi.set_nomemory(start, 0)
        try:
            built = parse(data)
        except MemoryError:
            built = MemoryError
        finally:
            _testcapi.remove_mem_hooks()
        if built is MemoryError:
            failures += 1
            continue
        assert same(built, expected), start
    assert failures > 0


def child(code: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a new interpreter, with Python's debug allocator, which fills memory freed
    with a pattern, so that an object used after it is freed shows."""
    return subprocess.run([sys.executable, "-X", "dev", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=60,
                          env={"PYTHONMALLOC": "debug", "PATH": "",
                               "LLM_STREAM_PURE": os.environ.get("LLM_STREAM_PURE", "")},
                          check=False)


def test_a_module_imported_again_or_reloaded_parses_as_before() -> None:
    done = child("""
        import importlib, sys
        import llm_stream.plainjson as first
        text = b'{"name_one":"value_one","n":[1,2.5,true]}'
        value = first.parse(text)
        del sys.modules["llm_stream.plainjson"]
        import llm_stream.plainjson as second
        again = importlib.reload(second)
        for module in (first, second, again):
            assert module.parse(text) == value, module
            assert list(module.parse(text))[0] is list(value)[0]
        print("ok")
    """)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


def test_names_kept_in_the_tables_outlive_the_interpreter_safely() -> None:
    """Interned names the tables hold, at exit: the interpreter tears down its interned
    strings while the tables still hold some."""
    done = child("""
        import sys
        from llm_stream.plainjson import parse
        for index in range(2000):
            parse(('{"n%d":"v%d","keep":[%d]}' % (index, index, index)).encode())
        kept = parse(b'{"n1999":1}')
        print("ok")
    """)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


SUBINTERPRETER = """
import llm_stream.plainjson as plain
for index in range(300):
    plain.parse(('{"m%d":"w%d"}' % (index, index)).encode())
assert plain.parse(b'{"m7":"w7"}') == {"m7": "w7"}
assert plain.parse(b'[1e999]') == [float("inf")]
"""
"""What a second interpreter parses: names and values it makes and the tables keep, and a text
given to `from_json`."""


@pytest.mark.skipif(not COMPILED, reason="pydantic-core (PyO3) loads in one interpreter only, "
                    "which the C module, initialised once, keeps to")
@pytest.mark.skipif(sys.version_info >= (3, 12), reason="from 3.12 a sub-interpreter of its own "
                    "refuses a module initialised once a process, as this one is")
def test_a_second_interpreter_leaves_the_tables_sound() -> None:
    """Strings made in an interpreter since destroyed, held by the module's tables: the first
    interpreter meets them again, intact."""
    done = child(f"""
        import _xxsubinterpreters as interpreters
        for _ in range(3):
            one = interpreters.create()
            interpreters.run_string(one, {SUBINTERPRETER!r})
            interpreters.destroy(one)
        from llm_stream.plainjson import parse
        for index in range(300):
            assert parse(('{{"m%d":"w%d"}}' % (index, index)).encode()) == {{
                "m%d" % index: "w%d" % index}}
        assert parse(b'[1e999]') == [float("inf")]
        print("ok")
    """)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a limit of address space")
def test_an_escape_needs_no_more_memory_than_its_string() -> None:
    """A short escaped string early in a long text: the parse writes it out in a buffer as long
    as the string, not as the rest of the text, so that where memory is short it gives what
    `from_json` gives rather than MemoryError."""
    done = child("""
        import resource
        from llm_stream.plainjson import parse
        from llm_stream.jsontext import from_json
        data = b'["\\\\n",' + b" " * (32 << 20) + b"0]"
        expected = from_json(data, allow_inf_nan=False)
        with open("/proc/self/statm") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (16 << 20), resource.RLIM_INFINITY))
        print(parse(data) == expected == ["\\n", 0])
    """)
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr
