"""The keywords of every type, in both modes: `type`, `const` and `enum`, the applicators (`allOf`,
`anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `$ref`), and the dispatch of a node's other keywords
to their family (objects, arrays, strings, numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .validator_code import (
    LINE_LENGTH,
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
    VALUE_CHECKS,
    CompilerCore,
    rule_of,
    singled_out,
)
from .validator_index import Loc, child_loc
from .validator_modes import Mode
from .validator_runtime import uses


class GenericKeywords(CompilerCore):
    """The keywords of every type, and the dispatch to the families."""

    def _node(self, mode: Mode, ind: int, node: object, loc: Loc, v: str, ptr: Ptr,
              rule: str) -> None:
        """The checks of the schema `node` on the value `v`, at `ptr`, in `mode`."""
        node = self._schema(node, loc)
        if isinstance(node, bool):
            if not node:
                mode.fail(ind, rule, ptr, [*ptr.subject(), (False, " is not allowed")])
            return
        fn = mode.fn
        rule = rule_of(node, rule)
        types = self._types(node, loc)
        done = self._type(mode, ind, node, loc, v, ptr, rule, types) if types is not None else ()
        self._emit_checks(mode, ind, node, loc, v, ptr, rule, VALUE_CHECKS)
        for group, keywords in GROUPS:
            if group in done or not any(k in node for k in keywords):
                continue
            guard = self._group_guard(types, group, v)
            if guard is None:
                continue
            if mode.reports and types is not None and guard == "" and types != [group]:
                guard = type_test([group], v, negate=False)  # integer: report bounds of 1.5 too
            inner = ind + 1 if guard else ind
            body = fn.capture(self._group(group), mode, inner, node, loc, v, ptr, rule)
            if body and guard:
                fn.emit(ind, f"if {bare(guard)}:")
            fn.lines.extend(body)
        self._applicators(mode, ind, node, loc, v, ptr, rule)

    def _type(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str, ptr: Ptr,
              rule: str, types: list[str]) -> tuple[str, ...]:
        """type, and the type groups whose keywords it checked: the full path checks those of
        the one declared group under the type test, the error its else; the fast path returns
        at the test."""
        fn = mode.fn
        if not mode.reports and types == ["object"] and len(self._fetched(node, loc)) > 1:
            # Members are fetched with v[key] in one try: a dict subclass is copied first, so
            # that no __missing__ (defaultdict, Counter) answers for an absent member.
            fn.emit(ind, f"if type({v}) is not dict:")
            fn.emit(ind + 1, f"if not isinstance({v}, dict):")
            mode.fail(ind + 2, rule, ptr, [])
            fn.emit(ind + 1, f"{v} = dict({v})  # so that no __missing__ answers for a member")
            return ()
        message = [*ptr.subject(), (False, f" must be {type_words(types)}, got "),
                   (True, f"_kind({v})")]
        group = types[0] if len(types) == 1 and types[0] != "integer" else None
        if not mode.reports or group not in ("object", "array", "string", "number"):
            group = None
        body: list[str] = []
        if group is not None and any(k in node for k in dict(GROUPS)[group]):
            body = fn.capture(self._group(group), mode, ind + 1, node, loc, v, ptr, rule)
        if body:
            fn.emit(ind, f"if {bare(type_test(types, v, negate=False))}:")
            fn.lines.extend(body)
            fn.emit(ind, "else:")
        else:
            fn.emit(ind, f"if {type_test(types, v, negate=True)}:")
        mode.fail(ind + 1, rule, ptr, message)
        return (group,) if group else ()

    def _group(self, group: str) -> Callable[..., None]:
        """The keywords of a type group (object, array, string, number), in a mode."""
        build: Callable[..., None] = getattr(self, f"_{group}_keywords")
        return build

    def _conditional(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                     ptr: Ptr, rule: str) -> None:
        """if/then/else: the if schema is a helper, then and else are inlined."""
        fn = mode.fn
        condition, condition_loc = self._sub(node, "if", loc)
        branches = {
            key: fn.capture(mode.visit, ind + 1, *self._sub(node, key, loc), v, ptr, rule)
            if key in node else []
            for key in ("then", "else")
        }
        then, otherwise = branches["then"], branches["else"]
        if not then and not otherwise:
            self._check_tree(condition, condition_loc)  # no effect, but no unknown keyword
            return
        call = f"{self.helpers.get('is', condition, condition_loc).name}({v})"
        if then:
            fn.emit(ind, f"if {call}:")
            fn.lines.extend(then)
            if otherwise:
                fn.emit(ind, "else:")
                fn.lines.extend(otherwise)
        else:
            fn.emit(ind, f"if not {call}:")
            fn.lines.extend(otherwise)

    def _applicators(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                     ptr: Ptr, rule: str) -> None:
        fn = mode.fn
        subject = ptr.subject()
        if "allOf" in node:
            for sub, sub_loc in self._subs(node, "allOf", loc):
                mode.visit(ind, sub, sub_loc, v, ptr, rule)
        for key in ("anyOf", "oneOf"):
            if key not in node:
                continue
            branches = self._subs(node, key, loc)
            if len(branches) == 1:
                mode.visit(ind, *branches[0], v, ptr, rule)
                continue
            calls = [f"{self.helpers.get('is', s, sl).name}({v})" for s, sl in branches]
            count = len(branches)
            if key == "anyOf":
                self._emit_condition(fn, ind, "not (", calls, " or ", ")")
                words = f" must match at least one of {count} alternatives"
                mode.no_branch(ind + 1, branches, v, ptr, rule, [*subject, (False, words)])
                continue
            words = f" must match exactly one of {count} alternatives"
            if not mode.reports:  # only whether exactly one matches
                self._emit_condition(fn, ind, "", calls, " + ", " != 1")
                mode.fail(ind + 1, rule, ptr, [])
                continue
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
            mode.no_branch(ind + 1, branches, v, ptr, rule, [*subject, (False, words)])
            fn.emit(ind, f"elif {n} > 1:")
            mode.fail(ind + 1, rule, ptr, [*subject, (False, f"{words}, but matches "), (True, n)])
        if "not" in node:
            sub, sub_loc = self._sub(node, "not", loc)
            fn.emit(ind, f"if {self.helpers.get('is', sub, sub_loc).name}({v}):")
            forbidden = (
                self._strings(sub, "required", sub_loc)
                if isinstance(sub, Mapping) and set(sub) - ANNOTATION_KEYWORDS == {"required"}
                else []
            )
            if len(forbidden) == 1:
                member = ptr.key(forbidden[0])
                mode.fail(ind + 1, rule, member, [*member.parts, (False, " must not be present")])
            else:
                shown = shorten(json_text(sub), 60)
                mode.fail(ind + 1, rule, ptr, [*subject, (False, f" must not match {shown}")])
        if "if" in node:
            self._conditional(mode, ind, node, loc, v, ptr, rule)
        else:
            for key in ("then", "else"):
                if key in node:
                    self._sub(node, key, loc)
        if "$ref" in node:
            mode.call(ind, *self._resolve(node, loc), v, ptr, rule)

    def _discriminate(
        self,
        mode: Mode,
        ind: int,
        branches: list[tuple[object, Loc]],
        v: str,
        ptr: Ptr,
        rule: str,
        message: list[Part],
    ) -> None:
        """No alternative matched: report the errors of the one the value evidently meant
        (told by its type and the string consts of its properties), else one error."""
        fn = mode.fn
        tests = [self._looks_like(sub, sub_loc, v) for sub, sub_loc in branches]
        names = [fn.var("c") if test else "" for test in tests]
        chosen: list[tuple[str, int]] = []  # (condition, branch)
        for i, others in singled_out(tests, names):
            rest = f"not ({' or '.join(others)})" if len(others) > 1 else f"not {others[0]}"
            chosen.append((f"{names[i]} and {rest}" if tests[i] else rest, i))
        if not chosen:
            mode.fail(ind, rule, ptr, message)
            return
        used = " ".join(condition for condition, _ in chosen)
        for name, test in zip(names, tests, strict=True):
            if name and test and uses(name, used):
                fn.emit(ind, f"{name} = {bare(test)}")
        for n, (condition, i) in enumerate(chosen):
            fn.emit(ind, f"{'elif' if n else 'if'} {condition}:")
            mode.call(ind + 1, *branches[i], v, ptr, rule)
        fn.emit(ind, "else:")
        mode.fail(ind + 1, rule, ptr, message)

    def _looks_like(self, node: object, loc: Loc, v: str) -> str | None:
        """A cheap test that ``v`` is meant for this branch, or None if nothing tells."""

        def member_is(name: str, value: str, required: bool) -> str:
            default = "" if required else f", {lit(value)}"
            return f"{v}.get({lit(name)}{default}) == {lit(value)}"

        tests = self._branch_tests(node, loc, lambda types: type_test(types, v, negate=False),
                                   f"isinstance({v}, dict)", member_is)
        return " and ".join(tests) or None

    def _branch_tests(self, node: object, loc: Loc, type_is: Callable[[list[str]], str],
                      is_object: str, member_is: Callable[[str, str, bool], str]) -> list[str]:
        """What tells that a value is meant for a branch, in the generated language: its type,
        and the string consts of its members (a required one present with the value, another
        present with it or absent)."""
        types, consts = self._shape(node, loc, 0)
        tests = [type_is(types)] if types is not None else []
        if consts and types != ["object"]:
            tests.append(is_object)
        return tests + [member_is(name, value, required) for name, value, required in consts]

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
