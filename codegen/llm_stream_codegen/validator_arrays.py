"""The array keywords in both modes: `prefixItems`, `items`, `minItems`/`maxItems`,
`uniqueItems`, `contains` with `minContains`/`maxContains`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .validator_code import Ptr, plural
from .validator_core import Check, CompilerCore, Verdict, count_bound
from .validator_generic import GenericKeywords
from .validator_index import Loc
from .validator_modes import Failure, Mode


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

    def _array_keywords(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                        ptr: Ptr, rule: str) -> None:
        fn = mode.fn
        subject = ptr.subject()
        prefix = self._subs(node, "prefixItems", loc) if "prefixItems" in node else []
        for i, (sub, sub_loc) in enumerate(prefix):
            w = fn.var("v")
            body = fn.capture(mode.visit, ind + 1, sub, sub_loc, w, ptr.index(i), rule)
            fn.block(ind, f"if len({v}) > {i}:", body, [(w, f"{v}[{i}]")])
        if "items" in node:
            items, items_loc = self._sub(node, "items", loc)
            if items is False:
                fn.emit(ind, f"if len({v}) > {len(prefix)}:")
                words = f" must have at most {plural(len(prefix), 'item', 'items')}, got "
                mode.fail(ind + 1, rule, ptr, [*subject, (False, words), (True, f"len({v})")])
            else:
                # An item's index is counted past a prefix, and where the full path names it.
                index = fn.var("i") if prefix or mode.reports else ""
                w = fn.var("v")
                item_ptr = ptr.dynamic_index(index)
                body = fn.capture(mode.visit, ind + 1, items, items_loc, w, item_ptr, rule)
                if prefix:
                    header = f"for {index} in range({len(prefix)}, len({v})):"
                    fn.block(ind, header, body, [(w, f"{v}[{index}]")])
                elif index:
                    fn.block(ind, f"for {index}, {w} in enumerate({v}):", body)
                else:
                    fn.block(ind, f"for {w} in {v}:", body)
        self._emit_checks(mode, ind, node, loc, v, ptr, rule, ARRAY_CHECKS)
        contains = self._contains(node, loc)
        if contains is None:
            return
        sub, sub_loc, least, most = contains
        call = self.helpers.get("is", sub, sub_loc).name
        if least == 1 and most is None and not mode.reports:  # the fast path stops at a match
            w = fn.var("v")
            fn.emit(ind, f"for {w} in {v}:")
            fn.emit(ind + 1, f"if {call}({w}):")
            fn.emit(ind + 2, "break")
            fn.emit(ind, "else:")
            mode.fail(ind + 1, rule, ptr, [])
            return
        matches, w = fn.var("n"), fn.var("v")
        fn.emit(ind, f"{matches} = 0")
        fn.emit(ind, f"for {w} in {v}:")
        fn.emit(ind + 1, f"if {call}({w}):")
        fn.emit(ind + 2, f"{matches} += 1")
        failures: list[Failure] = []
        for limit, op, word in ((least, "<", "at least"), (most, ">", "at most")):
            if limit is None or (op == "<" and limit == 0):
                continue
            words = f" must contain {word} {plural(limit, 'item', 'items')} matching "
            message = [*subject, (False, words + "its contains schema, got "), (True, matches)]
            failures.append((f"{matches} {op} {limit}", ptr, message))
        mode.fail_any(ind, rule, failures)

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
