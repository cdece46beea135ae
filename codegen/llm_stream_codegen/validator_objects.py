"""The object keywords in both modes: `properties`, `required`, `patternProperties`,
`additionalProperties`, `propertyNames`, `minProperties`/`maxProperties`, `dependentRequired` and
`dependentSchemas`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from .validator_code import Function, Ptr, lit
from .validator_core import count_bound
from .validator_generic import GenericKeywords
from .validator_index import Loc
from .validator_runtime import uses

OBJECT_CHECKS: Final = (
    count_bound("minProperties", "<", "have at least", "property", "properties"),
    count_bound("maxProperties", ">", "have at most", "property", "properties"),
)


class ObjectKeywords(GenericKeywords):
    """The object keywords."""

    def _is_object(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str
    ) -> None:
        props = self._sub_map(node, "properties", loc) if "properties" in node else []
        required = self._strings(node, "required", loc) if "required" in node else []
        is_required = set(required)
        in_try = self._types(node, loc) == ["object"] and len(self._fetched(node, loc)) > 1
        fetch: list[str] = []  # ``var = v[key]`` lines: members known to be present
        checks: list[str] = []
        for name, sub, sub_loc in props:
            key = lit(name)
            const = self._simple_const(sub, sub_loc)
            if const is not None:  # a missing member reads as None, which is no string
                test = (
                    f"{v}.get({key})" if name in is_required else f"{v}.get({key}, {lit(const)})"
                )
                fn.emit(ind, f"if {test} != {lit(const)}:")
                fn.emit(ind + 1, "return False")
                continue
            if self._trivial(sub):
                if name in is_required:
                    fn.emit(ind, f"if {key} not in {v}:")
                    fn.emit(ind + 1, "return False")
                continue
            w = fn.var("v")
            if name in is_required:
                body = fn.capture(self._is, fn, ind, sub, sub_loc, w)
                if in_try:
                    fetch.append(f"{w} = {v}[{key}]")
                else:
                    fn.emit(ind, f"if {key} not in {v}:")
                    fn.emit(ind + 1, "return False")
                    if uses(w, "\n".join(body)):
                        fn.emit(ind, f"{w} = {v}[{key}]")
                    fn.lines.extend(body)
                    continue
            else:
                inner = fn.capture(self._is, fn, ind + 1, sub, sub_loc, w)
                body = fn.capture(fn.block, ind, f"if {key} in {v}:", inner, [(w, f"{v}[{key}]")])
            if in_try:
                checks.extend(body)
            else:
                fn.lines.extend(body)
        if fetch:
            fn.emit(ind, "try:")
            for line in fetch:
                fn.emit(ind + 1, line)
            fn.emit(ind, "except KeyError:")
            fn.emit(ind + 1, "return False")
            fn.lines.extend(checks)
        known = {name for name, _, _ in props}
        for name in required:
            if name not in known:
                fn.emit(ind, f"if {lit(name)} not in {v}:")
                fn.emit(ind + 1, "return False")
        patterns = (
            self._sub_map(node, "patternProperties", loc) if ("patternProperties" in node) else []
        )
        regexes = [self._regex(p, loc) for p, _, _ in patterns]
        k, w = fn.var("k"), fn.var("v")
        body = []
        for regex, (_, sub, sub_loc) in zip(regexes, patterns, strict=True):
            inner = fn.capture(self._is, fn, ind + 2, sub, sub_loc, w)
            if inner:
                body += [f"{'    ' * (ind + 1)}if {regex}.search({k}) is not None:", *inner]
        fn.block(ind, f"for {k}, {w} in {v}.items():", body)
        if "additionalProperties" in node:
            extra, extra_loc = self._sub(node, "additionalProperties", loc)
            if extra is False and not regexes:
                present = len([n for n in required if n in known])
                if known and present:  # all required members are there: more keys, extra ones?
                    keys = self._string_set(sorted(known))
                    fn.emit(ind, f"if len({v}) > {present} and not {keys}.issuperset({v}):")
                elif known:
                    fn.emit(ind, f"if not {self._string_set(sorted(known))}.issuperset({v}):")
                else:
                    fn.emit(ind, f"if {v}:")
                fn.emit(ind + 1, "return False")
            else:
                k, w = fn.var("k"), fn.var("v")
                inner = fn.capture(lambda: self._is(fn, ind + 2, extra, extra_loc, w))
                if inner:
                    test = f"{'    ' * (ind + 1)}if {self._is_additional(k, known, regexes)}:"
                    fn.block(ind, f"for {k}, {w} in {v}.items():", [test, *inner])
        if "propertyNames" in node:
            names, names_loc = self._sub(node, "propertyNames", loc)
            k = fn.var("k")
            body = fn.capture(lambda: self._is(fn, ind + 1, names, names_loc, k))
            fn.block(ind, f"for {k} in {v}:", body)
        self._emit_checks(fn, ind, node, loc, v, OBJECT_CHECKS, self._returns_false(fn))
        for name, needs in self._dependent_required(node, loc):
            missing = " or ".join(f"{lit(n)} not in {v}" for n in needs)
            fn.emit(ind, f"if {lit(name)} in {v} and ({missing}):")
            fn.emit(ind + 1, "return False")
        if "dependentSchemas" in node:
            for name, sub, sub_loc in self._sub_map(node, "dependentSchemas", loc):
                body = fn.capture(self._is, fn, ind + 1, sub, sub_loc, v)
                fn.block(ind, f"if {lit(name)} in {v}:", body)

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

    def _val_object(
        self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str, ptr: Ptr,
        rule: str,
    ) -> None:
        props = self._sub_map(node, "properties", loc) if "properties" in node else []
        required = self._strings(node, "required", loc) if "required" in node else []
        is_required = set(required)
        for name, sub, sub_loc in props:
            key, member = lit(name), ptr.key(name)
            missing = [*member.parts, (False, " is required")]
            w = fn.var("v")
            body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, w, member, rule)
            if body:
                fn.block(ind, f"if {key} in {v}:", body, [(w, f"{v}[{key}]")])
                if name in is_required:
                    fn.emit(ind, "else:")
                    self._error(fn, ind + 1, self._rule_of(sub, rule), member, missing)
            elif name in is_required:
                fn.emit(ind, f"if {key} not in {v}:")
                self._error(fn, ind + 1, self._rule_of(sub, rule), member, missing)
        known = {name for name, _, _ in props}
        for name in required:
            if name not in known:
                member = ptr.key(name)
                fn.emit(ind, f"if {lit(name)} not in {v}:")
                self._error(fn, ind + 1, rule, member, [*member.parts, (False, " is required")])
        patterns = (
            self._sub_map(node, "patternProperties", loc) if ("patternProperties" in node) else []
        )
        regexes = [self._regex(p, loc) for p, _, _ in patterns]
        k, w = fn.var("k"), fn.var("v")
        body = []
        for regex, (_, sub, sub_loc) in zip(regexes, patterns, strict=True):
            inner = fn.capture(self._val, fn, ind + 2, sub, sub_loc, w, ptr.dynamic_key(k), rule)
            if inner:
                body += [f"{'    ' * (ind + 1)}if {regex}.search({k}) is not None:", *inner]
        fn.block(ind, f"for {k}, {w} in {v}.items():", body)
        if "additionalProperties" in node:
            extra, extra_loc = self._sub(node, "additionalProperties", loc)
            k, w = fn.var("k"), fn.var("v")
            member = ptr.dynamic_key(k)
            if extra is False:
                message = [*member.parts, (False, " is not allowed (unknown property)")]
                inner = fn.capture(lambda: self._error(fn, ind + 2, rule, member, message))
            else:
                inner = fn.capture(
                    lambda: self._val(fn, ind + 2, extra, extra_loc, w, member, rule)
                )
            if inner:
                test = f"{'    ' * (ind + 1)}if {self._is_additional(k, known, regexes)}:"
                fn.block(ind, f"for {k}, {w} in {v}.items():", [test, *inner])
        if "propertyNames" in node:
            names, names_loc = self._sub(node, "propertyNames", loc)
            if not self._trivial(names):
                k = fn.var("k")
                call = self._helper("is", names, names_loc).name
                member = ptr.dynamic_key(k)
                message = [*member.parts, (False, " has a property name that is not allowed")]
                names_rule = self._rule_of(names, rule)
                inner = fn.capture(self._error, fn, ind + 2, names_rule, member, message)
                fn.block(
                    ind, f"for {k} in {v}:", [f"{'    ' * (ind + 1)}if not {call}({k}):", *inner]
                )
        self._emit_checks(fn, ind, node, loc, v, OBJECT_CHECKS, self._reports(fn, rule, ptr))
        for name, needs in self._dependent_required(node, loc):
            fn.emit(ind, f"if {lit(name)} in {v}:")
            trigger = ptr.key(name)
            for need in needs:
                member = ptr.key(need)
                fn.emit(ind + 1, f"if {lit(need)} not in {v}:")
                message = [*member.parts, (False, " is required when "), *trigger.parts]
                self._error(fn, ind + 2, rule, member, [*message, (False, " is present")])
        if "dependentSchemas" in node:
            for name, sub, sub_loc in self._sub_map(node, "dependentSchemas", loc):
                body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, v, ptr, rule)
                fn.block(ind, f"if {lit(name)} in {v}:", body)
