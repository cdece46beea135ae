"""Every rule is either machine-checkable, with an invalid example that triggers exactly it, or
says why it is not; and every rule a diagnostic can carry is a rule of the spec."""

from __future__ import annotations

from pathlib import Path

from llm_stream.rules import RULES
from llm_stream_codegen.load import load

ROOT = Path(__file__).resolve().parent.parent
SPEC = load(ROOT)


def test_every_checkable_rule_has_an_example_that_triggers_exactly_it() -> None:
    triggered = {e.expect[0] for e in SPEC.examples if e.expect and len(set(e.expect)) == 1}
    missing = [
        rule.id for rule in SPEC.rules.values() if rule.checkable and rule.id not in triggered
    ]
    assert missing == []


def test_every_other_rule_says_why_it_is_not_checkable() -> None:
    for rule in SPEC.rules.values():
        assert rule.checkable or len(rule.not_checkable or "") > 20, rule.id


def test_no_example_expects_a_rule_marked_not_checkable() -> None:
    expected = {rule for e in SPEC.examples for rule in e.expect or ()}
    unexpected = sorted(r for r in expected if not SPEC.rules[r].checkable)
    assert unexpected == []


def test_the_bindings_know_every_rule_of_the_spec() -> None:
    assert set(RULES) == set(SPEC.rules)
