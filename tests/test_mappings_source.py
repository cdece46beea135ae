"""The vendor maps of mappings/: the spec check refuses a broken file with its line, the bindings
hold exactly the rows, and each map reads and writes as the pages say."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_stream.translate.maps import FieldMap, ValueMap
from llm_stream.translate.tables import FIELD_MAPS, FORMATS, VALUE_MAPS
from llm_stream_codegen.check import check
from llm_stream_codegen.load import load
from llm_stream_codegen.model import VENDORS

ROOT = Path(__file__).resolve().parent.parent


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _line_of(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


BROKEN: dict[str, tuple[Callable[[Path], None], str]] = {
    "unregistered value": (
        lambda root: replace(root / "mappings/gemini.yaml", "{vendor: SPII, ours: content_filter",
                             "{vendor: SPII, ours: content_filtr"),
        r"mappings/gemini\.yaml:(\d+): map 'stop-reasons': 'content_filtr' is not a registered "
        r"content\.stop stop_reason"),
    "value read twice": (
        lambda root: replace(root / "mappings/anthropic.yaml",
                             "{vendor: pause_turn, ours: end_turn, only: from",
                             "{vendor: refusal, ours: end_turn, only: from"),
        r"mappings/anthropic\.yaml:(\d+): map 'stop-reasons': vendor 'refusal' goes 'from' "
        r"twice \(first at line \d+\)"),
    "registered value never written": (
        lambda root: replace(root / "mappings/openai-chat.yaml",
                             "      - {vendor: stop, ours: stop_sequence, only: to, "
                             "note: Chat Completions does not tell a stop sequence from a natural "
                             "end}\n", ""),
        r"mappings/openai-chat\.yaml:(\d+): map 'stop-reasons': the registered content\.stop "
        r"stop_reason 'stop_sequence' has no row going 'to' the vendor format"),
    "field that does not exist": (
        lambda root: replace(root / "mappings/openai-chat.yaml", "ours: reasoning_tokens}",
                             "ours: thinking_tokens}"),
        r"mappings/openai-chat\.yaml:(\d+): map 'usage': 'thinking_tokens' is not a field of "
        r"schemas/events/usage\.json"),
    "sum both ways": (
        lambda root: replace(root / "mappings/gemini.yaml",
                             "ours: input_tokens, only: from}", "ours: input_tokens}"),
        r"mappings/gemini\.yaml:(\d+): map 'usage': vendor counts summed into one go 'from' "
        r"the vendor only"),
    "no counterpart both ways": (
        lambda root: replace(root / "mappings/anthropic.yaml",
                             "{vendor: null, ours: truncated, only: to,",
                             "{vendor: null, ours: truncated,"),
        r"mappings/anthropic\.yaml:(\d+): map 'error-codes': a row without a counterpart on one "
        r"side goes one way only"),
    "schema breach": (
        lambda root: replace(root / "mappings/gemini.yaml",
                             "    vendor_field: usageMetadata\n", ""),
        r"mappings/gemini\.yaml:(\d+): map 'usage': does not satisfy "
        r"mappings/mappings\.schema\.json: 'vendor_field' is a required property"),
    "format not its file name": (
        lambda root: replace(root / "mappings/gemini.yaml", "format: gemini", "format: vertex"),
        r"mappings/gemini\.yaml:(\d+): format 'vertex' must be the file's name, 'gemini'"),
    "format file missing": (
        lambda root: (root / "mappings/anthropic.yaml").unlink(),
        r"mappings/anthropic\.yaml: the mappings of vendor format 'anthropic' are missing"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_mappings_file_is_refused_with_its_line(kind: str, source_copy: Path) -> None:
    breaking, expected = BROKEN[kind]
    breaking(source_copy)
    _, errors = check(source_copy)
    found = [m for e in errors if (m := re.match(expected, str(e)))]
    assert found, [str(e) for e in errors]
    assert all(m.groups() == () or int(m.group(1)) > 0 for m in found)


def test_an_error_names_the_row_it_is_on(source_copy: Path) -> None:
    path = source_copy / "mappings/gemini.yaml"
    replace(path, "{vendor: SPII, ours: content_filter", "{vendor: SPII, ours: nope")
    _, errors = check(source_copy)
    row = _line_of(path, "      - {vendor: SPII, ours: nope, only: from}")
    assert [e.line for e in errors] == [row]


def test_the_bindings_hold_every_row_of_the_source() -> None:
    spec = load(ROOT)
    assert FORMATS == VENDORS == tuple(spec.mappings)
    for name, mappings in spec.mappings.items():
        for vendor_map in mappings.maps.values():
            if vendor_map.registry:
                value_map = VALUE_MAPS[name][vendor_map.name]
                assert dict(value_map.from_vendor) == vendor_map.reading
                assert dict(value_map.to_vendor) == vendor_map.writing
                assert value_map.otherwise == vendor_map.otherwise
            else:
                field_map = FIELD_MAPS[name][vendor_map.name]
                as_tuples = {k: v if isinstance(v, tuple) else (v,)
                             for k, v in vendor_map.reading.items()}
                assert dict(field_map.from_vendor) == as_tuples


def test_a_value_map_reads_unlisted_values_as_otherwise_and_refuses_none() -> None:
    stops = VALUE_MAPS["gemini"]["stop-reasons"]
    assert stops.read("RECITATION") == "content_filter"
    assert stops.read("SOMETHING_NEW") == "end_turn"
    assert stops.write("tool_use") == "STOP"
    roles = VALUE_MAPS["openai-chat"]["roles"]
    assert roles.read("function") is None  # listed with no counterpart: refused
    assert roles.read("narrator") is None  # no otherwise: refused
    assert VALUE_MAPS["anthropic"]["content-part-types"].write("audio") is None


def test_a_field_map_sums_what_is_present_and_leaves_absent_counts_out() -> None:
    usage = FIELD_MAPS["anthropic"]["usage"]
    assert usage.read({"input_tokens": 10, "cache_read_input_tokens": 90,
                       "output_tokens": 3}) == {
        "input_tokens": 100, "output_tokens": 3, "cached_input_tokens": 90}
    assert usage.read({"output_tokens": 3}) == {"output_tokens": 3}
    assert usage.read({"input_tokens": None, "output_tokens": True}) == {}
    chat = FIELD_MAPS["openai-chat"]["usage"]
    assert chat.write({"input_tokens": 5, "output_tokens": 7, "reasoning_tokens": 2}) == {
        "prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12,
        "completion_tokens_details": {"reasoning_tokens": 2}}
    assert chat.read({"prompt_tokens": 5, "completion_tokens": 7,
                      "prompt_tokens_details": {"cached_tokens": 4}}) == {
        "input_tokens": 5, "output_tokens": 7, "cached_input_tokens": 4}


def test_map_classes_are_frozen() -> None:
    with pytest.raises(AttributeError):
        VALUE_MAPS["gemini"]["stop-reasons"].otherwise = "x"  # type: ignore[misc]
    assert isinstance(FIELD_MAPS["gemini"]["usage"], FieldMap)
    assert isinstance(VALUE_MAPS["gemini"]["roles"], ValueMap)
