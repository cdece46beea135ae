"""The string and number keywords in both modes: `minLength`, `maxLength` and `pattern`;
`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .validator_code import Ptr, number_text, shorten
from .validator_core import Check, CompilerCore, Verdict, count_bound, number_bound
from .validator_generic import GenericKeywords
from .validator_index import Loc
from .validator_modes import Mode


def _pattern(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict:
    pattern = node["pattern"]
    return (compiler._search(pattern, loc, v, negate=True),
            [(False, f" must match the pattern {shorten(pattern)}")])


def _multiple_of(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict:
    divisor = compiler._number(node, "multipleOf", loc)
    if divisor <= 0:
        raise loc.fail(f"multipleOf must be greater than 0, got {divisor!r}")
    test = f"_not_multiple({v}, {divisor!r})" if isinstance(divisor, float) else f"{v} % {divisor}"
    return test, [(False, f" must be a multiple of {number_text(node['multipleOf'])}, got "),
                  (True, v)]


STRING_CHECKS: Final = (
    count_bound("minLength", "<", "be at least", "character", "characters", " long"),
    count_bound("maxLength", ">", "be at most", "character", "characters", " long"),
    Check("pattern", _pattern),
)
NUMBER_CHECKS: Final = (
    number_bound("minimum", "<", ">="),
    number_bound("maximum", ">", "<="),
    number_bound("exclusiveMinimum", "<=", ">"),
    number_bound("exclusiveMaximum", ">=", "<"),
    Check("multipleOf", _multiple_of),
)


class StringKeywords(GenericKeywords):
    """The string keywords."""

    def _string_keywords(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                         ptr: Ptr, rule: str) -> None:
        self._emit_checks(mode, ind, node, loc, v, ptr, rule, STRING_CHECKS)


class NumberKeywords(GenericKeywords):
    """The number keywords."""

    def _number_keywords(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                         ptr: Ptr, rule: str) -> None:
        self._emit_checks(mode, ind, node, loc, v, ptr, rule, NUMBER_CHECKS)
