"""TypeScript validators from the same schema walk as the Python ones.

`validator_compiler` reads the schemas (resolving `$ref`s, refusing keywords it does not know,
attributing an `x-rule` to every node) and emits Python; this module takes its reading of each
node and emits TypeScript that reports the same errors: the same rule, the same JSON pointer, the
same message, in the same order, keyword by keyword as the Python `validate_<name>` does. Each
root gets

- `validate<Name>(instance): SchemaError[]`, every error, and
- `isValid<Name>(instance): boolean`,

and every subschema reached through `$ref` one shared helper. Values are those `JSON.parse`
gives, read as the Python validators read `json.loads`'s: a number is an integer when it is
integral, strings are measured in code points, and patterns are rewritten so that they match
what Python's `re` matches (`ts_patterns`); a pattern with no ECMAScript counterpart is a
compile-time error naming the node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from .ts_literals import pascal, template, ts_literal, ts_property
from .ts_patterns import PatternError, ecmascript_pattern
from .validator_code import (
    Constants,
    Function,
    Helper,
    Helpers,
    Part,
    Ptr,
    json_text,
    name_wanted,
    plural,
    shorten,
    type_words,
)
from .validator_compiler import Compiler, ValidatorRoot
from .validator_core import (
    ANNOTATION_KEYWORDS,
    GROUPS,
    group_guard,
    regular_expression,
    rule_of,
    singled_out,
)
from .validator_index import Loc, SchemaCompileError

__all__ = ["RUNTIME_MODULE", "compile_typescript_validators"]

RUNTIME_MODULE: Final = "./schema_runtime.js"
_RUNTIME_NAMES: Final = (
    "among", "at", "equal", "esc", "isObject", "kind", "notMultiple", "strlen", "unique",
)
_PROTOTYPE_NAMES: Final = frozenset({
    "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
    "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString",
    "toString", "valueOf",
})
_COMPARISONS: Final = (
    ("minimum", "<", ">="),
    ("maximum", ">", "<="),
    ("exclusiveMinimum", "<=", ">"),
    ("exclusiveMaximum", ">=", "<"),
)


def compile_typescript_validators(
    schemas: Mapping[str, Mapping[str, Any]], roots: Sequence[ValidatorRoot], appendix: str = ""
) -> str:
    """The source of a TypeScript module validating each root, with `appendix` (code that uses
    them) at the end; the same input gives the same bytes."""
    return _TypeScriptCompiler(schemas, roots).module(appendix)


@dataclass(frozen=True)
class _Pointer(Ptr):
    """The JSON pointer of the value being checked, in the TypeScript runtime's names."""

    ESCAPE: ClassVar[str] = "esc"
    NAMED: ClassVar[str] = "at"

    @staticmethod
    def string(parts: Sequence[Part]) -> str:
        return template(parts)


_TYPE_TESTS: Final = {
    "object": ("isObject({v})", "!isObject({v})"),
    "array": ("Array.isArray({v})", "!Array.isArray({v})"),
    "string": ('typeof {v} === "string"', 'typeof {v} !== "string"'),
    "integer": ("Number.isInteger({v})", "!Number.isInteger({v})"),
    "number": ('typeof {v} === "number"', 'typeof {v} !== "number"'),
    "boolean": ('typeof {v} === "boolean"', 'typeof {v} !== "boolean"'),
    "null": ("{v} === null", "{v} !== null"),
}


def type_test(types: Sequence[str], v: str, *, negate: bool) -> str:
    """A TypeScript expression true when `v` has (negate: lacks) one of the JSON types."""
    if len(types) == 1:
        return _TYPE_TESTS[types[0]][negate].format(v=v)
    joined = " || ".join(_TYPE_TESTS[t][0].format(v=v) for t in types)
    return f"!({joined})" if negate else f"({joined})"


def _member(v: str, name: str) -> str:
    """The member `name` of the object `v`, undefined when absent: JSON has no undefined, so
    that tells a missing member; a name Object.prototype also has is looked up as an own one."""
    if name in _PROTOTYPE_NAMES:
        return f"(Object.hasOwn({v}, {ts_literal(name)}) ? {v}[{ts_literal(name)}] : undefined)"
    prop = ts_property(name)
    return f"{v}.{prop}" if prop == name else f"{v}[{prop}]"


class _TypeScriptCompiler:
    def __init__(self, schemas: Mapping[str, Mapping[str, Any]], roots: Sequence[ValidatorRoot]):
        self.schema = Compiler(schemas, roots)
        """The Python compiler, as the reader of the schemas: resolution, checks, names."""
        self.roots = list(roots)
        self.constants = Constants(lambda name, annotation, code:
                                   f"const {name}: {annotation} = {code};")
        self.helpers = Helpers(self.schema._helper_name)
        self.yes_no = False
        """Emitting the yes/no check: each error returns false, and a $ref is inlined."""
        self.expanding: list[Loc] = []
        """The $ref targets being inlined, innermost last."""

    # ---- constants and helpers ----------------------------------------------------------------

    def _regex(self, pattern: object, loc: Loc) -> str:
        pattern = regular_expression(pattern, loc)
        try:
            source = ecmascript_pattern(pattern)
        except PatternError as error:
            raise loc.fail(f"pattern {pattern!r} has no ECMAScript equivalent: {error}") from None
        return self.constants.name("PATTERN", f'new RegExp({ts_literal(source)}, "u")', "RegExp")

    def _json(self, kind: str, value: object, loc: Loc) -> str:
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            raise loc.fail(f"{value!r} is not a JSON value") from None
        return self.constants.name(kind, f"JSON.parse({ts_literal(text)})", "unknown")

    def _names(self, values: Sequence[str]) -> str:
        items = ", ".join(ts_literal(s) for s in sorted(set(values)))
        return self.constants.name("NAMES", f"new Set([{items}])", "ReadonlySet<unknown>")

    def _call(self, fn: Function, ind: int, node: object, loc: Loc, v: str, ptr: _Pointer,
              rule: str) -> None:
        """The check of a subschema that has a helper: its errors, or its yes/no."""
        if self.yes_no:
            if loc in self.expanding:  # a recursive schema: its helper
                self._if_error(fn, ind, f"!{self._is_call(node, loc, v)}", rule, ptr, [])
                return
            # Inlined, so that each check reads the properties of one shape of value (the
            # envelope's fields of each event type apart), which is what keeps it fast.
            self.expanding.append(loc)
            try:
                self._val(fn, ind, node, loc, v, ptr, rule)
            finally:
                self.expanding.pop()
            return
        helper = self.helpers.get("val", node, loc)
        args = [v, ptr.code(), "errors", *([rule] if helper.takes_rule else [])]
        fn.emit(ind, f"{helper.name}({', '.join(args)});")

    def _is_call(self, node: object, loc: Loc, v: str) -> str:
        return f"{self.helpers.get('is', node, loc).name}({v})"

    # ---- emitting ----------------------------------------------------------------------------

    @staticmethod
    def _block(fn: Function, ind: int, header: str, body: list[str], tail: str = "}") -> None:
        """`header {`, the body, and `tail`; nothing when the body is empty."""
        if body:
            fn.emit(ind, f"{header} {{")
            fn.lines.extend(body)
            fn.emit(ind, tail)

    def _error(self, fn: Function, ind: int, rule: str, ptr: _Pointer,
               message: Sequence[Part]) -> None:
        if self.yes_no:
            fn.emit(ind, "return false;")
            return
        fn.emit(ind, f"errors.push({{ rule: {rule}, pointer: {ptr.code()}, "
                     f"message: {template(message)} }});")

    def _if_error(self, fn: Function, ind: int, test: str, rule: str, ptr: _Pointer,
                  message: Sequence[Part]) -> None:
        fn.emit(ind, f"if ({test}) {{")
        self._error(fn, ind + 1, rule, ptr, message)
        fn.emit(ind, "}")

    def _const_test(self, value: object, v: str, loc: Loc, *, negate: bool) -> str:
        """A TypeScript expression true when `v` equals (negate: differs from) a JSON value."""
        if value is None or isinstance(value, bool | str | int | float):
            return f"{v} {'!==' if negate else '==='} {ts_literal(value)}"
        name = self._json("CONST", value, loc)
        return f"!equal({v}, {name})" if negate else f"equal({v}, {name})"

    def _enum_test(self, values: object, v: str, loc: Loc) -> str:
        """A TypeScript expression true when `v` is none of the values."""
        if not isinstance(values, list | tuple) or not values:
            raise loc.fail(f"enum must be a non-empty array, got {values!r}")
        if all(isinstance(e, str) for e in values) and len(values) > 4:
            return f"!{self._names(values)}.has({v})"
        if len(values) <= 4 and all(e is None or isinstance(e, str | int | float) for e in values):
            return " && ".join(self._const_test(e, v, loc, negate=True) for e in values)
        return f"!among({v}, {self._json('ENUM', list(values), loc)} as unknown[])"

    # ---- the checks: statements that push every error to `errors` ---------------------------

    def _val(self, fn: Function, ind: int, node: object, loc: Loc, v: str, ptr: _Pointer,
             rule: str) -> None:
        node = self.schema._schema(node, loc)
        if isinstance(node, bool):
            if not node:
                self._error(fn, ind, rule, ptr, [*ptr.subject(), (False, " is not allowed")])
            return
        rule = rule_of(node, rule, ts_literal)
        subject = ptr.subject()
        types = self.schema._types(node, loc)
        done: set[str] = set()
        if types is not None:
            message = [*subject, (False, f" must be {type_words(types)}, got "),
                       (True, f"kind({v})")]
            group = types[0] if len(types) == 1 and types[0] != "integer" else None
            body: list[str] = []
            if group in ("object", "array", "string", "number"):
                if any(k in node for k in dict(GROUPS)[group]):
                    body = fn.capture(self._val_group(group), fn, ind + 1, node, loc, v, ptr, rule)
                done.add(group)
            if body:
                self._block(fn, ind, f"if ({type_test(types, v, negate=False)})", body,
                            "} else {")
                self._error(fn, ind + 1, rule, ptr, message)
                fn.emit(ind, "}")
            else:
                self._if_error(fn, ind, type_test(types, v, negate=True), rule, ptr, message)
        if "const" in node:
            const = node["const"]
            shown = shorten(json_text(const))
            self._if_error(fn, ind, self._const_test(const, v, loc, negate=True), rule, ptr,
                           [*subject, (False, f" must be {shown}")])
        if "enum" in node:
            values = node["enum"]
            test = self._enum_test(values, v, loc)
            shown = ", ".join(json_text(e) for e in values[:10])
            if len(values) > 10:
                shown += f", ... ({len(values)} values)"
            self._if_error(fn, ind, test, rule, ptr,
                           [*subject, (False, f" must be one of {shorten(shown)}")])
        for group, keywords in GROUPS:
            if group in done or not any(k in node for k in keywords):
                continue
            guard = group_guard(types, group, lambda only: type_test(only, v, negate=False))
            if guard is None:
                continue
            if types is not None and guard == "" and types != [group]:
                guard = type_test([group], v, negate=False)  # integer: report bounds of 1.5 too
            inner = ind + 1 if guard else ind
            body = fn.capture(self._val_group(group), fn, inner, node, loc, v, ptr, rule)
            if guard:
                self._block(fn, ind, f"if ({guard})", body)
            else:
                fn.lines.extend(body)
        self._val_applicators(fn, ind, node, loc, v, ptr, rule)

    def _val_group(self, group: str) -> Callable[..., None]:
        builds: dict[str, Callable[..., None]] = {
            "object": self._val_object, "array": self._val_array,
            "string": self._val_string, "number": self._val_number,
        }
        return builds[group]

    def _val_applicators(self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc,
                         v: str, ptr: _Pointer, rule: str) -> None:
        subject = ptr.subject()
        if "allOf" in node:
            for sub, sub_loc in self.schema._subs(node, "allOf", loc):
                self._val(fn, ind, sub, sub_loc, v, ptr, rule)
        for key in ("anyOf", "oneOf"):
            if key not in node:
                continue
            branches = self.schema._subs(node, key, loc)
            if len(branches) == 1:
                self._val(fn, ind, *branches[0], v, ptr, rule)
                continue
            calls = [self._is_call(s, sl, v) for s, sl in branches]
            count = len(branches)
            if key == "anyOf":
                words = f" must match at least one of {count} alternatives"
                fn.emit(ind, f"if (!({' || '.join(calls)})) {{")
                self._no_branch(fn, ind + 1, branches, v, ptr, rule, [*subject, (False, words)])
                fn.emit(ind, "}")
            else:
                n = fn.var("n")
                fn.emit(ind, f"const {n} = {' + '.join(f'Number({c})' for c in calls)};")
                words = f" must match exactly one of {count} alternatives"
                fn.emit(ind, f"if ({n} === 0) {{")
                self._no_branch(fn, ind + 1, branches, v, ptr, rule, [*subject, (False, words)])
                fn.emit(ind, f"}} else if ({n} > 1) {{")
                self._error(fn, ind + 1, rule, ptr,
                            [*subject, (False, f"{words}, but matches "), (True, n)])
                fn.emit(ind, "}")
        if "not" in node:
            sub, sub_loc = self.schema._sub(node, "not", loc)
            forbidden = (
                self.schema._strings(sub, "required", sub_loc)
                if isinstance(sub, Mapping) and set(sub) - ANNOTATION_KEYWORDS == {"required"}
                else []
            )
            test = self._is_call(sub, sub_loc, v)
            if len(forbidden) == 1:
                member = ptr.key(forbidden[0])
                self._if_error(fn, ind, test, rule, member,
                               [*member.parts, (False, " must not be present")])
            else:
                shown = shorten(json_text(sub), 60)
                self._if_error(fn, ind, test, rule, ptr,
                               [*subject, (False, f" must not match {shown}")])
        if "if" in node:
            self._conditional(fn, ind, node, loc, v, ptr, rule)
        else:
            for key in ("then", "else"):
                if key in node:
                    self.schema._sub(node, key, loc)
        if "$ref" in node:
            target, target_loc = self.schema._resolve(node, loc)
            self._call(fn, ind, target, target_loc, v, ptr, rule)

    def _conditional(self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                     ptr: _Pointer, rule: str) -> None:
        """if/then/else: the if schema is a helper, then and else are inlined."""
        condition, condition_loc = self.schema._sub(node, "if", loc)
        branches = {
            key: fn.capture(self._val, fn, ind + 1, *self.schema._sub(node, key, loc), v, ptr, rule)
            if key in node else []
            for key in ("then", "else")
        }
        if not branches["then"] and not branches["else"]:
            self.schema._check_tree(condition, condition_loc)  # no effect, but no unknown keyword
            return
        call = self._is_call(condition, condition_loc, v)
        if branches["then"]:
            fn.emit(ind, f"if ({call}) {{")
            fn.lines.extend(branches["then"])
            if branches["else"]:
                fn.emit(ind, "} else {")
                fn.lines.extend(branches["else"])
            fn.emit(ind, "}")
        else:
            self._block(fn, ind, f"if (!{call})", branches["else"])

    def _no_branch(self, fn: Function, ind: int, branches: list[tuple[object, Loc]], v: str,
                   ptr: _Pointer, rule: str, message: list[Part]) -> None:
        """No alternative matched: report the errors of the one the value evidently meant (told
        by its type and the string consts of its properties), else one error; the choice is the
        Python validators'."""
        if self.yes_no:
            self._error(fn, ind, rule, ptr, message)
            return
        tests = [self._looks_like(sub, sub_loc, v) for sub, sub_loc in branches]
        names = [fn.var("c") if test else "" for test in tests]
        chosen: list[tuple[str, int]] = []
        for i, others in singled_out(tests, names):
            rest = f"!({' || '.join(others)})"
            chosen.append((f"{names[i]} && {rest}" if tests[i] else rest, i))
        if not chosen:
            self._error(fn, ind, rule, ptr, message)
            return
        used = " ".join(condition for condition, _ in chosen)
        for name, test in zip(names, tests, strict=True):
            if name and test and re.search(rf"\b{name}\b", used):
                fn.emit(ind, f"const {name} = {test};")
        for n, (condition, i) in enumerate(chosen):
            fn.emit(ind, f"{'} else if' if n else 'if'} ({condition}) {{")
            self._call(fn, ind + 1, *branches[i], v, ptr, rule)
        fn.emit(ind, "} else {")
        self._error(fn, ind + 1, rule, ptr, message)
        fn.emit(ind, "}")

    def _looks_like(self, node: object, loc: Loc, v: str) -> str | None:
        """A cheap test that `v` is meant for this branch, or None if nothing tells."""

        def member_is(name: str, value: str, required: bool) -> str:
            test = f"{_member(v, name)} === {ts_literal(value)}"
            return test if required else f"({_member(v, name)} === undefined || {test})"

        tests = self.schema._branch_tests(node, loc,
                                          lambda types: type_test(types, v, negate=False),
                                          f"isObject({v})", member_is)
        return " && ".join(tests) or None

    def _val_object(self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                    ptr: _Pointer, rule: str) -> None:
        subject = ptr.subject()
        props = self.schema._sub_map(node, "properties", loc) if "properties" in node else []
        required = self.schema._strings(node, "required", loc) if "required" in node else []
        for name, sub, sub_loc in props:
            member = ptr.key(name)
            missing = [*member.parts, (False, " is required")]
            w = fn.var("v")
            body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, w, member, rule)
            if body:
                fn.emit(ind, f"const {w} = {_member(v, name)};")
                if name in required:
                    self._block(fn, ind, f"if ({w} !== undefined)", body, "} else {")
                    self._error(fn, ind + 1, rule_of(sub, rule, ts_literal), member, missing)
                    fn.emit(ind, "}")
                else:
                    self._block(fn, ind, f"if ({w} !== undefined)", body)
            elif name in required:
                self._if_error(fn, ind, f"{_member(v, name)} === undefined",
                               rule_of(sub, rule, ts_literal), member, missing)
        known = {name for name, _, _ in props}
        for name in required:
            if name not in known:
                member = ptr.key(name)
                self._if_error(fn, ind, f"{_member(v, name)} === undefined", rule, member,
                               [*member.parts, (False, " is required")])
        patterns = (self.schema._sub_map(node, "patternProperties", loc)
                    if "patternProperties" in node else [])
        regexes = [self._regex(p, loc) for p, _, _ in patterns]
        k = fn.var("k")
        body = []
        for regex, (_, sub, sub_loc) in zip(regexes, patterns, strict=True):
            inner = fn.capture(self._val, fn, ind + 2, sub, sub_loc, f"{v}[{k}]",
                               ptr.dynamic_key(k), rule)
            if inner:
                body += [f"{'    ' * (ind + 1)}if ({regex}.test({k})) {{", *inner,
                         f"{'    ' * (ind + 1)}}}"]
        self._block(fn, ind, f"for (const {k} of Object.keys({v}))", body)
        if "additionalProperties" in node:
            extra, extra_loc = self.schema._sub(node, "additionalProperties", loc)
            k = fn.var("k")
            member = ptr.dynamic_key(k)
            if extra is False:
                message = [*member.parts, (False, " is not allowed (unknown property)")]
                inner = fn.capture(self._error, fn, ind + 2, rule, member, message)
            else:
                inner = fn.capture(self._val, fn, ind + 2, extra, extra_loc, f"{v}[{k}]", member,
                                   rule)
            if inner:
                tests = [f"!{self._names(sorted(known))}.has({k})"] if known else []
                tests += [f"!{regex}.test({k})" for regex in regexes]
                test = " && ".join(tests) or "true"
                pad = "    " * (ind + 1)
                self._block(fn, ind, f"for (const {k} of Object.keys({v}))",
                            [f"{pad}if ({test}) {{", *inner, f"{pad}}}"])
        if "propertyNames" in node:
            names, names_loc = self.schema._sub(node, "propertyNames", loc)
            if not self.schema._trivial(names):
                k = fn.var("k")
                member = ptr.dynamic_key(k)
                message = [*member.parts, (False, name_wanted(names))]
                inner = fn.capture(self._if_error, fn, ind + 1,
                                   f"!{self._is_call(names, names_loc, k)}",
                                   rule_of(names, rule, ts_literal), member, message)
                self._block(fn, ind, f"for (const {k} of Object.keys({v}))", inner)
        for key, op, word in (("minProperties", "<", "at least"),
                              ("maxProperties", ">", "at most")):
            if key in node:
                n = self.schema._count(node, key, loc)
                words = f" must have {word} {plural(n, 'property', 'properties')}, got "
                self._if_error(fn, ind, f"Object.keys({v}).length {op} {n}", rule, ptr,
                               [*subject, (False, words), (True, f"Object.keys({v}).length")])
        for name, needs in self.schema._dependent_required(node, loc):
            trigger = ptr.key(name)
            fn.emit(ind, f"if ({_member(v, name)} !== undefined) {{")
            for need in needs:
                member = ptr.key(need)
                message = [*member.parts, (False, " is required when "), *trigger.parts,
                           (False, " is present")]
                self._if_error(fn, ind + 1, f"{_member(v, need)} === undefined", rule, member,
                               message)
            fn.emit(ind, "}")
        if "dependentSchemas" in node:
            for name, sub, sub_loc in self.schema._sub_map(node, "dependentSchemas", loc):
                body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, v, ptr, rule)
                self._block(fn, ind, f"if ({_member(v, name)} !== undefined)", body)

    def _val_array(self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                   ptr: _Pointer, rule: str) -> None:
        subject = ptr.subject()
        prefix = self.schema._subs(node, "prefixItems", loc) if "prefixItems" in node else []
        for i, (sub, sub_loc) in enumerate(prefix):
            body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, f"{v}[{i}]", ptr.index(i), rule)
            self._block(fn, ind, f"if ({v}.length > {i})", body)
        if "items" in node:
            items, items_loc = self.schema._sub(node, "items", loc)
            if items is False:
                words = f" must have at most {plural(len(prefix), 'item', 'items')}, got "
                self._if_error(fn, ind, f"{v}.length > {len(prefix)}", rule, ptr,
                               [*subject, (False, words), (True, f"{v}.length")])
            else:
                index = fn.var("i")
                body = fn.capture(self._val, fn, ind + 1, items, items_loc, f"{v}[{index}]",
                                  ptr.dynamic_index(index), rule)
                loop = f"for (let {index} = {len(prefix)}; {index} < {v}.length; {index}++)"
                self._block(fn, ind, loop, body)
        for key, op, word in (("minItems", "<", "at least"), ("maxItems", ">", "at most")):
            if key in node:
                n = self.schema._count(node, key, loc)
                words = f" must have {word} {plural(n, 'item', 'items')}, got "
                self._if_error(fn, ind, f"{v}.length {op} {n}", rule, ptr,
                               [*subject, (False, words), (True, f"{v}.length")])
        if self.schema._unique_items(node, loc):
            self._if_error(fn, ind, f"!unique({v})", rule, ptr,
                           [*subject, (False, " must not contain duplicates")])
        contains = self.schema._contains(node, loc)
        if contains is not None:
            sub, sub_loc, least, most = contains
            matches, item = fn.var("n"), fn.var("v")
            call = self._is_call(sub, sub_loc, item)
            fn.emit(ind, f"const {matches} = {v}.filter(({item}: unknown) => {call}).length;")
            for limit, op, word in ((least, "<", "at least"), (most, ">", "at most")):
                if limit is None or (op == "<" and limit == 0):
                    continue
                words = f" must contain {word} {plural(limit, 'item', 'items')} matching "
                self._if_error(fn, ind, f"{matches} {op} {limit}", rule, ptr, [
                    *subject, (False, words + "its contains schema, got "), (True, matches)])

    def _val_string(self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                    ptr: _Pointer, rule: str) -> None:
        subject = ptr.subject()
        if "minLength" in node:
            n = self.schema._count(node, "minLength", loc)
            # A code point takes one or two UTF-16 units: only lengths in between need counting.
            test = f"{v}.length < {n} || ({v}.length < {2 * n} && strlen({v}) < {n})"
            words = f" must be at least {plural(n, 'character', 'characters')} long, got "
            self._if_error(fn, ind, test, rule, ptr,
                           [*subject, (False, words), (True, f"strlen({v})")])
        if "maxLength" in node:
            n = self.schema._count(node, "maxLength", loc)
            words = f" must be at most {plural(n, 'character', 'characters')} long, got "
            self._if_error(fn, ind, f"{v}.length > {n} && strlen({v}) > {n}", rule, ptr,
                           [*subject, (False, words), (True, f"strlen({v})")])
        if "pattern" in node:
            pattern = node["pattern"]
            self._if_error(fn, ind, f"!{self._regex(pattern, loc)}.test({v})", rule, ptr,
                           [*subject, (False, f" must match the pattern {shorten(pattern)}")])

    def _val_number(self, fn: Function, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                    ptr: _Pointer, rule: str) -> None:
        subject = ptr.subject()
        for key, fails, holds in _COMPARISONS:
            if key in node:
                limit = self.schema._number(node, key, loc)
                words = f" must be {holds} {limit!r}, got "
                self._if_error(fn, ind, f"{v} {fails} {ts_literal(limit)}", rule, ptr,
                               [*subject, (False, words), (True, v)])
        if "multipleOf" in node:
            divisor = self.schema._number(node, "multipleOf", loc)
            if divisor <= 0:
                raise loc.fail(f"multipleOf must be greater than 0, got {divisor!r}")
            test = (f"{v} % {divisor} !== 0" if isinstance(divisor, int)
                    else f"notMultiple({v}, {ts_literal(divisor)})")
            words = f" must be a multiple of {divisor!r}, got "
            self._if_error(fn, ind, test, rule, ptr, [*subject, (False, words), (True, v)])

    # ---- functions and the module ------------------------------------------------------------

    def _body(self, yes_no: bool, node: object, loc: Loc, ptr: _Pointer, rule: str) -> list[str]:
        """The statements checking `x` against a node: pushing its errors, or returning false
        at the first one."""
        fn = Function()
        self.yes_no = yes_no
        try:
            self._val(fn, 1, node, loc, "x", ptr, rule)
        finally:
            self.yes_no = False
        return fn.lines

    def _helper_source(self, helper: Helper) -> list[str]:
        if helper.mode == "is":
            self.expanding.append(helper.loc)
            try:
                body = self._body(True, helper.node, helper.loc, _Pointer(), "rule")
            finally:
                self.expanding.pop()
            return [f"/** {helper.loc} */", f"function {helper.name}(x: any): boolean {{",
                    *body, "    return true;", "}"]
        body = self._body(False, helper.node, helper.loc, _Pointer(((True, "p"),)), "rule")
        rule = ", rule: string" if helper.takes_rule else ""
        return [f"/** {helper.loc} */",
                f"function {helper.name}(x: any, p: string, errors: SchemaError[]{rule}): void {{",
                *body, "}"]

    def _public(self, root: ValidatorRoot) -> list[str]:
        try:
            node, loc = self.schema.index.resolve(root.schema_id, Loc(root.schema_id, ""))
        except SchemaCompileError:
            raise SchemaCompileError(
                root.schema_id, "", "no schema has this $id (roots name a schema by $id)"
            ) from None
        rule = ts_literal(root.default_rule)
        suffix = pascal(root.name)
        return [
            f"/** Every error of instance against {root.schema_id}. */",
            f"export function validate{suffix}(instance: unknown): SchemaError[] {{",
            "    const x: any = instance;",
            "    const errors: SchemaError[] = [];",
            *self._body(False, node, loc, _Pointer(), rule),
            "    return errors;",
            "}",
            "",
            f"/** True if instance is valid against {root.schema_id}: the errors' yes or no,"
            " stopping at the first. */",
            f"export function isValid{suffix}(instance: unknown): boolean {{",
            "    const x: any = instance;",
            *self._body(True, node, loc, _Pointer(), rule),
            "    return true;",
            "}",
        ]

    def module(self, appendix: str) -> str:
        public = [self._public(root) for root in self.roots]
        helpers: list[list[str]] = []
        while self.helpers.pending:
            helpers.append(self._helper_source(self.helpers.pending.pop(0)))
        code = "\n\n".join("\n".join(f) for f in public + helpers) + appendix
        used = [name for name in _RUNTIME_NAMES if re.search(rf"\b{name}\(", code)]
        imports = ['import type { SchemaError } from "./diagnostics.js";']
        if used:
            imports.append(f"import {{ {', '.join(used)} }} from {ts_literal(RUNTIME_MODULE)};")
        parts = ["\n".join(imports)]
        if self.constants.lines:
            parts.append("\n".join(self.constants.lines))
        parts.append(code)
        return "\n\n".join(parts) + "\n"
