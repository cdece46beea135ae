"""The keywords the validator compiler knows, and what every keyword family uses: names and module
constants of the generated code, the helper function of each `$ref` target, reading a keyword's
value (refusing a malformed one at its pointer), rule attribution, and the tests of `const` and
`enum`, which both modes share.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .schema_walk import pointer_tokens
from .validator_code import (
    LINE_LENGTH,
    TYPE_NAMES,
    Constants,
    Function,
    Helpers,
    Part,
    Ptr,
    identifier,
    json_text,
    lit,
    number_text,
    pattern_lit,
    plural,
    py_block,
    py_inline,
    shorten,
    type_test,
)
from .validator_index import (
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    SCHEMA_VALUED,
    Index,
    Loc,
    child_loc,
    defrag,
    is_schema,
)
from .validator_modes import Mode


@dataclass(frozen=True)
class ValidatorRoot:
    """One pair of public functions: ``validate_<name>`` and ``is_valid_<name>``."""

    name: str
    schema_id: str
    default_rule: str


DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

#: Keywords that assert nothing (2020-12 annotations, plus the structural ones).
ANNOTATION_KEYWORDS: Final = frozenset(
    {
        "title",
        "description",
        "examples",
        "$comment",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)

_STRUCTURAL: Final = frozenset({"$id", "$schema", "$anchor", "$defs", "definitions"})

_OBJECT_KEYWORDS: Final = (
    "properties",
    "required",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
)

_ARRAY_KEYWORDS: Final = (
    "prefixItems",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
)

_STRING_KEYWORDS: Final = ("minLength", "maxLength", "pattern")

_NUMBER_KEYWORDS: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)

GROUPS: Final = (
    ("object", _OBJECT_KEYWORDS),
    ("array", _ARRAY_KEYWORDS),
    ("string", _STRING_KEYWORDS),
    ("number", _NUMBER_KEYWORDS),
)

_GENERIC_KEYWORDS: Final = (
    "type",
    "const",
    "enum",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
)

#: Keywords that assert something and are compiled.
SUPPORTED_KEYWORDS: Final = frozenset(
    _GENERIC_KEYWORDS + _OBJECT_KEYWORDS + _ARRAY_KEYWORDS + _STRING_KEYWORDS + _NUMBER_KEYWORDS
)

MAX_DISCRIMINATED_BRANCHES: Final = 12

def rule_of(node: object, inherited: str, literal: Callable[[str], str] = lit) -> str:
    """The rule of the errors a node finds, as a literal of the generated language: its own
    x-rule, else the one it inherits."""
    if isinstance(node, Mapping) and isinstance(node.get("x-rule"), str):
        return literal(node["x-rule"])
    return inherited


def singled_out(tests: Sequence[str | None], names: Sequence[str]) -> list[tuple[int, list[str]]]:
    """The alternatives of anyOf or oneOf a value that matches none can be told to have meant,
    given each one's test of looking meant (None: nothing tells) and the names its result is
    kept under: each with the names of the others' results, which must all be false."""
    chosen = []
    if len(tests) <= MAX_DISCRIMINATED_BRANCHES:
        for i, test in enumerate(tests):
            others = [names[j] for j in range(len(tests)) if j != i]
            if all(others) and tests.count(test) == 1:
                chosen.append((i, others))
    return chosen


Verdict = tuple[str, list[Part]]
"""The condition under which a check fails, and what its error says after the subject."""


@dataclass(frozen=True)
class Check:
    """A keyword whose check is one condition on the value at hand, described once: `fails`
    gives the condition and the error's words (None when the check cannot fail), and both modes
    are emitted from it: the fast path returns False, the full path reports the error."""

    keyword: str
    fails: Callable[[CompilerCore, Mapping[str, Any], Loc, str], Verdict | None]


def count_bound(keyword: str, fails: str, verb: str, unit: str, units: str,
                tail: str = "") -> Check:
    """minLength, maxItems, minProperties, ...: a bound on `len(v)`."""

    def verdict(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict:
        n = compiler._count(node, keyword, loc)
        words = f" must {verb} {plural(n, unit, units)}{tail}, got "
        return f"len({v}) {fails} {n!r}", [(False, words), (True, f"len({v})")]

    return Check(keyword, verdict)


def number_bound(keyword: str, fails: str, holds: str) -> Check:
    """minimum, exclusiveMaximum, ...: a bound on the number `v`."""

    def verdict(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict:
        limit = compiler._number(node, keyword, loc)
        words = f" must be {holds} {number_text(limit)}, got "
        return f"{v} {fails} {limit!r}", [(False, words), (True, v)]

    return Check(keyword, verdict)


def _const(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict:
    const = node["const"]
    shown = shorten(json_text(const))
    return compiler._const_test(const, v, loc, negate=True), [(False, f" must be {shown}")]


def _enum(compiler: CompilerCore, node: Mapping[str, Any], loc: Loc, v: str) -> Verdict:
    values = node["enum"]
    test = compiler._enum_test(values, v, loc, negate=True)
    shown = ", ".join(json_text(e) for e in values[:10])
    if len(values) > 10:
        shown += f", ... ({len(values)} values)"
    return test, [(False, f" must be one of {shorten(shown)}")]


VALUE_CHECKS: Final = (Check("const", _const), Check("enum", _enum))
"""The checks of every type of value, after the type's own."""

def regular_expression(pattern: object, loc: Loc) -> str:
    """A pattern keyword's value, refused unless it is a regular expression."""
    if not isinstance(pattern, str):
        raise loc.fail(f"a pattern must be a string, got {pattern!r}")
    try:
        re.compile(pattern)
    except re.error as error:
        raise loc.fail(f"pattern {pattern!r} is not a regular expression: {error}") from None
    return pattern


def group_guard(types: list[str] | None, group: str,
                test: Callable[[list[str]], str]) -> str | None:
    """How the keywords of a type group (object, array, string, number) are guarded, given the
    declared `types` and the generated language's `test` of a value's type: None to skip them
    (the value cannot be of the group), "" for no guard (it can be of no other)."""
    if types is None:
        return test([group])
    if group == "number":
        if not {"number", "integer"} & set(types):
            return None
        if set(types) <= {"number", "integer"}:
            return ""
        return test(["number"])
    if group not in types:
        return None
    return "" if types == [group] else test([group])


def _declare(name: str, annotation: str, code: str) -> str:
    return f"{name}: {annotation} = {code}" if annotation else f"{name} = {code}"


class CompilerCore:
    """What every keyword family of the compiler uses."""

    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]],
        roots: Sequence[ValidatorRoot],
        extra_imports: Sequence[str] = (),
    ):
        self.index = Index(schemas)
        self.roots = list(roots)
        self.extra_imports = frozenset(extra_imports)
        self.constants = Constants(_declare, "_")
        self.helpers = Helpers(self._helper_name)
        self.names: set[str] = set()
        self.labels = self._resource_labels()

    # ---- naming ------------------------------------------------------------------------------

    def _resource_labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        for root in self.roots:
            labels.setdefault(defrag(root.schema_id), root.name)
        uris = sorted(u for u in self.index.resources if u not in labels)
        split = [re.split(r"[:/#]+", u) for u in uris]
        common = 0
        if len(split) > 1:
            while all(len(s) > common + 1 and s[common] == split[0][common] for s in split):
                common += 1
        for uri, segments in zip(uris, split, strict=True):
            rest = segments[common:] if len(split) > 1 else segments[-2:]
            labels[uri] = identifier("_".join(rest)) or "schema"
        return labels

    def _fresh(self, stem: str) -> str:
        name, n = stem, 1
        while name in self.names:
            n += 1
            name = f"{stem}_{n}"
        self.names.add(name)
        return name

    def _helper_name(self, mode: str, loc: Loc) -> str:
        label = self.labels.get(loc.base) or identifier(loc.base) or "schema"
        segments = [
            s
            for s in pointer_tokens(loc.pointer)
            if s not in ("$defs", "definitions", "properties")
        ]
        slug = identifier("_".join([label, *segments]))[:60].rstrip("_")
        return self._fresh(("_is_valid_" if mode == "is" else "_validate_") + slug)

    def _constant(self, kind: str, code_lines: list[str], annotation: str = "") -> str:
        return self.constants.name(kind, "\n".join(code_lines), annotation)

    def _regex(self, pattern: object, loc: Loc) -> str:
        pattern = regular_expression(pattern, loc)
        return self._constant("PATTERN", [f"re.compile({pattern_lit(pattern)})"])

    def _search(self, pattern: object, loc: Loc, v: str, *, negate: bool) -> str:
        """A test that ``v`` (a string) matches (negate: does not match) a pattern."""
        regex = self._regex(pattern, loc)
        matched = self._constant("MATCHED", [f"set()  # strings {regex} matched"], "set[str]")
        if negate:
            return f"{v} not in {matched} and not _match({regex}, {matched}, {v})"
        return f"({v} in {matched} or _match({regex}, {matched}, {v}))"

    def _string_set(self, values: Sequence[str]) -> str:
        items = sorted(set(values))
        inline = "frozenset({" + ", ".join(lit(s) for s in items) + "})"
        if len(inline) + 20 <= LINE_LENGTH:
            return self._constant("NAMES", [inline])
        lines = ["frozenset(", "    {"]
        lines += [f"        {lit(s)}," for s in items]
        lines += ["    }", ")"]
        return self._constant("NAMES", lines)

    # ---- keyword checks ----------------------------------------------------------------------

    def _check(self, node: Mapping[str, Any], loc: Loc) -> None:
        for key in node:
            if not isinstance(key, str):
                raise loc.fail(f"schema keys must be strings, got {key!r}")
            if key in SUPPORTED_KEYWORDS or key in ANNOTATION_KEYWORDS or key.startswith("x-"):
                continue
            if key in _STRUCTURAL:
                continue
            raise loc.fail(f"keyword {key!r} is not supported by the validator compiler")
        schema = node.get("$schema")
        if schema is not None and defrag(str(schema)) != DRAFT_2020_12:
            raise loc.fail(f"$schema {schema!r} is not draft 2020-12")
        rule = node.get("x-rule")
        if rule is not None and not (isinstance(rule, str) and rule):
            raise loc.fail(f"x-rule must be a non-empty string, got {rule!r}")

    def _check_tree(self, node: object, loc: Loc) -> None:
        """Refuse unknown keywords in a subschema that is not compiled (it cannot fail)."""
        if not isinstance(node, Mapping):
            return
        self._check(node, loc)
        for key, value in node.items():
            if key in SCHEMA_VALUED and key in SUPPORTED_KEYWORDS:
                self._check_tree(value, child_loc(loc, value, key))
            elif key in SCHEMA_MAPS and key in SUPPORTED_KEYWORDS and isinstance(value, Mapping):
                for name, sub in value.items():
                    self._check_tree(sub, child_loc(loc, sub, key, name))
            elif key in SCHEMA_LISTS and isinstance(value, list | tuple):
                for i, sub in enumerate(value):
                    self._check_tree(sub, child_loc(loc, sub, key, i))

    def _schema(self, node: object, loc: Loc) -> Mapping[str, Any] | bool:
        """A subschema as it is compiled: a boolean, or an object whose keywords were checked."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise loc.fail(f"a schema must be an object or a boolean, got {node!r}")
        self._check(node, loc)
        return node

    def _sub(self, node: Mapping[str, Any], key: str, loc: Loc) -> tuple[object, Loc]:
        value = node[key]
        if not is_schema(value):
            raise loc.fail(f"{key} must be a schema, got {value!r}")
        return value, child_loc(loc, value, key)

    def _subs(self, node: Mapping[str, Any], key: str, loc: Loc) -> list[tuple[object, Loc]]:
        value = node[key]
        if not isinstance(value, list | tuple) or (key != "prefixItems" and not value):
            raise loc.fail(f"{key} must be a non-empty array of schemas, got {value!r}")
        result = []
        for i, sub in enumerate(value):
            if not is_schema(sub):
                raise loc.fail(f"{key}/{i} must be a schema, got {sub!r}")
            result.append((sub, child_loc(loc, sub, key, i)))
        return result

    def _sub_map(
        self, node: Mapping[str, Any], key: str, loc: Loc
    ) -> list[tuple[str, object, Loc]]:
        value = node[key]
        if not isinstance(value, Mapping):
            raise loc.fail(f"{key} must be an object, got {value!r}")
        result = []
        for name, sub in value.items():
            if not is_schema(sub):
                raise loc.fail(f"{key}/{name} must be a schema, got {sub!r}")
            result.append((name, sub, child_loc(loc, sub, key, name)))
        return result

    @staticmethod
    def _count(node: Mapping[str, Any], key: str, loc: Loc) -> int:
        value = node[key]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise loc.fail(f"{key} must be a non-negative integer, got {value!r}")
        return value

    @staticmethod
    def _number(node: Mapping[str, Any], key: str, loc: Loc) -> int | float:
        value = node[key]
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise loc.fail(f"{key} must be a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise loc.fail(f"{key} must be a finite number, got {value!r}")
        return value

    @staticmethod
    def _strings(node: Mapping[str, Any], key: str, loc: Loc) -> list[str]:
        value = node[key]
        if not isinstance(value, list | tuple) or not all(isinstance(s, str) for s in value):
            raise loc.fail(f"{key} must be an array of strings, got {value!r}")
        return list(dict.fromkeys(value))

    def _unique_items(self, node: Mapping[str, Any], loc: Loc) -> bool:
        if "uniqueItems" not in node:
            return False
        value = node["uniqueItems"]
        if not isinstance(value, bool):
            raise loc.fail(f"uniqueItems must be a boolean, got {value!r}")
        return value

    @staticmethod
    def _types(node: Mapping[str, Any], loc: Loc) -> list[str] | None:
        if "type" not in node:
            return None
        value = node["type"]
        types = [value] if isinstance(value, str) else value
        if (
            not isinstance(types, list | tuple)
            or not types
            or not all(isinstance(t, str) and t in TYPE_NAMES for t in types)
        ):
            raise loc.fail(f"type must be a type name or an array of them, got {value!r}")
        unique = list(dict.fromkeys(types))
        if "number" in unique and "integer" in unique:
            unique.remove("integer")
        return unique

    @staticmethod
    def _trivial(node: object) -> bool:
        """True for a schema that accepts everything (true, or only annotations)."""
        if node is True:
            return True
        if not isinstance(node, Mapping):
            return False
        return all(
            k in ANNOTATION_KEYWORDS
            or k in _STRUCTURAL
            or (isinstance(k, str) and k.startswith("x-"))
            for k in node
        )

    @staticmethod
    def _group_guard(types: list[str] | None, group: str, v: str) -> str | None:
        """How keywords of a type group are guarded: None to skip them, "" for no guard."""
        return group_guard(types, group, lambda only: type_test(only, v, negate=False))

    def _const_test(self, value: object, v: str, loc: Loc, *, negate: bool) -> str:
        """An expression true when ``v`` equals (negate: differs from) a JSON value."""
        if value is None or isinstance(value, bool):
            return f"{v} is not {value!r}" if negate else f"{v} is {value!r}"
        if isinstance(value, str):
            return f"{v} != {lit(value)}" if negate else f"{v} == {lit(value)}"
        if isinstance(value, int | float):
            code = py_inline(value, loc)
            if value in (0, 1):
                flag = "True" if value == 1 else "False"
                if negate:
                    return f"{v} != {code} or {v} is {flag}"
                return f"({v} == {code} and {v} is not {flag})"
            return f"{v} != {code}" if negate else f"{v} == {code}"
        name = self._constant("CONST", py_block(value, loc, 0))
        return f"not _equal({v}, {name})" if negate else f"_equal({v}, {name})"

    def _enum_test(self, values: object, v: str, loc: Loc, *, negate: bool) -> str:
        if not isinstance(values, list | tuple) or not values:
            raise loc.fail(f"enum must be a non-empty array, got {values!r}")
        for value in values:
            py_inline(value, loc)
        if all(isinstance(e, str) for e in values):
            if len(values) <= 4:
                inline = (
                    "("
                    + ", ".join(lit(e) for e in values)
                    + ("," if len(values) == 1 else "")
                    + ")"
                )
                if len(inline) <= 60:
                    return f"{v} not in {inline}" if negate else f"{v} in {inline}"
            name = self._string_set(values)
            if negate:
                return f"not isinstance({v}, str) or {v} not in {name}"
            return f"(isinstance({v}, str) and {v} in {name})"
        if len(values) <= 4 and all(e is None or isinstance(e, str | int | float) for e in values):
            tests = [self._const_test(e, v, loc, negate=False) for e in values]
            joined = " or ".join(tests)
            return f"not ({joined})" if negate else f"({joined})"
        name = self._constant("ENUM", py_block(list(values), loc, 0, tuple_=True))
        return f"not _among({v}, {name})" if negate else f"_among({v}, {name})"

    def _fetched(self, node: Mapping[str, Any], loc: Loc) -> list[str]:
        """Required members whose value the fast path checks (beyond a string const)."""
        props = node.get("properties")
        required = node.get("required")
        if not isinstance(props, Mapping) or not isinstance(required, list | tuple):
            return []
        return [
            name
            for name in dict.fromkeys(required)
            if name in props
            and not self._trivial(props[name])
            and self._simple_const(props[name], loc) is None
        ]

    def _simple_const(self, node: object, loc: Loc) -> str | None:
        """The string of a schema that is only ``{"const": "..."}`` (plus annotations)."""
        if not isinstance(node, Mapping) or not isinstance(node.get("const"), str):
            return None
        if any(k != "const" and not self._trivial({k: None}) for k in node):
            return None
        self._check(node, loc)
        value: str = node["const"]
        return value

    def _resolve(self, node: Mapping[str, Any], loc: Loc) -> tuple[object, Loc]:
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise loc.fail(f"$ref must be a string, got {ref!r}")
        return self.index.resolve(ref, loc)

    def _emit_condition(
        self, fn: Function, ind: int, head: str, terms: list[str], sep: str, tail: str
    ) -> None:
        """``if <head><terms joined by sep><tail>:``, one term a line when too long."""
        line = f"if {head}{sep.join(terms)}{tail}:"
        if len(line) + 4 * ind <= LINE_LENGTH:
            fn.emit(ind, line)
            return
        op = sep.strip()
        inner = ind + 2 if head else ind + 1
        fn.emit(ind, "if (")
        if head:
            fn.emit(ind + 1, head.rstrip())
        for i, term in enumerate(terms):
            fn.emit(inner, f"{op} {term}" if i else term)
        if tail.strip():
            fn.emit(ind + 1, tail.strip())
        fn.emit(ind, "):")

    # ---- rules and the checks described once -------------------------------------------------

    def _emit_checks(self, mode: Mode, ind: int, node: Mapping[str, Any], loc: Loc, v: str,
                     ptr: Ptr, rule: str, checks: Sequence[Check]) -> None:
        """The checks of `checks` that `node` has, in their order, in `mode`."""
        for check in checks:
            if check.keyword in node:
                verdict = check.fails(self, node, loc, v)
                if verdict is not None:
                    condition, words = verdict
                    mode.fn.emit(ind, f"if {condition}:")
                    mode.fail(ind + 1, rule, ptr, [*ptr.subject(), *words])
