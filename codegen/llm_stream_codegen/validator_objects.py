"""The object keywords in both modes: `properties`, `required`, `patternProperties`,
`additionalProperties`, `propertyNames`, `minProperties`/`maxProperties`, `dependentRequired` and
`dependentSchemas`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from .validator_code import Ptr, lit, name_wanted
from .validator_core import count_bound, rule_of
from .validator_generic import GenericKeywords
from .validator_index import Loc
from .validator_modes import Mode
from .validator_runtime import uses

OBJECT_CHECKS: Final = (
    count_bound("minProperties", "<", "have at least", "property", "properties"),
    count_bound("maxProperties", ">", "have at most", "property", "properties"),
)


class ObjectKeywords(GenericKeywords):
    """The object keywords."""

    def _object_keywords(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                         ptr: Ptr, rule: str) -> None:
        fn = mode.fn
        props = self._sub_map(node, "properties", loc) if "properties" in node else []
        required = self._strings(node, "required", loc) if "required" in node else []
        self._properties(mode, ind, node, loc, v, ptr, rule, props, set(required))
        known = {name for name, _, _ in props}
        for name in required:
            if name not in known:
                member = ptr.key(name)
                fn.emit(ind, f"if {lit(name)} not in {v}:")
                mode.fail(ind + 1, rule, member, [*member.parts, (False, " is required")])
        patterns = (
            self._sub_map(node, "patternProperties", loc) if ("patternProperties" in node) else []
        )
        regexes = [self._regex(p, loc) for p, _, _ in patterns]
        k, w = fn.var("k"), fn.var("v")
        body = []
        for regex, (_, sub, sub_loc) in zip(regexes, patterns, strict=True):
            inner = fn.capture(mode.visit, ind + 2, sub, sub_loc, w, ptr.dynamic_key(k), rule)
            if inner:
                body += [f"{'    ' * (ind + 1)}if {regex}.search({k}) is not None:", *inner]
        fn.block(ind, f"for {k}, {w} in {v}.items():", body)
        if "additionalProperties" in node:
            extra, extra_loc = self._sub(node, "additionalProperties", loc)
            if extra is False and not regexes and not mode.reports:
                self._no_other_members(mode, ind, v, known, required)
            else:
                k, w = fn.var("k"), fn.var("v")
                member = ptr.dynamic_key(k)
                if extra is False:
                    message = [*member.parts, (False, " is not allowed (unknown property)")]
                    inner = fn.capture(mode.fail, ind + 2, rule, member, message)
                else:
                    inner = fn.capture(mode.visit, ind + 2, extra, extra_loc, w, member, rule)
                if inner:
                    test = f"{'    ' * (ind + 1)}if {self._is_additional(k, known, regexes)}:"
                    fn.block(ind, f"for {k}, {w} in {v}.items():", [test, *inner])
        if "propertyNames" in node:
            names, names_loc = self._sub(node, "propertyNames", loc)
            if not self._trivial(names):
                k = fn.var("k")
                member = ptr.dynamic_key(k)
                message = [*member.parts, (False, name_wanted(names))]
                names_rule = rule_of(names, rule)
                inner = fn.capture(mode.holds, ind + 1, names, names_loc, k, names_rule, member,
                                   message)
                fn.block(ind, f"for {k} in {v}:", inner)
        self._emit_checks(mode, ind, node, loc, v, ptr, rule, OBJECT_CHECKS)
        for name, needs in self._dependent_required(node, loc):
            trigger = ptr.key(name)
            failures = []
            for need in needs:
                member = ptr.key(need)
                message = [*member.parts, (False, " is required when "), *trigger.parts]
                failures.append((f"{lit(need)} not in {v}", member,
                                 [*message, (False, " is present")]))
            mode.fail_any(ind, rule, failures, f"{lit(name)} in {v}")
        if "dependentSchemas" in node:
            for name, sub, sub_loc in self._sub_map(node, "dependentSchemas", loc):
                body = fn.capture(mode.visit, ind + 1, sub, sub_loc, v, ptr, rule)
                fn.block(ind, f"if {lit(name)} in {v}:", body)

    def _properties(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                    ptr: Ptr, rule: str, props: list[tuple[str, object, Loc]],
                    required: set[str]) -> None:
        """Each member's subschema where it is present, and a failure where a required one is
        absent. The fast path tests a string const with one get, only the presence of a member
        whose schema accepts everything, and fetches required members (all in one try where
        `_is` made the value a dict)."""
        fn = mode.fn
        fast = not mode.reports
        in_try = fast and self._types(node, loc) == ["object"] and len(self._fetched(node, loc)) > 1
        fetch: list[str] = []  # ``var = v[key]`` lines: members known to be present
        checks: list[str] = []
        for name, sub, sub_loc in props:
            key, member = lit(name), ptr.key(name)
            missing = (rule_of(sub, rule), member, [*member.parts, (False, " is required")])
            const = self._simple_const(sub, sub_loc) if fast else None
            if const is not None:  # a missing member reads as None, which is no string
                test = f"{v}.get({key})" if name in required else f"{v}.get({key}, {lit(const)})"
                fn.emit(ind, f"if {test} != {lit(const)}:")
                mode.fail(ind + 1, *missing)
                continue
            if fast and self._trivial(sub):
                if name in required:
                    fn.emit(ind, f"if {key} not in {v}:")
                    mode.fail(ind + 1, *missing)
                continue
            w = fn.var("v")
            if fast and name in required:
                body = fn.capture(mode.visit, ind, sub, sub_loc, w, member, rule)
                if in_try:
                    fetch.append(f"{w} = {v}[{key}]")
                    checks.extend(body)
                    continue
                fn.emit(ind, f"if {key} not in {v}:")
                mode.fail(ind + 1, *missing)
                if uses(w, "\n".join(body)):
                    fn.emit(ind, f"{w} = {v}[{key}]")
                fn.lines.extend(body)
                continue
            body = fn.capture(mode.visit, ind + 1, sub, sub_loc, w, member, rule)
            present = fn.capture(fn.block, ind, f"if {key} in {v}:", body, [(w, f"{v}[{key}]")])
            (checks if in_try else fn.lines).extend(present)
            if name in required:  # the full path: present, checked; else missing
                fn.emit(ind, "else:" if body else f"if {key} not in {v}:")
                mode.fail(ind + 1, *missing)
        if fetch:
            fn.emit(ind, "try:")
            for line in fetch:
                fn.emit(ind + 1, line)
            fn.emit(ind, "except KeyError:")
            mode.fail(ind + 1, rule, ptr, [])
            fn.lines.extend(checks)

    def _no_other_members(self, mode: Mode, ind: int, v: str, known: set[str],
                          required: list[str]) -> None:
        """additionalProperties: false without patterns, in the fast path: one set test."""
        present = len([n for n in required if n in known])
        if known and present:  # all required members are there: more keys, extra ones?
            keys = self._string_set(sorted(known))
            mode.fn.emit(ind, f"if len({v}) > {present} and not {keys}.issuperset({v}):")
        elif known:
            mode.fn.emit(ind, f"if not {self._string_set(sorted(known))}.issuperset({v}):")
        else:
            mode.fn.emit(ind, f"if {v}:")
        mode.fail(ind + 1, "", Ptr(), [])

    def _is_additional(self, k: str, known: set[str], regexes: list[str]) -> str:
        tests = []
        if known:
            tests.append(f"{k} not in {self._string_set(sorted(known))}")
        tests += [f"{regex}.search({k}) is None" for regex in regexes]
        return " and ".join(tests) or "True"

    def _dependent_required(
        self, node: Mapping[str, Any], loc: Loc
    ) -> Iterator[tuple[str, list[str]]]:
        if "dependentRequired" not in node:
            return
        value = node["dependentRequired"]
        if not isinstance(value, Mapping):
            raise loc.fail(f"dependentRequired must be an object, got {value!r}")
        for name in value:
            needs = self._strings(value, name, loc)
            if needs:
                yield name, needs
