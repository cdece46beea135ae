"""The string and number keywords in both modes: `minLength`, `maxLength` and `pattern`;
`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .validator_code import Function, Ptr, number_text, plural, shorten
from .validator_generic import GenericKeywords
from .validator_index import Loc


class StringKeywords(GenericKeywords):
    """The string keywords."""

    def _is_string(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str
    ) -> None:
        if "minLength" in node:
            fn.emit(ind, f"if len({v}) < {self._count(node, 'minLength', loc)}:")
            fn.emit(ind + 1, "return False")
        if "maxLength" in node:
            fn.emit(ind, f"if len({v}) > {self._count(node, 'maxLength', loc)}:")
            fn.emit(ind + 1, "return False")
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
        for key, op, word in (("minLength", "<", "at least"), ("maxLength", ">", "at most")):
            if key in node:
                n = self._count(node, key, loc)
                fn.emit(ind, f"if len({v}) {op} {n}:")
                words = f" must be {word} {plural(n, 'character', 'characters')} long, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, f"len({v})")])
        if "pattern" in node:
            pattern = node["pattern"]
            fn.emit(ind, f"if {self._search(pattern, loc, v, negate=True)}:")
            message = [*subject, (False, f" must match the pattern {shorten(pattern)}")]
            self._error(fn, ind + 1, rule, ptr, message)


class NumberKeywords(GenericKeywords):
    """The number keywords."""

    _COMPARISONS: Final = (
        ("minimum", "<", ">="),
        ("maximum", ">", "<="),
        ("exclusiveMinimum", "<=", ">"),
        ("exclusiveMaximum", ">=", "<"),
    )

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
        for key, fails, _ in self._COMPARISONS:
            if key in node:
                fn.emit(ind, f"if {v} {fails} {self._number(node, key, loc)!r}:")
                fn.emit(ind + 1, "return False")
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
        for key, fails, holds in self._COMPARISONS:
            if key in node:
                limit = self._number(node, key, loc)
                fn.emit(ind, f"if {v} {fails} {limit!r}:")
                words = f" must be {holds} {number_text(limit)}, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, v)])
        test = self._not_multiple_test(node, loc, v)
        if test is not None:
            fn.emit(ind, f"if {test}:")
            words = f" must be a multiple of {number_text(node['multipleOf'])}, got "
            self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, v)])
