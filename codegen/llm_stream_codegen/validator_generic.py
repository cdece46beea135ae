"""The keywords of every type, in both modes: `type`, `const` and `enum`, the applicators (`allOf`,
`anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `$ref`), and the dispatch of a node's other keywords
to their family (objects, arrays, strings, numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .validator_code import (
    LINE_LENGTH,
    Function,
    Part,
    Ptr,
    bare,
    json_text,
    lit,
    shorten,
    type_test,
    type_words,
)
from .validator_core import (
    ANNOTATION_KEYWORDS,
    GROUPS,
    MAX_DISCRIMINATED_BRANCHES,
    VALUE_CHECKS,
    CompilerCore,
)
from .validator_index import Loc, child_loc
from .validator_runtime import uses


class GenericKeywords(CompilerCore):
    """The keywords of every type, and the dispatch to the families."""

    # ---- the fast path: statements that return False unless v is valid --------------------

    def _is(self, fn: Function, ind: int, node: object, loc: Loc, v: str) -> None:
        if node is True:
            return
        if node is False or not isinstance(node, Mapping):
            if node is not False:
                raise loc.fail(f"a schema must be an object or a boolean, got {node!r}")
            fn.emit(ind, "return False")
            return
        self._check(node, loc)
        types = self._types(node, loc)
        if types == ["object"] and len(self._fetched(node, loc)) > 1:
            # Members are fetched with v[key] in one try: a dict subclass is copied first, so
            # that no __missing__ (defaultdict, Counter) answers for an absent member.
            fn.emit(ind, f"if type({v}) is not dict:")
            fn.emit(ind + 1, f"if not isinstance({v}, dict):")
            fn.emit(ind + 2, "return False")
            fn.emit(ind + 1, f"{v} = dict({v})  # so that no __missing__ answers for a member")
        elif types is not None:
            fn.emit(ind, f"if {type_test(types, v, negate=True)}:")
            fn.emit(ind + 1, "return False")
        self._emit_checks(fn, ind, node, loc, v, VALUE_CHECKS, self._returns_false(fn))
        for group, keywords in GROUPS:
            if not any(k in node for k in keywords):
                continue
            guard = self._group_guard(types, group, v)
            if guard is None:
                continue
            inner = ind + 1 if guard else ind
            build = getattr(self, f"_is_{group}")
            body = fn.capture(build, fn, inner, node, loc, v)
            if body and guard:
                fn.emit(ind, f"if {bare(guard)}:")
            fn.lines.extend(body)
        self._is_applicators(fn, ind, node, loc, v)

    def _is_applicators(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str
    ) -> None:
        if "allOf" in node:
            for sub, sub_loc in self._subs(node, "allOf", loc):
                self._is(fn, ind, sub, sub_loc, v)
        # anyOf fails when no branch holds, oneOf when not exactly one does.
        for key, head, joint, tail in (
            ("anyOf", "not (", " or ", ")"),
            ("oneOf", "", " + ", " != 1"),
        ):
            if key in node:
                branches = self._subs(node, key, loc)
                if len(branches) == 1:
                    self._is(fn, ind, *branches[0], v)
                else:
                    calls = [f"{self._helper('is', s, sl).name}({v})" for s, sl in branches]
                    self._emit_condition(fn, ind, head, calls, joint, tail)
                    fn.emit(ind + 1, "return False")
        if "not" in node:
            sub, sub_loc = self._sub(node, "not", loc)
            fn.emit(ind, f"if {self._helper('is', sub, sub_loc).name}({v}):")
            fn.emit(ind + 1, "return False")
        if "if" in node:
            self._conditional(fn, ind, node, loc, v, lambda i, s, sl: self._is(fn, i, s, sl, v))
        else:
            for key in ("then", "else"):
                if key in node:
                    self._sub(node, key, loc)
        if "$ref" in node:
            target, target_loc = self._resolve(node, loc)
            fn.emit(ind, f"if not {self._helper('is', target, target_loc).name}({v}):")
            fn.emit(ind + 1, "return False")

    def _conditional(
        self,
        fn: Function,
        ind: int,
        node: Mapping[str, Any],
        loc: Loc,
        v: str,
        inline: Callable[[int, object, Loc], None],
    ) -> None:
        """if/then/else: the if schema is a helper, then and else are inlined."""
        condition, condition_loc = self._sub(node, "if", loc)
        then = (
            fn.capture(lambda: inline(ind + 1, *self._sub(node, "then", loc)))
            if ("then" in node)
            else []
        )
        otherwise = (
            fn.capture(lambda: inline(ind + 1, *self._sub(node, "else", loc)))
            if ("else" in node)
            else []
        )
        if not then and not otherwise:
            self._check_tree(condition, condition_loc)  # no effect, but no unknown keyword
            return
        call = f"{self._helper('is', condition, condition_loc).name}({v})"
        if then:
            fn.emit(ind, f"if {call}:")
            fn.lines.extend(then)
            if otherwise:
                fn.emit(ind, "else:")
                fn.lines.extend(otherwise)
        else:
            fn.emit(ind, f"if not {call}:")
            fn.lines.extend(otherwise)

    def _val(
        self, fn: Function, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str
    ) -> None:
        if node is True:
            return
        if node is False or not isinstance(node, Mapping):
            if node is not False:
                raise loc.fail(f"a schema must be an object or a boolean, got {node!r}")
            self._error(fn, ind, rule, ptr, [*ptr.subject(), (False, " is not allowed")])
            return
        self._check(node, loc)
        rule = self._rule_of(node, rule)
        subject = ptr.subject()
        types = self._types(node, loc)
        done: set[str] = set()
        if types is not None:
            message = [
                *subject,
                (False, f" must be {type_words(types)}, got "),
                (True, f"_kind({v})"),
            ]
            group = types[0] if len(types) == 1 and types[0] != "integer" else None
            body: list[str] = []
            if group in ("object", "array", "string", "number"):
                keywords = dict(GROUPS)[group]
                if any(k in node for k in keywords):
                    build = getattr(self, f"_val_{group}")
                    body = fn.capture(build, fn, ind + 1, node, loc, v, ptr, rule)
                done.add(group)
            if body:
                fn.emit(ind, f"if {bare(type_test(types, v, negate=False))}:")
                fn.lines.extend(body)
                fn.emit(ind, "else:")
            else:
                fn.emit(ind, f"if {type_test(types, v, negate=True)}:")
            self._error(fn, ind + 1, rule, ptr, message)
        self._emit_checks(fn, ind, node, loc, v, VALUE_CHECKS, self._reports(fn, rule, ptr))
        for group, keywords in GROUPS:
            if group in done or not any(k in node for k in keywords):
                continue
            guard = self._group_guard(types, group, v)
            if guard is None:
                continue
            if types is not None and guard == "" and types != [group]:
                guard = type_test([group], v, negate=False)  # integer: report bounds of 1.5 too
            inner = ind + 1 if guard else ind
            build = getattr(self, f"_val_{group}")
            body = fn.capture(build, fn, inner, node, loc, v, ptr, rule)
            if body and guard:
                fn.emit(ind, f"if {bare(guard)}:")
            fn.lines.extend(body)
        self._val_applicators(fn, ind, node, loc, v, ptr, rule)

    def _val_applicators(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str, ptr: Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        if "allOf" in node:
            for sub, sub_loc in self._subs(node, "allOf", loc):
                self._val(fn, ind, sub, sub_loc, v, ptr, rule)
        for key in ("anyOf", "oneOf"):
            if key not in node:
                continue
            branches = self._subs(node, key, loc)
            if len(branches) == 1:
                self._val(fn, ind, *branches[0], v, ptr, rule)
                continue
            calls = [f"{self._helper('is', s, sl).name}({v})" for s, sl in branches]
            count = len(branches)
            if key == "anyOf":
                self._emit_condition(fn, ind, "not (", calls, " or ", ")")
                words = f" must match at least one of {count} alternatives"
                self._val_no_branch(fn, ind + 1, branches, v, ptr, rule,
                                    [*subject, (False, words)])
            else:
                n = fn.var("n")
                sums = " + ".join(calls)
                if len(sums) + len(n) + 3 + 4 * ind <= LINE_LENGTH:
                    fn.emit(ind, f"{n} = {sums}")
                else:
                    fn.emit(ind, f"{n} = (")
                    for i, call in enumerate(calls):
                        fn.emit(ind + 1, ("+ " if i else "") + call)
                    fn.emit(ind, ")")
                fn.emit(ind, f"if {n} == 0:")
                words = f" must match exactly one of {count} alternatives"
                self._val_no_branch(fn, ind + 1, branches, v, ptr, rule,
                                    [*subject, (False, words)])
                fn.emit(ind, f"elif {n} > 1:")
                message = [
                    *subject,
                    (False, f" must match exactly one of {count} alternatives, but matches "),
                    (True, n),
                ]
                self._error(fn, ind + 1, rule, ptr, message)
        if "not" in node:
            sub, sub_loc = self._sub(node, "not", loc)
            fn.emit(ind, f"if {self._helper('is', sub, sub_loc).name}({v}):")
            forbidden = (
                self._strings(sub, "required", sub_loc)
                if isinstance(sub, Mapping) and set(sub) - ANNOTATION_KEYWORDS == {"required"}
                else []
            )
            if len(forbidden) == 1:
                member = ptr.key(forbidden[0])
                self._error(
                    fn, ind + 1, rule, member, [*member.parts, (False, " must not be present")]
                )
            else:
                shown = shorten(json_text(sub), 60)
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, f" must not match {shown}")])
        if "if" in node:
            self._conditional(
                fn, ind, node, loc, v, lambda i, s, sl: self._val(fn, i, s, sl, v, ptr, rule)
            )
        else:
            for key in ("then", "else"):
                if key in node:
                    self._sub(node, key, loc)
        if "$ref" in node:
            target, target_loc = self._resolve(node, loc)
            fn.emit(ind, self._call_val(target, target_loc, v, ptr, rule))

    def _val_no_branch(
        self,
        fn: Function,
        ind: int,
        branches: list[tuple[object, Loc]],
        v: str,
        ptr: Ptr,
        rule: str,
        message: list[Part],
    ) -> None:
        """No alternative matched: report the errors of the one the value evidently meant
        (told by its type and the string consts of its properties), else one error."""
        tests = [self._looks_like(sub, sub_loc, v) for sub, sub_loc in branches]
        names = [fn.var("c") if test else "" for test in tests]
        chosen: list[tuple[str, int]] = []  # (condition, branch)
        if len(branches) <= MAX_DISCRIMINATED_BRANCHES:
            for i, test in enumerate(tests):
                others = [names[j] for j in range(len(tests)) if j != i]
                if not all(others) or test in tests[:i] + tests[i + 1 :]:
                    continue  # another branch is as plausible: cannot single this one out
                rest = f"not ({' or '.join(others)})" if len(others) > 1 else f"not {others[0]}"
                chosen.append((f"{names[i]} and {rest}" if test else rest, i))
        if not chosen:
            self._error(fn, ind, rule, ptr, message)
            return
        used = " ".join(condition for condition, _ in chosen)
        for name, test in zip(names, tests, strict=True):
            if name and test and uses(name, used):
                fn.emit(ind, f"{name} = {bare(test)}")
        for n, (condition, i) in enumerate(chosen):
            fn.emit(ind, f"{'elif' if n else 'if'} {condition}:")
            fn.emit(ind + 1, self._call_val(*branches[i], v, ptr, rule))
        fn.emit(ind, "else:")
        self._error(fn, ind + 1, rule, ptr, message)

    def _looks_like(self, node: object, loc: Loc, v: str) -> str | None:
        """A cheap test that ``v`` is meant for this branch, or None if nothing tells."""
        types, consts = self._shape(node, loc, 0)
        tests = []
        if types is not None:
            tests.append(type_test(types, v, negate=False))
        if consts:
            if types != ["object"]:
                tests.append(f"isinstance({v}, dict)")
            for name, value, required in consts:
                if required:
                    tests.append(f"{v}.get({lit(name)}) == {lit(value)}")
                else:
                    tests.append(f"{v}.get({lit(name)}, {lit(value)}) == {lit(value)}")
        return " and ".join(tests) or None

    def _shape(
        self, node: object, loc: Loc, depth: int
    ) -> tuple[list[str] | None, list[tuple[str, str, bool]]]:
        if not isinstance(node, Mapping) or depth > 8:
            return None, []
        types = self._types(node, loc)
        consts: list[tuple[str, str, bool]] = []
        required = node.get("required", [])
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                if isinstance(sub, Mapping) and isinstance(sub.get("const"), str):
                    consts.append((name, sub["const"], name in required))
        inner = []
        if isinstance(node.get("allOf"), list | tuple):
            inner += [(s, child_loc(loc, s, "allOf", i)) for i, s in enumerate(node["allOf"])]
        if isinstance(node.get("$ref"), str):
            inner.append(self._resolve(node, loc))
        for sub, sub_loc in inner:
            sub_types, sub_consts = self._shape(sub, sub_loc, depth + 1)
            types = types if types is not None else sub_types
            consts += [c for c in sub_consts if c[0] not in {n for n, _, _ in consts}]
        return types, consts
