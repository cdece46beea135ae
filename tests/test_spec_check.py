"""The spec check passes on the source and refuses each kind of inconsistency with a clear error."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from llm_stream_codegen.check import check
from llm_stream_codegen.examples import verify_examples


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2) + "\n")


def replace(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


def errors_of(root: Path) -> list[str]:
    _, errors = check(root)
    return [str(e) for e in errors]


def test_the_source_is_consistent() -> None:
    root = Path(__file__).resolve().parent.parent
    spec, errors = check(root)
    assert errors == []
    assert spec is not None and len(spec.event_types) >= 7


def _schema_not_2020_12(root: Path) -> None:
    edit_json(root / "schemas/tool.json", lambda d: d["properties"]["name"].update(type=5))


def _ref_does_not_resolve(root: Path) -> None:
    nope = {"$ref": "urn:ietf:params:llm-stream:nope:1.0"}
    edit_json(root / "schemas/request.json",
              lambda d: d["properties"]["tools"]["items"].update(nope))


def _registry_entry_invalid(root: Path) -> None:
    replace(root / "registry/stop-reasons.yaml",
            "    description: Generation reached the max_tokens limit.\n", "")


def _event_schema_type_mismatch(root: Path) -> None:
    edit_json(root / "schemas/events/usage.json",
              lambda d: d["properties"]["type"].update(const="usage.report"))


def _event_schema_missing(root: Path) -> None:
    (root / "schemas/events/error.json").unlink()


def _unknown_rule_in_schema(root: Path) -> None:
    edit_json(root / "schemas/events/content.delta.json",
              lambda d: d.update({"x-rule": "LS-NOPE-9"}))


def _unknown_rule_in_example(root: Path) -> None:
    replace(root / "spec/examples/examples.yaml", "expect: valid", "expect: [LS-NOPE-7]")


def _duplicate_rule(root: Path) -> None:
    replace(root / "spec/llm-stream.yaml", "- {id: LS-SEQ-2,", "- {id: LS-SEQ-1,")


def _duplicate_event_type(root: Path) -> None:
    replace(root / "registry/event-types.yaml", "  - name: usage\n", "  - name: error\n")


def _unknown_section(root: Path) -> None:
    replace(root / "spec/llm-stream.yaml", "section: usage,", "section: usages,")


def _example_file_missing(root: Path) -> None:
    (root / "spec/examples/complete/complete-example.sse").unlink()


def _unlisted_example(root: Path) -> None:
    (root / "spec/examples/complete/stray.sse").write_text("event: x\n\n")


def _block_event_without_index(root: Path) -> None:
    edit_json(root / "schemas/events/content.delta.json",
              lambda d: d["required"].remove("index"))


def _decision_without_reason(root: Path) -> None:
    replace(root / "spec/llm-stream.yaml", "    reason: A zero would be read as a measurement",
            "    why: A zero would be read as a measurement")


def _expect_not_a_list(root: Path) -> None:
    replace(root / "spec/examples/examples.yaml", "expect: [LS-SEQ-2]", "expect: LS-SEQ-2")


def _spec_file_missing(root: Path) -> None:
    (root / "spec/llm-stream.yaml").unlink()


def _envelope_version_not_the_spec_version(root: Path) -> None:
    edit_json(root / "schemas/event-envelope.json",
              lambda d: d["properties"]["v"].update(const="1.1"))


def _envelope_without_largest_seq(root: Path) -> None:
    edit_json(root / "schemas/event-envelope.json",
              lambda d: d["properties"]["seq"]["allOf"].pop())


def _pattern_not_a_regex(root: Path) -> None:
    edit_json(root / "schemas/tool.json", lambda d: d["properties"]["name"].update(pattern="("))


def _nan_in_a_schema(root: Path) -> None:
    replace(root / "schemas/events/usage.json", '"minimum": 0', '"minimum": NaN')


def _nested(depth: int) -> dict:
    node: dict = {}
    for _ in range(depth):
        node = {"properties": {"a": node}}
    return node


def _schema_nested_too_deep(root: Path) -> None:
    edit_json(root / "schemas/tool.json", lambda d: d["properties"].update(deep=_nested(300)))


def _yaml_nested_too_deep(root: Path) -> None:
    path = root / "registry/stop-reasons.yaml"
    path.write_text(path.read_text() + "deep:\n"
                    + "".join("  " * i + "k:\n" for i in range(1, 400)))


def _yaml_flow_nested_too_deep(root: Path) -> None:
    path = root / "registry/roles.yaml"
    path.write_text(path.read_text() + "deep: " + "[" * 900 + "]" * 900 + "\n")


def _unsatisfiable_bounds(root: Path) -> None:
    edit_json(root / "schemas/events/usage.json",
              lambda d: d["properties"]["input_tokens"].update(minimum=5, maximum=1))


BROKEN = {
    "envelope version is not the spec's": (
        _envelope_version_not_the_spec_version,
        r"schemas/event-envelope\.json: properties\.v must have const '1\.0', the spec's "
        r"version, found '1\.1'"),
    "envelope without largest seq": (
        _envelope_without_largest_seq,
        r"schemas/event-envelope\.json: properties\.seq must have an integer maximum"),
    "decision without reason": (
        _decision_without_reason,
        r"spec/llm-stream\.yaml:\d+: entry 'D-USAGE-COUNTS': does not satisfy "
        r"spec/spec\.schema\.json: "),
    "expect not a list": (
        _expect_not_a_list,
        r"spec/examples/examples\.yaml:\d+: entry 'invalid/[a-z-]+\.sse': does not satisfy "
        r"spec/examples\.schema\.json: 'LS-SEQ-2' "),
    "spec file missing": (
        _spec_file_missing, r"spec/llm-stream\.yaml: the file does not exist"),
    "block event without index": (
        _block_event_without_index,
        r"registry/event-types\.yaml:\d+: event type 'content\.delta': place 'block' needs a "
        r"required integer index in schemas/events/content\.delta\.json"),
    "schema not 2020-12": (
        _schema_not_2020_12,
        r"schemas/tool\.json:\d+: not a valid JSON Schema 2020-12 at /properties/name/type"),
    "pattern not a regex": (
        _pattern_not_a_regex,
        r"schemas/tool\.json:\d+: not a valid JSON Schema 2020-12 at /properties/name/pattern: "
        r"'\(' is not a 'regex'"),
    "NaN in a schema": (
        _nan_in_a_schema,
        r"schemas/events/usage\.json:\d+: invalid JSON: NaN is not a JSON number"),
    "schema nested too deep": (
        _schema_nested_too_deep,
        r"schemas/tool\.json:\d+: nested deeper than 64 levels"),
    "YAML nested too deep": (
        _yaml_nested_too_deep, r"registry/stop-reasons\.yaml:\d+: nested deeper than 64 levels"),
    "YAML flow nested too deep": (
        _yaml_flow_nested_too_deep,
        r"registry/roles\.yaml:\d+: nested deeper than 64 levels"),
    "unsatisfiable bounds": (
        _unsatisfiable_bounds,
        r"schemas/events/usage\.json:\d+: no instance satisfies the schema at "
        r"/properties/input_tokens: minimum 5 is above maximum 1"),
    "$ref does not resolve": (
        _ref_does_not_resolve,
        r"schemas/request\.json: \$ref 'urn:ietf:params:llm-stream:nope:1\.0' "
        r"at /properties/tools/items does not resolve"),
    "registry entry invalid": (
        _registry_entry_invalid,
        r"registry/stop-reasons\.yaml:\d+: entry 'max_tokens': does not satisfy "
        r"registry/registry\.schema\.json: 'description' is a required property"),
    "event schema type mismatch": (
        _event_schema_type_mismatch,
        r"registry/event-types\.yaml:\d+: event type 'usage': schemas/events/usage\.json "
        r"must fix properties\.type\.const to 'usage', found 'usage\.report'"),
    "event schema missing": (
        _event_schema_missing,
        r"registry/event-types\.yaml:\d+: event type 'error': "
        r"schema schemas/events/error\.json does not exist"),
    "unknown rule in schema": (
        _unknown_rule_in_schema,
        r"schemas/events/content\.delta\.json: x-rule at / names rule LS-NOPE-9, "
        r"which does not exist"),
    "unknown rule in example": (
        _unknown_rule_in_example,
        r"spec/examples/examples\.yaml:\d+: example .* names rule LS-NOPE-7, "
        r"which does not exist"),
    "duplicate rule ID": (
        _duplicate_rule,
        r"spec/llm-stream\.yaml:\d+: rule ID LS-SEQ-1 is used twice \(first at line \d+\)"),
    "duplicate event type": (
        _duplicate_event_type,
        r"registry/event-types\.yaml:\d+: event type 'error' is registered twice"),
    "unknown section": (
        _unknown_section,
        r"spec/llm-stream\.yaml:\d+: rule LS-USAGE-\d names section 'usages', "
        r"which does not exist"),
    "example file missing": (
        _example_file_missing,
        r"spec/examples/examples\.yaml:\d+: example file complete/complete-example\.sse "
        r"does not exist"),
    "example not listed": (
        _unlisted_example,
        r"spec/examples/complete/stray\.sse: example file is not in examples\.yaml"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_each_kind_of_inconsistency_is_refused(kind: str, source_copy: Path) -> None:
    breaking, expected = BROKEN[kind]
    breaking(source_copy)
    errors = errors_of(source_copy)
    assert any(re.search(expected, e) for e in errors), errors


def test_an_example_tagged_with_the_wrong_rule_is_refused(source_copy: Path) -> None:
    manifest = source_copy / "spec/examples/examples.yaml"
    text = manifest.read_text()
    entry = text.index("file: invalid/seq-gap.sse")
    tag = text.index("expect: [LS-SEQ-2]", entry)
    manifest.write_text(text[:tag] + "expect: [LS-SEQ-1]" + text[tag + len("expect: [LS-SEQ-2]"):])
    spec, errors = check(source_copy)
    assert spec is not None and errors == []
    (found,) = (str(e) for e in verify_examples(spec.examples, source_copy))
    assert re.fullmatch(r"spec/examples/examples\.yaml:\d+: example invalid/seq-gap\.sse "
                        r"should be LS-SEQ-1, but the bindings report LS-SEQ-2", found), found


def test_a_valid_example_that_the_bindings_refuse_is_reported(source_copy: Path) -> None:
    example = source_copy / "spec/examples/complete/complete-example.sse"
    example.write_bytes(example.read_bytes().replace(b'"seq":3', b'"seq":30'))
    spec, errors = check(source_copy)
    assert spec is not None and errors == []
    found = [str(e) for e in verify_examples(spec.examples, source_copy)]
    assert any("example complete/complete-example.sse should be valid, but the bindings report "
               "LS-SEQ-2" in line for line in found), found
