"""The array keywords in both modes: `prefixItems`, `items`, `minItems`/`maxItems`,
`uniqueItems`, `contains` with `minContains`/`maxContains`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .validator_code import Function, Ptr, plural
from .validator_core import Check, CompilerCore, Verdict, count_bound
from .validator_generic import GenericKeywords
from .validator_index import Loc


def _unique(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict | None:
    if not compiler._unique_items(node, loc):  # uniqueItems: false asserts nothing
        return None
    return f"not _unique({v})", [(False, " must not contain duplicates")]


ARRAY_CHECKS: Final = (
    count_bound("minItems", "<", "have at least", "item", "items"),
    count_bound("maxItems", ">", "have at most", "item", "items"),
    Check("uniqueItems", _unique),
)


class ArrayKeywords(GenericKeywords):
    """The array keywords."""

    def _is_array(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str
    ) -> None:
        prefix = self._subs(node, "prefixItems", loc) if "prefixItems" in node else []
        for i, (sub, sub_loc) in enumerate(prefix):
            w = fn.var("v")
            body = fn.capture(self._is, fn, ind + 1, sub, sub_loc, w)
            fn.block(ind, f"if len({v}) > {i}:", body, [(w, f"{v}[{i}]")])
        if "items" in node:
            items, items_loc = self._sub(node, "items", loc)
            if items is False:
                fn.emit(ind, f"if len({v}) > {len(prefix)}:")
                fn.emit(ind + 1, "return False")
            elif prefix:
                index, w = fn.var("i"), fn.var("v")
                body = fn.capture(self._is, fn, ind + 1, items, items_loc, w)
                header = f"for {index} in range({len(prefix)}, len({v})):"
                fn.block(ind, header, body, [(w, f"{v}[{index}]")])
            else:
                w = fn.var("v")
                body = fn.capture(lambda: self._is(fn, ind + 1, items, items_loc, w))
                fn.block(ind, f"for {w} in {v}:", body)
        self._emit_checks(fn, ind, node, loc, v, ARRAY_CHECKS, self._returns_false(fn))
        contains = self._contains(node, loc)
        if contains is not None:
            sub, sub_loc, least, most = contains
            call = self._helper("is", sub, sub_loc).name
            w = fn.var("v")
            if least == 1 and most is None:
                fn.emit(ind, f"for {w} in {v}:")
                fn.emit(ind + 1, f"if {call}({w}):")
                fn.emit(ind + 2, "break")
                fn.emit(ind, "else:")
                fn.emit(ind + 1, "return False")
            else:
                n = fn.var("n")
                fn.emit(ind, f"{n} = 0")
                fn.emit(ind, f"for {w} in {v}:")
                fn.emit(ind + 1, f"if {call}({w}):")
                fn.emit(ind + 2, f"{n} += 1")
                tests = [f"{n} < {least}"] if least else []
                if most is not None:
                    tests.append(f"{n} > {most}")
                fn.emit(ind, f"if {' or '.join(tests)}:")
                fn.emit(ind + 1, "return False")

    def _contains(
        self, node: Mapping[str, Any], loc: Loc
    ) -> tuple[object, Loc, int, int | None] | None:
        """contains with its bounds, or None when it cannot fail (as minContains: 0 makes it)."""
        least = self._count(node, "minContains", loc) if "minContains" in node else 1
        most = self._count(node, "maxContains", loc) if "maxContains" in node else None
        if "contains" not in node:
            return None
        sub, sub_loc = self._sub(node, "contains", loc)
        if least == 0 and most is None:
            self._check_tree(sub, sub_loc)  # no effect, but no unknown keyword
            return None
        return sub, sub_loc, least, most

    def _val_array(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str, ptr: Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        prefix = self._subs(node, "prefixItems", loc) if "prefixItems" in node else []
        for i, (sub, sub_loc) in enumerate(prefix):
            w = fn.var("v")
            body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, w, ptr.index(i), rule)
            fn.block(ind, f"if len({v}) > {i}:", body, [(w, f"{v}[{i}]")])
        if "items" in node:
            items, items_loc = self._sub(node, "items", loc)
            if items is False:
                fn.emit(ind, f"if len({v}) > {len(prefix)}:")
                words = f" must have at most {plural(len(prefix), 'item', 'items')}, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, f"len({v})")])
            else:
                index, w = fn.var("i"), fn.var("v")
                item_ptr = ptr.dynamic_index(index)
                body = fn.capture(self._val, fn, ind + 1, items, items_loc, w, item_ptr, rule)
                if prefix:
                    header = f"for {index} in range({len(prefix)}, len({v})):"
                    fn.block(ind, header, body, [(w, f"{v}[{index}]")])
                else:
                    fn.block(ind, f"for {index}, {w} in enumerate({v}):", body)
        self._emit_checks(fn, ind, node, loc, v, ARRAY_CHECKS, self._reports(fn, rule, ptr))
        contains = self._contains(node, loc)
        if contains is not None:
            sub, sub_loc, least, most = contains
            call = self._helper("is", sub, sub_loc).name
            matches, w = fn.var("n"), fn.var("v")
            fn.emit(ind, f"{matches} = 0")
            fn.emit(ind, f"for {w} in {v}:")
            fn.emit(ind + 1, f"if {call}({w}):")
            fn.emit(ind + 2, f"{matches} += 1")
            for limit, op, word in ((least, "<", "at least"), (most, ">", "at most")):
                if limit is None or (op == "<" and limit == 0):
                    continue
                fn.emit(ind, f"if {matches} {op} {limit}:")
                words = f" must contain {word} {plural(limit, 'item', 'items')} matching "
                message = [*subject, (False, words + "its contains schema, got "), (True, matches)]
                self._error(fn, ind + 1, rule, ptr, message)
