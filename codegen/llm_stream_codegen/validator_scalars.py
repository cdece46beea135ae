"""The string and number keywords in both modes: `minLength`, `maxLength` and `pattern`;
`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .validator_code import Function, Ptr, number_text, shorten
from .validator_core import NUMBER_BOUNDS, STRING_BOUNDS
from .validator_generic import GenericKeywords
from .validator_index import Loc


class StringKeywords(GenericKeywords):
    """The string keywords."""

    def _is_string(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str
    ) -> None:
        self._bounds(fn, ind, node, loc, v, STRING_BOUNDS, self._returns_false(fn))
        if "pattern" in node:
            fn.emit(ind, f"if {self._search(node['pattern'], loc, v, negate=True)}:")
            fn.emit(ind + 1, "return False")

    def _val_string(
        self,
        fn: Function,
        ind: int,
        node: Mapping[str, Any],
        loc: Loc,
        v: str,
        ptr: Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        self._bounds(fn, ind, node, loc, v, STRING_BOUNDS, self._reports(fn, rule, ptr))
        if "pattern" in node:
            pattern = node["pattern"]
            fn.emit(ind, f"if {self._search(pattern, loc, v, negate=True)}:")
            message = [*subject, (False, f" must match the pattern {shorten(pattern)}")]
            self._error(fn, ind + 1, rule, ptr, message)


class NumberKeywords(GenericKeywords):
    """The number keywords."""

    def _not_multiple_test(self, node: Mapping[str, Any], loc: Loc, v: str) -> str | None:
        if "multipleOf" not in node:
            return None
        divisor = self._number(node, "multipleOf", loc)
        if divisor <= 0:
            raise loc.fail(f"multipleOf must be greater than 0, got {divisor!r}")
        if isinstance(divisor, float):
            return f"_not_multiple({v}, {divisor!r})"
        return f"{v} % {divisor}"

    def _is_number(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str
    ) -> None:
        self._bounds(fn, ind, node, loc, v, NUMBER_BOUNDS, self._returns_false(fn))
        test = self._not_multiple_test(node, loc, v)
        if test is not None:
            fn.emit(ind, f"if {test}:")
            fn.emit(ind + 1, "return False")

    def _val_number(
        self,
        fn: Function,
        ind: int,
        node: Mapping[str, Any],
        loc: Loc,
        v: str,
        ptr: Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        self._bounds(fn, ind, node, loc, v, NUMBER_BOUNDS, self._reports(fn, rule, ptr))
        test = self._not_multiple_test(node, loc, v)
        if test is not None:
            fn.emit(ind, f"if {test}:")
            words = f" must be a multiple of {number_text(node['multipleOf'])}, got "
            self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, v)])
