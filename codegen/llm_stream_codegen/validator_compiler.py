"""Compile JSON Schema (draft 2020-12) documents into the source of a Python validator module.

The output is straight-line code specialised per schema: each root gets

- ``validate_<name>(instance) -> list[SchemaError]``, every error in a deterministic order, each
  carrying a rule ID, the RFC 6901 pointer of the offending value and a sentence a person reads;
- ``is_valid_<name>(instance) -> bool``, a separate fast path that returns at the first failure
  and builds nothing on success.

The generated module imports only the standard library and ``from .diagnostics import
SchemaError``. Its semantics are those of ``jsonschema.Draft202012Validator`` with the default
format checker (``format`` is an annotation), including jsonschema's reading of ``integer``
(1.0 is an integer, True is not), of equality (1 == 1.0, True != 1, deep for arrays and objects)
and of ``uniqueItems``. Values are the ones ``json.loads`` produces (and their subclasses).

Rule attribution: an error found by a keyword of a schema node carries the ``x-rule`` of that
node, else of the nearest ancestor that has one (the schema tree as traversed from the root; a
``$ref`` target's own ``x-rule`` takes precedence inside it), else the root's ``default_rule``. A
missing required property carries the ``x-rule`` of its subschema under ``properties`` if that
subschema has one.

Every subschema reached through ``$ref`` compiles to one helper function per mode, shared by
all uses (which also makes recursive schemas work). A keyword the compiler does not implement
(``unevaluatedProperties``, ``$dynamicRef``, an unknown or misspelled keyword, ...) is a
compile-time :class:`SchemaCompileError` naming the schema and the JSON pointer of the node:
nothing is silently ignored. ``x-`` keys and the 2020-12 annotations assert nothing.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote, urljoin, urlsplit, uses_relative

__all__ = [
    "ANNOTATION_KEYWORDS",
    "SUPPORTED_KEYWORDS",
    "SchemaCompileError",
    "ValidatorRoot",
    "compile_validators",
]

LINE_LENGTH: Final = 100
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
_GROUPS: Final = (
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

# Where subschemas sit: needed to find embedded resources ($id) and anchors.
_SCHEMA_VALUED: Final = frozenset(
    {
        "additionalProperties",
        "items",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "contentSchema",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})

_TYPE_NAMES: Final = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_MAX_DISCRIMINATED_BRANCHES: Final = 12


class SchemaCompileError(ValueError):
    """A schema the compiler refuses, with the $id of its resource and the pointer of the node."""

    def __init__(self, schema_id: str, pointer: str, problem: str) -> None:
        super().__init__(f"{schema_id}#{pointer}: {problem}")
        self.schema_id = schema_id
        self.pointer = pointer
        self.problem = problem


@dataclass(frozen=True)
class ValidatorRoot:
    """One pair of public functions: ``validate_<name>`` and ``is_valid_<name>``."""

    name: str
    schema_id: str
    default_rule: str


def compile_validators(
    schemas: Mapping[str, Mapping[str, Any]],
    roots: Sequence[ValidatorRoot],
    extra_imports: Sequence[str] = (),
) -> str:
    """Return the source of a module validating each root; the same input gives the same bytes.

    ``schemas`` maps each $id (an absolute URI) to its schema document; ``extra_imports`` are
    import lines that code appended to the module needs.
    """
    return _Compiler(schemas, roots, extra_imports).module()


# --------------------------------------------------------------------------------------------
# Schema resources, locations and $ref resolution


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


def _defrag(uri: str) -> str:
    return uri.partition("#")[0]


def _join(base: str, ref: str) -> str | None:
    """Resolve ``ref`` against ``base``; None when a relative reference cannot be resolved."""
    if ref.startswith("#"):
        return _defrag(base) + ref
    if _SCHEME.match(ref):
        return ref
    parts = urlsplit(base)
    if parts.scheme in uses_relative and parts.scheme:
        return urljoin(base, ref)
    return None


@dataclass(frozen=True, order=True)
class _Loc:
    """A schema node's canonical location: its resource's URI and its pointer inside it."""

    base: str
    pointer: str

    def __str__(self) -> str:
        return f"{self.base}#{self.pointer}"

    def fail(self, problem: str) -> SchemaCompileError:
        return SchemaCompileError(self.base, self.pointer, problem)


def _is_schema(value: object) -> bool:
    return isinstance(value, bool | Mapping)


class _Index:
    """Every schema resource (including embedded ones) and anchor, by absolute URI."""

    def __init__(self, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        self.resources: dict[str, object] = {}
        self.anchors: dict[str, tuple[object, _Loc]] = {}
        for key in sorted(schemas):
            document = schemas[key]
            uri = _defrag(key)
            declared = document.get("$id") if isinstance(document, Mapping) else None
            base = uri
            if isinstance(declared, str):
                joined = _join(uri, declared)
                if joined is not None:
                    base = _defrag(joined)
            self.resources[uri] = document
            self.resources[base] = document
            self._scan(document, base, "", root=True)

    def _scan(self, node: object, base: str, pointer: str, *, root: bool = False) -> None:
        if not isinstance(node, Mapping):
            return
        declared = node.get("$id")
        if isinstance(declared, str) and not root:
            joined = _join(base, declared)
            if joined is not None:
                base, pointer = _defrag(joined), ""
                self.resources.setdefault(base, node)
        anchor = node.get("$anchor")
        if isinstance(anchor, str):
            self.anchors.setdefault(f"{base}#{anchor}", (node, _Loc(base, pointer)))
        for key, value in node.items():
            here = f"{pointer}/{_escape(key)}"
            if key in _SCHEMA_VALUED:
                self._scan(value, base, here)
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                for name, sub in value.items():
                    self._scan(sub, base, f"{here}/{_escape(name)}")
            elif key in _SCHEMA_LISTS and isinstance(value, list | tuple):
                for i, sub in enumerate(value):
                    self._scan(sub, base, f"{here}/{i}")

    def resolve(self, ref: str, at: _Loc) -> tuple[object, _Loc]:
        target = _join(at.base, ref)
        if target is None:
            raise at.fail(f"$ref {ref!r} is relative to a base URI that is not hierarchical")
        uri, _, fragment = target.partition("#")
        fragment = unquote(fragment)
        document = self.resources.get(uri)
        if document is None:
            raise at.fail(f"$ref {ref!r} does not resolve: no schema has the $id {uri!r}")
        if not fragment:
            return document, _Loc(uri, "")
        if fragment.startswith("/"):
            return self._walk(document, uri, fragment, ref, at)
        found = self.anchors.get(f"{uri}#{fragment}")
        if found is None:
            raise at.fail(f"$ref {ref!r} does not resolve: no $anchor {fragment!r} in {uri}")
        return found

    def _walk(
        self, document: object, uri: str, fragment: str, ref: str, at: _Loc
    ) -> tuple[object, _Loc]:
        node, base, pointer, kind = document, uri, "", "schema"
        for raw in fragment[1:].split("/"):
            segment = _unescape(raw)
            if isinstance(node, Mapping) and segment in node:
                node = node[segment]
            elif isinstance(node, list | tuple) and segment.isdigit() and int(segment) < len(node):
                node = node[int(segment)]
            else:
                raise at.fail(f"$ref {ref!r} does not resolve: no {segment!r} at {pointer!r}")
            pointer = f"{pointer}/{_escape(segment)}"
            if kind == "schema":
                kind = (
                    "schema"
                    if segment in _SCHEMA_VALUED
                    else "map"
                    if segment in _SCHEMA_MAPS
                    else "list"
                    if segment in _SCHEMA_LISTS
                    else "data"
                )
            elif kind in ("map", "list"):
                kind = "schema"
            if kind == "schema" and isinstance(node, Mapping) and isinstance(node.get("$id"), str):
                joined = _join(base, node["$id"])
                if joined is not None:
                    base, pointer = _defrag(joined), ""
        if not _is_schema(node):
            raise at.fail(f"$ref {ref!r} points at {type(node).__name__}, not at a schema")
        return node, _Loc(base, pointer)


def _child_loc(loc: _Loc, node: object, *segments: str | int) -> _Loc:
    """The location of a subschema of ``loc``; an embedded ``$id`` starts a new resource."""
    if isinstance(node, Mapping) and isinstance(node.get("$id"), str):
        joined = _join(loc.base, node["$id"])
        if joined is not None:
            return _Loc(_defrag(joined), "")
    return _Loc(loc.base, loc.pointer + "".join(f"/{_escape(str(s))}" for s in segments))


# --------------------------------------------------------------------------------------------
# Python literals and strings in the generated code


def _name_wanted(names: object) -> str:
    """What a message says of a property name that `propertyNames` refuses: what the schema's
    description says it must be, where it says so."""
    description = names.get("description") if isinstance(names, Mapping) else None
    if isinstance(description, str):
        return f": the property name must be {description}"
    return " has a property name that is not allowed"


def _lit(text: str) -> str:
    """A Python string literal, ASCII only, double-quoted where possible."""
    code = ascii(text)
    if code.startswith("'") and '"' not in text:
        code = '"' + code[1:-1].replace("\\'", "'") + '"'
    return code


def _pattern_lit(pattern: str) -> str:
    """A regex literal: a raw string where that reads better and means the same."""
    if (
        "\\" in pattern
        and pattern.isascii()
        and pattern.isprintable()
        and '"' not in pattern
        and not pattern.endswith("\\")
    ):
        return f'r"{pattern}"'
    return _lit(pattern)


def _json_text(value: object) -> str:
    """A JSON value as a message shows it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_json_text(str(k))}: {_json_text(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_json_text(v) for v in value) + "]"
    return repr(value)


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _py_inline(value: object, loc: _Loc) -> str:
    """A JSON value as a one-line Python literal."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return _lit(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise loc.fail(f"{value!r} is not a JSON number")
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_py_inline(v, loc) for v in value) + "]"
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise loc.fail(f"object key {k!r} is not a string")
            items.append(f"{_lit(k)}: {_py_inline(v, loc)}")
        return "{" + ", ".join(items) + "}"
    raise loc.fail(f"{value!r} is not a JSON value")


def _py_block(value: object, loc: _Loc, indent: int, *, tuple_: bool = False) -> list[str]:
    """A JSON value as a Python literal wrapped to the line length; the first line unindented."""
    inline = _py_inline(value, loc)
    if tuple_ and isinstance(value, list | tuple):
        inline = "(" + inline[1:-1] + ("," if len(value) == 1 else "") + ")"
    if len(inline) + indent * 4 + 12 <= LINE_LENGTH or not isinstance(
        value, Mapping | list | tuple
    ):
        return [inline]
    pad = "    " * (indent + 1)
    lines: list[str] = []
    if isinstance(value, Mapping):
        lines.append("{")
        for k, v in value.items():
            sub = _py_block(v, loc, indent + 1)
            lines.append(f"{pad}{_lit(str(k))}: {sub[0]}")
            lines.extend(sub[1:])
            lines[-1] += ","
        lines.append("    " * indent + "}")
    else:
        lines.append("(" if tuple_ else "[")
        for v in value:
            sub = _py_block(v, loc, indent + 1)
            lines.append(pad + sub[0])
            lines.extend(sub[1:])
            lines[-1] += ","
        lines.append("    " * indent + (")" if tuple_ else "]"))
    return lines


# A string under construction: literal pieces and Python expressions, joined into an f-string.
_Part = tuple[bool, str]  # (is_expression, text)


def _merge(parts: Sequence[_Part]) -> list[_Part]:
    merged: list[_Part] = []
    for is_expr, text in parts:
        if not is_expr and merged and not merged[-1][0]:
            merged[-1] = (False, merged[-1][1] + text)
        elif is_expr or text:
            merged.append((is_expr, text))
    return merged


def _fstring(parts: Sequence[_Part]) -> str:
    merged = _merge(parts)
    if not any(is_expr for is_expr, _ in merged):
        return _lit("".join(text for _, text in merged))
    template = "".join(
        "{" + text + "}" if is_expr else text.replace("{", "{{").replace("}", "}}")
        for is_expr, text in merged
    )
    return "f" + _lit(template)


def _fstring_lines(parts: Sequence[_Part], width: int) -> list[str]:
    """The same string as implicitly concatenated literals, each at most ``width`` wide."""
    tokens: list[_Part] = []
    for is_expr, text in _merge(parts):
        if is_expr:
            tokens.append((True, text))
            continue
        for word in re.findall(r"\S+\s*|\s+", text):
            tokens.extend((False, word[i : i + 40]) for i in range(0, len(word), 40))
    lines: list[str] = []
    current: list[_Part] = []
    for token in tokens:
        if current and len(_fstring([*current, token])) > width:
            lines.append(_fstring(current))
            current = []
        current.append(token)
    lines.append(_fstring(current))
    return lines


@dataclass(frozen=True)
class _Ptr:
    """The JSON pointer of the value being checked, as pieces of a string built on error."""

    parts: tuple[_Part, ...] = ()

    def key(self, name: str) -> _Ptr:
        return _Ptr((*self.parts, (False, "/" + _escape(name))))

    def index(self, i: int) -> _Ptr:
        return _Ptr((*self.parts, (False, f"/{i}")))

    def dynamic_key(self, var: str) -> _Ptr:
        return _Ptr((*self.parts, (False, "/"), (True, f"_esc({var})")))

    def dynamic_index(self, var: str) -> _Ptr:
        return _Ptr((*self.parts, (False, "/"), (True, var)))

    def code(self) -> str:
        if self.parts == ((True, "p"),):
            return "p"
        return _fstring(self.parts)

    def subject(self) -> tuple[_Part, ...]:
        """How a message names the value: its pointer, or "the value" at the root."""
        if not self.parts:
            return ((False, "the value"),)
        if self.parts == ((True, "p"),):
            return ((True, "_at(p)"),)
        return self.parts


def _plural(n: int | float, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def _number_text(value: int | float) -> str:
    return repr(value)


# --------------------------------------------------------------------------------------------
# Runtime support emitted into the generated module (only what the generated code uses)

_RUNTIME: Final[dict[str, str]] = {
    "_at": '''
def _at(pointer: str) -> str:
    """How a message names a value: its JSON pointer, or "the value" at the root."""
    return pointer or "the value"
''',
    "_esc": '''
def _esc(key: object) -> str:
    """A property name as a JSON pointer segment (RFC 6901)."""
    return str(key).replace("~", "~0").replace("/", "~1")
''',
    "_kind": '''
def _kind(value: object) -> str:
    """How a message names the JSON type of a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return f"a {type(value).__name__}"
''',
    "_is_integer": '''
def _is_integer(value: object) -> bool:
    """JSON Schema's integer, past the fast path: integral floats, int subclasses but bool."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)
''',
    "_is_number": '''
def _is_number(value: object) -> bool:
    """JSON Schema's number, past the fast path: any number but a bool."""
    return isinstance(value, numbers.Number) and not isinstance(value, bool)
''',
    "_match": '''
def _match(pattern: re.Pattern[str], matched: set[str], text: str) -> bool:
    """pattern.search(text), remembering strings that matched (up to 4096 per pattern)."""
    if pattern.search(text) is None:
        return False
    if len(matched) < 4096:
        matched.add(text)
    return True
''',
    "_not_multiple": '''
def _not_multiple(value: Any, divisor: float) -> bool:
    """True unless value is a multiple of a float divisor (as jsonschema decides it)."""
    quotient = value / divisor
    try:
        return bool(int(quotient) != quotient)
    except OverflowError:
        return (Fraction(value) / Fraction(divisor)).denominator != 1
''',
    "_unbool": '''
_TRUE = object()
_FALSE = object()


def _unbool(value: object) -> object:
    """Make True and 1, False and 0 different for equality (JSON Schema equality)."""
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value
''',
    "_equal": '''
def _equal(one: Any, two: Any) -> bool:
    """JSON equality: 1 == 1.0 but True != 1, deep for arrays and objects."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and _equal(value, two[key]) for key, value in one.items()
        )
    return bool(_unbool(one) == _unbool(two))
''',
    "_among": '''
def _among(value: object, options: tuple[object, ...]) -> bool:
    """True if value is JSON-equal to one of options."""
    return any(_equal(value, option) for option in options)
''',
    "_unique": '''
def _unique(items: list[Any]) -> bool:
    """uniqueItems as jsonschema decides it: sort when the items sort, else compare pairs."""
    try:
        ordered: list[Any] = sorted(_unbool(item) for item in items)
        for one, two in itertools.pairwise(ordered):
            if _equal(one, two):
                return False
    except (NotImplementedError, TypeError):
        seen: list[object] = []
        for item in items:
            value = _unbool(item)
            if any(_equal(other, value) for other in seen):
                return False
            seen.append(value)
    return True
''',
}
_RUNTIME_IMPORTS: Final = {
    "_is_number": "import numbers",
    "_not_multiple": "from fractions import Fraction",
    "_equal": "from collections.abc import Mapping, Sequence",
    "_unique": "import itertools",
}


def _uses(name: str, text: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None


# --------------------------------------------------------------------------------------------
# The compiler


@dataclass
class _Function:
    """A function being generated: its lines, and a counter for fresh local names."""

    lines: list[str] = field(default_factory=list)
    count: int = 0

    def var(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def capture(self, build: Callable[..., None], *args: Any) -> list[str]:
        """Run ``build(*args)`` and return the lines it emitted instead of keeping them."""
        saved, self.lines = self.lines, []
        try:
            build(*args)
            return self.lines
        finally:
            self.lines = saved

    def block(
        self, indent: int, header: str, body: list[str], bindings: Sequence[tuple[str, str]] = ()
    ) -> None:
        """``header`` (an if or a for, its names unused in the body renamed with a leading
        underscore), the ``bindings`` the body uses, then the body; nothing if the body is empty.
        """
        if not body:
            return
        text = "\n".join(body)
        bindings = [(name, value) for name, value in bindings if _uses(name, text)]
        text += "\n" + "\n".join(value for _, value in bindings)
        if header.startswith("for "):
            target, _, rest = header[4:].partition(" in ")
            names = [n.strip() for n in target.split(",")]
            if len(names) == 2 and rest.endswith(".items():") and not _uses(names[1], text):
                names, rest = names[:1], rest.removesuffix(".items():") + ":"
            renamed = [n if _uses(n, text) else "_" + n for n in names]
            header = f"for {', '.join(renamed)} in {rest}"
        self.emit(indent, header)
        for name, value in bindings:
            self.emit(indent + 1, f"{name} = {value}")
        self.lines.extend(body)


@dataclass
class _Helper:
    name: str
    mode: str  # "is" or "val"
    node: object
    loc: _Loc
    takes_rule: bool
    lines: list[str] = field(default_factory=list)


_CLASSES: Final = {"object": "dict", "array": "list", "string": "str"}


def _type_test(types: Sequence[str], v: str, *, negate: bool) -> str:
    """An expression true when ``v`` has (negate: lacks) one of the JSON types."""
    if len(types) == 1:
        t = types[0]
        if t == "object":
            return f"not isinstance({v}, dict)" if negate else f"isinstance({v}, dict)"
        if t == "array":
            return f"not isinstance({v}, list)" if negate else f"isinstance({v}, list)"
        if t == "string":
            return f"not isinstance({v}, str)" if negate else f"isinstance({v}, str)"
        if t == "integer":
            if negate:
                return f"type({v}) is not int and not _is_integer({v})"
            return f"(type({v}) is int or _is_integer({v}))"
        if t == "number":
            if negate:
                return f"type({v}) is not int and type({v}) is not float and not _is_number({v})"
            return f"(type({v}) is int or type({v}) is float or _is_number({v}))"
        if t == "boolean":
            if negate:
                return f"{v} is not True and {v} is not False"
            return f"({v} is True or {v} is False)"
        return f"{v} is not None" if negate else f"{v} is None"
    classes = [_CLASSES[t] for t in types if t in _CLASSES]
    tests = [f"isinstance({v}, ({', '.join(classes)}))"] if len(classes) > 1 else []
    for t in types:
        if t in _CLASSES and len(classes) > 1:
            continue
        if t == "number":
            tests.append(f"_is_number({v})")
        elif t == "integer":
            tests.append(f"_is_integer({v})")
        elif t == "boolean":
            tests.extend([f"{v} is True", f"{v} is False"])
        else:
            tests.append(_type_test([t], v, negate=False))
    joined = " or ".join(tests)
    return f"not ({joined})" if negate else f"({joined})"


def _bare(test: str) -> str:
    """A test without the parentheses it carries for use inside a larger expression."""
    if test.startswith("(") and test.endswith(")"):
        depth = 0
        for i, char in enumerate(test):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and i < len(test) - 1:
                return test
        return test[1:-1]
    return test


def _type_words(types: Sequence[str]) -> str:
    words = [_TYPE_NAMES[t] for t in types]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


class _Compiler:
    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]],
        roots: Sequence[ValidatorRoot],
        extra_imports: Sequence[str] = (),
    ):
        self.index = _Index(schemas)
        self.roots = list(roots)
        self.extra_imports = frozenset(extra_imports)
        self.constants: dict[str, str] = {}  # code -> name
        self.constant_lines: list[str] = []
        self.constant_count: dict[str, int] = {}
        self.helpers: dict[tuple[str, _Loc], _Helper] = {}
        self.pending: list[_Helper] = []
        self.names: set[str] = set()
        self.labels = self._resource_labels()

    # ---- naming ------------------------------------------------------------------------------

    def _resource_labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        for root in self.roots:
            labels.setdefault(_defrag(root.schema_id), root.name)
        uris = sorted(u for u in self.index.resources if u not in labels)
        split = [re.split(r"[:/#]+", u) for u in uris]
        common = 0
        if len(split) > 1:
            while all(len(s) > common + 1 and s[common] == split[0][common] for s in split):
                common += 1
        for uri, segments in zip(uris, split, strict=True):
            rest = segments[common:] if len(split) > 1 else segments[-2:]
            labels[uri] = _identifier("_".join(rest)) or "schema"
        return labels

    def _fresh(self, stem: str) -> str:
        name, n = stem, 1
        while name in self.names:
            n += 1
            name = f"{stem}_{n}"
        self.names.add(name)
        return name

    def _helper_name(self, mode: str, loc: _Loc) -> str:
        label = self.labels.get(loc.base) or _identifier(loc.base) or "schema"
        segments = [
            _unescape(s)
            for s in loc.pointer.split("/")[1:]
            if s not in ("$defs", "definitions", "properties")
        ]
        slug = _identifier("_".join([label, *segments]))[:60].rstrip("_")
        return self._fresh(("_is_valid_" if mode == "is" else "_validate_") + slug)

    def _constant(self, kind: str, code_lines: list[str], annotation: str = "") -> str:
        code = "\n".join(code_lines)
        name = self.constants.get(code)
        if name is None:
            n = self.constant_count.get(kind, 0) + 1
            self.constant_count[kind] = n
            name = f"_{kind}_{n}"
            self.constants[code] = name
            typed = f"{name}: {annotation}" if annotation else name
            self.constant_lines.append(f"{typed} = {code}")
        return name

    def _regex(self, pattern: object, loc: _Loc) -> str:
        if not isinstance(pattern, str):
            raise loc.fail(f"a pattern must be a string, got {pattern!r}")
        try:
            re.compile(pattern)
        except re.error as error:
            raise loc.fail(f"pattern {pattern!r} is not a regular expression: {error}") from None
        return self._constant("PATTERN", [f"re.compile({_pattern_lit(pattern)})"])

    def _search(self, pattern: object, loc: _Loc, v: str, *, negate: bool) -> str:
        """A test that ``v`` (a string) matches (negate: does not match) a pattern."""
        regex = self._regex(pattern, loc)
        matched = self._constant("MATCHED", [f"set()  # strings {regex} matched"], "set[str]")
        if negate:
            return f"{v} not in {matched} and not _match({regex}, {matched}, {v})"
        return f"({v} in {matched} or _match({regex}, {matched}, {v}))"

    def _string_set(self, values: Sequence[str]) -> str:
        items = sorted(set(values))
        inline = "frozenset({" + ", ".join(_lit(s) for s in items) + "})"
        if len(inline) + 20 <= LINE_LENGTH:
            return self._constant("NAMES", [inline])
        lines = ["frozenset(", "    {"]
        lines += [f"        {_lit(s)}," for s in items]
        lines += ["    }", ")"]
        return self._constant("NAMES", lines)

    def _helper(self, mode: str, node: object, loc: _Loc) -> _Helper:
        key = (mode, loc)
        helper = self.helpers.get(key)
        if helper is None:
            takes_rule = mode == "val" and not (isinstance(node, Mapping) and "x-rule" in node)
            helper = _Helper(self._helper_name(mode, loc), mode, node, loc, takes_rule)
            self.helpers[key] = helper
            self.pending.append(helper)
        return helper

    def _call_val(self, node: object, loc: _Loc, v: str, ptr: _Ptr, rule: str) -> str:
        helper = self._helper("val", node, loc)
        args = [v, ptr.code(), "errors"]
        if helper.takes_rule:
            args.append(rule)
        return f"{helper.name}({', '.join(args)})"

    # ---- keyword checks ----------------------------------------------------------------------

    def _check(self, node: Mapping[str, Any], loc: _Loc) -> None:
        for key in node:
            if not isinstance(key, str):
                raise loc.fail(f"schema keys must be strings, got {key!r}")
            if key in SUPPORTED_KEYWORDS or key in ANNOTATION_KEYWORDS or key.startswith("x-"):
                continue
            if key in _STRUCTURAL:
                continue
            raise loc.fail(f"keyword {key!r} is not supported by the validator compiler")
        schema = node.get("$schema")
        if schema is not None and _defrag(str(schema)) != DRAFT_2020_12:
            raise loc.fail(f"$schema {schema!r} is not draft 2020-12")
        rule = node.get("x-rule")
        if rule is not None and not (isinstance(rule, str) and rule):
            raise loc.fail(f"x-rule must be a non-empty string, got {rule!r}")

    def _check_tree(self, node: object, loc: _Loc) -> None:
        """Refuse unknown keywords in a subschema that is not compiled (it cannot fail)."""
        if not isinstance(node, Mapping):
            return
        self._check(node, loc)
        for key, value in node.items():
            if key in _SCHEMA_VALUED and key in SUPPORTED_KEYWORDS:
                self._check_tree(value, _child_loc(loc, value, key))
            elif key in _SCHEMA_MAPS and key in SUPPORTED_KEYWORDS and isinstance(value, Mapping):
                for name, sub in value.items():
                    self._check_tree(sub, _child_loc(loc, sub, key, name))
            elif key in _SCHEMA_LISTS and isinstance(value, list | tuple):
                for i, sub in enumerate(value):
                    self._check_tree(sub, _child_loc(loc, sub, key, i))

    def _sub(self, node: Mapping[str, Any], key: str, loc: _Loc) -> tuple[object, _Loc]:
        value = node[key]
        if not _is_schema(value):
            raise loc.fail(f"{key} must be a schema, got {value!r}")
        return value, _child_loc(loc, value, key)

    def _subs(self, node: Mapping[str, Any], key: str, loc: _Loc) -> list[tuple[object, _Loc]]:
        value = node[key]
        if not isinstance(value, list | tuple) or (key != "prefixItems" and not value):
            raise loc.fail(f"{key} must be a non-empty array of schemas, got {value!r}")
        result = []
        for i, sub in enumerate(value):
            if not _is_schema(sub):
                raise loc.fail(f"{key}/{i} must be a schema, got {sub!r}")
            result.append((sub, _child_loc(loc, sub, key, i)))
        return result

    def _sub_map(
        self, node: Mapping[str, Any], key: str, loc: _Loc
    ) -> list[tuple[str, object, _Loc]]:
        value = node[key]
        if not isinstance(value, Mapping):
            raise loc.fail(f"{key} must be an object, got {value!r}")
        result = []
        for name, sub in value.items():
            if not _is_schema(sub):
                raise loc.fail(f"{key}/{name} must be a schema, got {sub!r}")
            result.append((name, sub, _child_loc(loc, sub, key, name)))
        return result

    @staticmethod
    def _count(node: Mapping[str, Any], key: str, loc: _Loc) -> int:
        value = node[key]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise loc.fail(f"{key} must be a non-negative integer, got {value!r}")
        return value

    @staticmethod
    def _number(node: Mapping[str, Any], key: str, loc: _Loc) -> int | float:
        value = node[key]
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise loc.fail(f"{key} must be a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise loc.fail(f"{key} must be a finite number, got {value!r}")
        return value

    @staticmethod
    def _strings(node: Mapping[str, Any], key: str, loc: _Loc) -> list[str]:
        value = node[key]
        if not isinstance(value, list | tuple) or not all(isinstance(s, str) for s in value):
            raise loc.fail(f"{key} must be an array of strings, got {value!r}")
        return list(dict.fromkeys(value))

    @staticmethod
    def _types(node: Mapping[str, Any], loc: _Loc) -> list[str] | None:
        if "type" not in node:
            return None
        value = node["type"]
        types = [value] if isinstance(value, str) else value
        if (
            not isinstance(types, list | tuple)
            or not types
            or not all(isinstance(t, str) and t in _TYPE_NAMES for t in types)
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
        if types is None:
            return _type_test([group], v, negate=False)
        if group == "number":
            if not {"number", "integer"} & set(types):
                return None
            if set(types) <= {"number", "integer"}:
                return ""
            return _type_test(["number"], v, negate=False)
        if group not in types:
            return None
        if types == [group]:
            return ""
        return _type_test([group], v, negate=False)

    # ---- const and enum ----------------------------------------------------------------------

    def _const_test(self, value: object, v: str, loc: _Loc, *, negate: bool) -> str:
        """An expression true when ``v`` equals (negate: differs from) a JSON value."""
        if value is None or isinstance(value, bool):
            return f"{v} is not {value!r}" if negate else f"{v} is {value!r}"
        if isinstance(value, str):
            return f"{v} != {_lit(value)}" if negate else f"{v} == {_lit(value)}"
        if isinstance(value, int | float):
            code = _py_inline(value, loc)
            if value in (0, 1):
                flag = "True" if value == 1 else "False"
                if negate:
                    return f"{v} != {code} or {v} is {flag}"
                return f"({v} == {code} and {v} is not {flag})"
            return f"{v} != {code}" if negate else f"{v} == {code}"
        name = self._constant("CONST", _py_block(value, loc, 0))
        return f"not _equal({v}, {name})" if negate else f"_equal({v}, {name})"

    def _enum_test(self, values: object, v: str, loc: _Loc, *, negate: bool) -> str:
        if not isinstance(values, list | tuple) or not values:
            raise loc.fail(f"enum must be a non-empty array, got {values!r}")
        for value in values:
            _py_inline(value, loc)
        if all(isinstance(e, str) for e in values):
            if len(values) <= 4:
                inline = (
                    "("
                    + ", ".join(_lit(e) for e in values)
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
        name = self._constant("ENUM", _py_block(list(values), loc, 0, tuple_=True))
        return f"not _among({v}, {name})" if negate else f"_among({v}, {name})"

    # ---- the fast path: statements that return False unless v is valid --------------------

    def _is(self, fn: _Function, ind: int, node: object, loc: _Loc, v: str) -> None:
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
            fn.emit(ind, f"if {_type_test(types, v, negate=True)}:")
            fn.emit(ind + 1, "return False")
        if "const" in node:
            fn.emit(ind, f"if {self._const_test(node['const'], v, loc, negate=True)}:")
            fn.emit(ind + 1, "return False")
        if "enum" in node:
            fn.emit(ind, f"if {self._enum_test(node['enum'], v, loc, negate=True)}:")
            fn.emit(ind + 1, "return False")
        for group, keywords in _GROUPS:
            if not any(k in node for k in keywords):
                continue
            guard = self._group_guard(types, group, v)
            if guard is None:
                continue
            inner = ind + 1 if guard else ind
            build = getattr(self, f"_is_{group}")
            body = fn.capture(build, fn, inner, node, loc, v)
            if body and guard:
                fn.emit(ind, f"if {_bare(guard)}:")
            fn.lines.extend(body)
        self._is_applicators(fn, ind, node, loc, v)

    def _is_applicators(
        self, fn: _Function, ind: int, node: Mapping[str, Any], loc: _Loc, v: str
    ) -> None:
        if "allOf" in node:
            for sub, sub_loc in self._subs(node, "allOf", loc):
                self._is(fn, ind, sub, sub_loc, v)
        if "anyOf" in node:
            branches = self._subs(node, "anyOf", loc)
            if len(branches) == 1:
                self._is(fn, ind, *branches[0], v)
            else:
                calls = [f"{self._helper('is', s, sl).name}({v})" for s, sl in branches]
                self._emit_condition(fn, ind, "not (", calls, " or ", ")")
                fn.emit(ind + 1, "return False")
        if "oneOf" in node:
            branches = self._subs(node, "oneOf", loc)
            if len(branches) == 1:
                self._is(fn, ind, *branches[0], v)
            else:
                calls = [f"{self._helper('is', s, sl).name}({v})" for s, sl in branches]
                self._emit_condition(fn, ind, "", calls, " + ", " != 1")
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

    def _emit_condition(
        self, fn: _Function, ind: int, head: str, terms: list[str], sep: str, tail: str
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

    def _resolve(self, node: Mapping[str, Any], loc: _Loc) -> tuple[object, _Loc]:
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise loc.fail(f"$ref must be a string, got {ref!r}")
        return self.index.resolve(ref, loc)

    def _conditional(
        self,
        fn: _Function,
        ind: int,
        node: Mapping[str, Any],
        loc: _Loc,
        v: str,
        inline: Callable[[int, object, _Loc], None],
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

    def _fetched(self, node: Mapping[str, Any], loc: _Loc) -> list[str]:
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

    def _is_object(
        self, fn: _Function, ind: int, node: Mapping[str, Any], loc: _Loc, v: str
    ) -> None:
        props = self._sub_map(node, "properties", loc) if "properties" in node else []
        required = self._strings(node, "required", loc) if "required" in node else []
        is_required = set(required)
        in_try = self._types(node, loc) == ["object"] and len(self._fetched(node, loc)) > 1
        fetch: list[str] = []  # ``var = v[key]`` lines: members known to be present
        checks: list[str] = []
        for name, sub, sub_loc in props:
            key = _lit(name)
            const = self._simple_const(sub, sub_loc)
            if const is not None:  # a missing member reads as None, which is no string
                test = (
                    f"{v}.get({key})" if name in is_required else f"{v}.get({key}, {_lit(const)})"
                )
                fn.emit(ind, f"if {test} != {_lit(const)}:")
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
                    if _uses(w, "\n".join(body)):
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
                fn.emit(ind, f"if {_lit(name)} not in {v}:")
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
        if "minProperties" in node:
            fn.emit(ind, f"if len({v}) < {self._count(node, 'minProperties', loc)}:")
            fn.emit(ind + 1, "return False")
        if "maxProperties" in node:
            fn.emit(ind, f"if len({v}) > {self._count(node, 'maxProperties', loc)}:")
            fn.emit(ind + 1, "return False")
        for name, needs in self._dependent_required(node, loc):
            missing = " or ".join(f"{_lit(n)} not in {v}" for n in needs)
            fn.emit(ind, f"if {_lit(name)} in {v} and ({missing}):")
            fn.emit(ind + 1, "return False")
        if "dependentSchemas" in node:
            for name, sub, sub_loc in self._sub_map(node, "dependentSchemas", loc):
                body = fn.capture(self._is, fn, ind + 1, sub, sub_loc, v)
                fn.block(ind, f"if {_lit(name)} in {v}:", body)

    def _is_additional(self, k: str, known: set[str], regexes: list[str]) -> str:
        tests = []
        if known:
            tests.append(f"{k} not in {self._string_set(sorted(known))}")
        tests += [f"{regex}.search({k}) is None" for regex in regexes]
        return " and ".join(tests) or "True"

    def _simple_const(self, node: object, loc: _Loc) -> str | None:
        """The string of a schema that is only ``{"const": "..."}`` (plus annotations)."""
        if not isinstance(node, Mapping) or not isinstance(node.get("const"), str):
            return None
        if any(k != "const" and not self._trivial({k: None}) for k in node):
            return None
        self._check(node, loc)
        value: str = node["const"]
        return value

    def _dependent_required(
        self, node: Mapping[str, Any], loc: _Loc
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

    def _is_array(
        self, fn: _Function, ind: int, node: Mapping[str, Any], loc: _Loc, v: str
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
        if "minItems" in node:
            fn.emit(ind, f"if len({v}) < {self._count(node, 'minItems', loc)}:")
            fn.emit(ind + 1, "return False")
        if "maxItems" in node:
            fn.emit(ind, f"if len({v}) > {self._count(node, 'maxItems', loc)}:")
            fn.emit(ind + 1, "return False")
        if self._unique_items(node, loc):
            fn.emit(ind, f"if not _unique({v}):")
            fn.emit(ind + 1, "return False")
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

    def _unique_items(self, node: Mapping[str, Any], loc: _Loc) -> bool:
        if "uniqueItems" not in node:
            return False
        value = node["uniqueItems"]
        if not isinstance(value, bool):
            raise loc.fail(f"uniqueItems must be a boolean, got {value!r}")
        return value

    def _contains(
        self, node: Mapping[str, Any], loc: _Loc
    ) -> tuple[object, _Loc, int, int | None] | None:
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

    def _is_string(
        self, fn: _Function, ind: int, node: Mapping[str, Any], loc: _Loc, v: str
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

    _COMPARISONS: Final = (
        ("minimum", "<", ">="),
        ("maximum", ">", "<="),
        ("exclusiveMinimum", "<=", ">"),
        ("exclusiveMaximum", ">=", "<"),
    )

    def _not_multiple_test(self, node: Mapping[str, Any], loc: _Loc, v: str) -> str | None:
        if "multipleOf" not in node:
            return None
        divisor = self._number(node, "multipleOf", loc)
        if divisor <= 0:
            raise loc.fail(f"multipleOf must be greater than 0, got {divisor!r}")
        if isinstance(divisor, float):
            return f"_not_multiple({v}, {divisor!r})"
        return f"{v} % {divisor}"

    def _is_number(
        self, fn: _Function, ind: int, node: Mapping[str, Any], loc: _Loc, v: str
    ) -> None:
        for key, fails, _ in self._COMPARISONS:
            if key in node:
                fn.emit(ind, f"if {v} {fails} {self._number(node, key, loc)!r}:")
                fn.emit(ind + 1, "return False")
        test = self._not_multiple_test(node, loc, v)
        if test is not None:
            fn.emit(ind, f"if {test}:")
            fn.emit(ind + 1, "return False")

    # ---- the full path: statements that append every error to ``errors`` -------------------

    def _error(
        self, fn: _Function, ind: int, rule: str, ptr: _Ptr, message: Sequence[_Part]
    ) -> None:
        pointer = ptr.code()
        line = f"errors.append(SchemaError({rule}, {pointer}, {_fstring(message)}))"
        if len(line) + 4 * ind <= LINE_LENGTH:
            fn.emit(ind, line)
            return
        fn.emit(ind, "errors.append(")
        fn.emit(ind + 1, "SchemaError(")
        fn.emit(ind + 2, f"{rule},")
        fn.emit(ind + 2, f"{pointer},")
        lines = _fstring_lines(message, LINE_LENGTH - 4 * (ind + 2) - 1)
        for line in lines[:-1]:
            fn.emit(ind + 2, line)
        fn.emit(ind + 2, lines[-1] + ",")
        fn.emit(ind + 1, ")")
        fn.emit(ind, ")")

    @staticmethod
    def _rule_of(node: object, inherited: str) -> str:
        if isinstance(node, Mapping) and isinstance(node.get("x-rule"), str):
            return _lit(node["x-rule"])
        return inherited

    def _val(
        self, fn: _Function, ind: int, node: object, loc: _Loc, v: str, ptr: _Ptr, rule: str
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
                (False, f" must be {_type_words(types)}, got "),
                (True, f"_kind({v})"),
            ]
            group = types[0] if len(types) == 1 and types[0] != "integer" else None
            body: list[str] = []
            if group in ("object", "array", "string", "number"):
                keywords = dict(_GROUPS)[group]
                if any(k in node for k in keywords):
                    build = getattr(self, f"_val_{group}")
                    body = fn.capture(build, fn, ind + 1, node, loc, v, ptr, rule)
                done.add(group)
            if body:
                fn.emit(ind, f"if {_bare(_type_test(types, v, negate=False))}:")
                fn.lines.extend(body)
                fn.emit(ind, "else:")
            else:
                fn.emit(ind, f"if {_type_test(types, v, negate=True)}:")
            self._error(fn, ind + 1, rule, ptr, message)
        if "const" in node:
            const = node["const"]
            fn.emit(ind, f"if {self._const_test(const, v, loc, negate=True)}:")
            shown = _shorten(_json_text(const))
            self._error(fn, ind + 1, rule, ptr, [*subject, (False, f" must be {shown}")])
        if "enum" in node:
            values = node["enum"]
            fn.emit(ind, f"if {self._enum_test(values, v, loc, negate=True)}:")
            shown = ", ".join(_json_text(e) for e in values[:10])
            if len(values) > 10:
                shown += f", ... ({len(values)} values)"
            self._error(
                fn, ind + 1, rule, ptr, [*subject, (False, f" must be one of {_shorten(shown)}")]
            )
        for group, keywords in _GROUPS:
            if group in done or not any(k in node for k in keywords):
                continue
            guard = self._group_guard(types, group, v)
            if guard is None:
                continue
            if types is not None and guard == "" and types != [group]:
                guard = _type_test([group], v, negate=False)  # integer: report bounds of 1.5 too
            inner = ind + 1 if guard else ind
            build = getattr(self, f"_val_{group}")
            body = fn.capture(build, fn, inner, node, loc, v, ptr, rule)
            if body and guard:
                fn.emit(ind, f"if {_bare(guard)}:")
            fn.lines.extend(body)
        self._val_applicators(fn, ind, node, loc, v, ptr, rule)

    def _val_applicators(
        self,
        fn: _Function,
        ind: int,
        node: Mapping[str, Any],
        loc: _Loc,
        v: str,
        ptr: _Ptr,
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
                self._val_no_branch(
                    fn,
                    ind + 1,
                    branches,
                    v,
                    ptr,
                    rule,
                    [*subject, (False, f" must match at least one of {count} alternatives")],
                )
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
                self._val_no_branch(
                    fn,
                    ind + 1,
                    branches,
                    v,
                    ptr,
                    rule,
                    [*subject, (False, f" must match exactly one of {count} alternatives")],
                )
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
                shown = _shorten(_json_text(sub), 60)
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
        fn: _Function,
        ind: int,
        branches: list[tuple[object, _Loc]],
        v: str,
        ptr: _Ptr,
        rule: str,
        message: list[_Part],
    ) -> None:
        """No alternative matched: report the errors of the one the value evidently meant
        (told by its type and the string consts of its properties), else one error."""
        tests = [self._looks_like(sub, sub_loc, v) for sub, sub_loc in branches]
        names = [fn.var("c") if test else "" for test in tests]
        chosen: list[tuple[str, int]] = []  # (condition, branch)
        if len(branches) <= _MAX_DISCRIMINATED_BRANCHES:
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
            if name and test and _uses(name, used):
                fn.emit(ind, f"{name} = {_bare(test)}")
        for n, (condition, i) in enumerate(chosen):
            fn.emit(ind, f"{'elif' if n else 'if'} {condition}:")
            fn.emit(ind + 1, self._call_val(*branches[i], v, ptr, rule))
        fn.emit(ind, "else:")
        self._error(fn, ind + 1, rule, ptr, message)

    def _looks_like(self, node: object, loc: _Loc, v: str) -> str | None:
        """A cheap test that ``v`` is meant for this branch, or None if nothing tells."""
        types, consts = self._shape(node, loc, 0)
        tests = []
        if types is not None:
            tests.append(_type_test(types, v, negate=False))
        if consts:
            if types != ["object"]:
                tests.append(f"isinstance({v}, dict)")
            for name, value, required in consts:
                if required:
                    tests.append(f"{v}.get({_lit(name)}) == {_lit(value)}")
                else:
                    tests.append(f"{v}.get({_lit(name)}, {_lit(value)}) == {_lit(value)}")
        return " and ".join(tests) or None

    def _shape(
        self, node: object, loc: _Loc, depth: int
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
            inner += [(s, _child_loc(loc, s, "allOf", i)) for i, s in enumerate(node["allOf"])]
        if isinstance(node.get("$ref"), str):
            inner.append(self._resolve(node, loc))
        for sub, sub_loc in inner:
            sub_types, sub_consts = self._shape(sub, sub_loc, depth + 1)
            types = types if types is not None else sub_types
            consts += [c for c in sub_consts if c[0] not in {n for n, _, _ in consts}]
        return types, consts

    def _val_object(
        self,
        fn: _Function,
        ind: int,
        node: Mapping[str, Any],
        loc: _Loc,
        v: str,
        ptr: _Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        props = self._sub_map(node, "properties", loc) if "properties" in node else []
        required = self._strings(node, "required", loc) if "required" in node else []
        is_required = set(required)
        for name, sub, sub_loc in props:
            key, member = _lit(name), ptr.key(name)
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
                fn.emit(ind, f"if {_lit(name)} not in {v}:")
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
                message = [*member.parts, (False, _name_wanted(names))]
                names_rule = self._rule_of(names, rule)
                inner = fn.capture(self._error, fn, ind + 2, names_rule, member, message)
                fn.block(
                    ind, f"for {k} in {v}:", [f"{'    ' * (ind + 1)}if not {call}({k}):", *inner]
                )
        for key, op, word in (
            ("minProperties", "<", "at least"),
            ("maxProperties", ">", "at most"),
        ):
            if key in node:
                n = self._count(node, key, loc)
                fn.emit(ind, f"if len({v}) {op} {n}:")
                words = f" must have {word} {_plural(n, 'property', 'properties')}, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, f"len({v})")])
        for name, needs in self._dependent_required(node, loc):
            fn.emit(ind, f"if {_lit(name)} in {v}:")
            trigger = ptr.key(name)
            for need in needs:
                member = ptr.key(need)
                fn.emit(ind + 1, f"if {_lit(need)} not in {v}:")
                message = [*member.parts, (False, " is required when "), *trigger.parts]
                self._error(fn, ind + 2, rule, member, [*message, (False, " is present")])
        if "dependentSchemas" in node:
            for name, sub, sub_loc in self._sub_map(node, "dependentSchemas", loc):
                body = fn.capture(self._val, fn, ind + 1, sub, sub_loc, v, ptr, rule)
                fn.block(ind, f"if {_lit(name)} in {v}:", body)

    def _val_array(
        self,
        fn: _Function,
        ind: int,
        node: Mapping[str, Any],
        loc: _Loc,
        v: str,
        ptr: _Ptr,
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
                words = f" must have at most {_plural(len(prefix), 'item', 'items')}, got "
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
        for key, op, word in (("minItems", "<", "at least"), ("maxItems", ">", "at most")):
            if key in node:
                n = self._count(node, key, loc)
                fn.emit(ind, f"if len({v}) {op} {n}:")
                words = f" must have {word} {_plural(n, 'item', 'items')}, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, f"len({v})")])
        if self._unique_items(node, loc):
            fn.emit(ind, f"if not _unique({v}):")
            self._error(fn, ind + 1, rule, ptr, [*subject, (False, " must not contain duplicates")])
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
                words = f" must contain {word} {_plural(limit, 'item', 'items')} matching "
                message = [*subject, (False, words + "its contains schema, got "), (True, matches)]
                self._error(fn, ind + 1, rule, ptr, message)

    def _val_string(
        self,
        fn: _Function,
        ind: int,
        node: Mapping[str, Any],
        loc: _Loc,
        v: str,
        ptr: _Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        for key, op, word in (("minLength", "<", "at least"), ("maxLength", ">", "at most")):
            if key in node:
                n = self._count(node, key, loc)
                fn.emit(ind, f"if len({v}) {op} {n}:")
                words = f" must be {word} {_plural(n, 'character', 'characters')} long, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, f"len({v})")])
        if "pattern" in node:
            pattern = node["pattern"]
            fn.emit(ind, f"if {self._search(pattern, loc, v, negate=True)}:")
            message = [*subject, (False, f" must match the pattern {_shorten(pattern)}")]
            self._error(fn, ind + 1, rule, ptr, message)

    def _val_number(
        self,
        fn: _Function,
        ind: int,
        node: Mapping[str, Any],
        loc: _Loc,
        v: str,
        ptr: _Ptr,
        rule: str,
    ) -> None:
        subject = ptr.subject()
        for key, fails, holds in self._COMPARISONS:
            if key in node:
                limit = self._number(node, key, loc)
                fn.emit(ind, f"if {v} {fails} {limit!r}:")
                words = f" must be {holds} {_number_text(limit)}, got "
                self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, v)])
        test = self._not_multiple_test(node, loc, v)
        if test is not None:
            fn.emit(ind, f"if {test}:")
            words = f" must be a multiple of {_number_text(node['multipleOf'])}, got "
            self._error(fn, ind + 1, rule, ptr, [*subject, (False, words), (True, v)])

    # ---- functions and the module ------------------------------------------------------------

    def _helper_source(self, helper: _Helper) -> list[str]:
        fn = _Function()
        doc = _docstring(str(helper.loc))
        if helper.mode == "is":
            header = [f"def {helper.name}(x: Any) -> bool:", f"    {doc}"]
            self._is(fn, 1, helper.node, helper.loc, "x")
            fn.emit(1, "return True")
            fn.lines = _return_last_test(_merge_nested_ifs(fn.lines))
        else:
            rule = ", rule: str" if helper.takes_rule else ""
            head = f"def {helper.name}(x: Any, p: str, errors: list[SchemaError]{rule}) -> None:"
            if len(head) > LINE_LENGTH:
                params = f"x: Any, p: str, errors: list[SchemaError]{rule}"
                head = f"def {helper.name}(\n    {params}\n) -> None:"
            header = [head, f"    {doc}"]
            self._val(fn, 1, helper.node, helper.loc, "x", _Ptr(((True, "p"),)), "rule")
            fn.lines = _merge_nested_ifs(fn.lines)
        return header + fn.lines

    def module(self) -> str:
        public: list[list[str]] = []
        exported: list[str] = []
        seen_names: set[str] = set()
        for root in self.roots:
            if not root.name.isidentifier() or keyword.iskeyword(root.name):
                raise ValueError(f"root name {root.name!r} is not a Python identifier")
            if root.name in seen_names:
                raise ValueError(f"two roots are named {root.name!r}")
            seen_names.add(root.name)
            try:
                node, loc = self.index.resolve(root.schema_id, _Loc(root.schema_id, ""))
            except SchemaCompileError:
                raise SchemaCompileError(
                    root.schema_id, "", "no schema has this $id (roots name a schema by $id)"
                ) from None
            public.append(self._public_is(root, node, loc))
            public.append(self._public_validate(root, node, loc))
            exported += [f"is_valid_{root.name}", f"validate_{root.name}"]
        helpers: list[list[str]] = []
        while self.pending:
            helpers.append(self._helper_source(self.pending.pop(0)))
        return self._assemble(public, helpers, exported)

    def _public_is(self, root: ValidatorRoot, node: object, loc: _Loc) -> list[str]:
        fn = _Function()
        fn.emit(1, "x: Any = instance")
        self._is(fn, 1, node, loc, "x")
        fn.emit(1, "return True")
        fn.lines = _return_last_test(_merge_nested_ifs(fn.lines))
        doc = _docstring(f"True if instance is valid against {root.schema_id}.")
        return [f"def is_valid_{root.name}(instance: object) -> bool:", f"    {doc}", *fn.lines]

    def _public_validate(self, root: ValidatorRoot, node: object, loc: _Loc) -> list[str]:
        fn = _Function()
        fn.emit(1, "x: Any = instance")
        fn.emit(1, "errors: list[SchemaError] = []")
        self._val(fn, 1, node, loc, "x", _Ptr(), _lit(root.default_rule))
        fn.emit(1, "return errors")
        fn.lines = _merge_nested_ifs(fn.lines)
        doc = _docstring(f"Every error of instance against {root.schema_id}.")
        return [
            f"def validate_{root.name}(instance: object) -> list[SchemaError]:",
            f"    {doc}",
            *fn.lines,
        ]

    def _assemble(
        self, public: list[list[str]], helpers: list[list[str]], exported: list[str]
    ) -> str:
        code = "\n\n\n".join("\n".join(f) for f in public + helpers)
        constants = "\n".join(self.constant_lines)
        runtime: list[str] = []
        used_text = code + constants
        changed = True
        while changed:
            changed = False
            for name, source in _RUNTIME.items():
                if name not in runtime and _uses(name, used_text):
                    runtime.append(name)
                    used_text += source
                    changed = True
        runtime_code = "\n\n\n".join(_RUNTIME[n].strip() for n in _RUNTIME if n in runtime)
        imports = {"from typing import Any", *self.extra_imports}
        if _uses("re", constants):
            imports.add("import re")
        for name in runtime:
            if name in _RUNTIME_IMPORTS:
                imports.add(_RUNTIME_IMPORTS[name])
        ordered = sorted(i for i in imports if i.startswith("import ")) + sorted(
            i for i in imports if i.startswith("from ")
        )
        out = [
            '"""JSON Schema validators, generated by llm_stream_codegen.validator_compiler.',
            "",
            "Generated code: do not edit. validate_<name>(instance) returns every error;",
            "is_valid_<name>(instance) is the fast path and stops at the first one.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            *ordered,
            "",
            "from .diagnostics import SchemaError",
            "",
            "__all__ = [",
            *[f"    {_lit(name)}," for name in sorted(exported)],
            "]",
        ]
        if constants:
            out += ["", constants]
        if runtime_code:
            out += ["", "", runtime_code]
        out += ["", "", code, ""]
        return "\n".join(_fit(line) for line in "\n".join(out).split("\n"))


# --------------------------------------------------------------------------------------------
# Peephole passes over a generated function: the code reads as a person would write it


def _indent_of(line: str) -> int:
    return (len(line) - len(line.lstrip(" "))) // 4


def _depth_change(text: str) -> int:
    """Net bracket depth of a line of generated code, ignoring brackets inside strings."""
    depth, quote, i = 0, "", 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        i += 1
    return depth


def _if_header(lines: list[str], i: int) -> tuple[str, int] | None:
    """The condition of an ``if`` statement starting at line i and the index after its header."""
    first = lines[i].strip()
    if not first.startswith("if "):
        return None
    depth, j = 0, i
    while j < len(lines):
        depth += _depth_change(lines[j])
        if depth == 0:
            break
        j += 1
    if j >= len(lines) or not lines[j].endswith(":"):
        return None
    text = " ".join(line.strip() for line in lines[i : j + 1])[3:-1].strip()
    if text.startswith("(") and text.endswith(")") and _bare(text) != text:
        text = _bare(text).strip()
    return text, j + 1


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The index of the first line after ``start`` indented at most ``indent``."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent_of(lines[end]) > indent):
        end += 1
    return end


def _top_level_or(condition: str) -> bool:
    depth = 0
    for token in re.findall(
        r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[()\[\]{}]|\bor\b|\S", condition
    ):
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
        elif token == "or" and depth == 0:
            return True
    return False


def _if_lines(indent: int, terms: list[str], op: str) -> list[str]:
    pad = "    " * indent
    line = f"{pad}if {f' {op} '.join(terms)}:"
    if len(line) <= LINE_LENGTH:
        return [line]
    return [
        f"{pad}if (",
        *[f"{pad}    {op + ' ' if i else ''}{t}" for i, t in enumerate(terms)],
        f"{pad}):",
    ]


def _merge_nested_ifs(lines: list[str]) -> list[str]:
    """``if A:`` whose whole block is ``if B:`` (neither with an else) becomes ``if A and B:``."""
    changed = True
    while changed:
        changed = False
        for i in range(len(lines)):
            outer = _if_header(lines, i)
            if outer is None:
                continue
            indent = _indent_of(lines[i])
            inner_start = outer[1]
            if inner_start >= len(lines) or _indent_of(lines[inner_start]) != indent + 1:
                continue
            inner = _if_header(lines, inner_start)
            if inner is None:
                continue
            inner_end = _block_end(lines, inner[1], indent + 1)
            outer_end = _block_end(lines, inner_start, indent)
            if inner_end != outer_end:
                continue  # the outer block holds more than the inner if, or the inner an else
            if (
                outer_end < len(lines)
                and _indent_of(lines[outer_end]) == indent
                and (lines[outer_end].strip().startswith(("else", "elif")))
            ):
                continue
            terms = [f"({c})" if _top_level_or(c) else c for c in (outer[0], inner[0])]
            body = [line[4:] for line in lines[inner[1] : inner_end]]
            lines = lines[:i] + _if_lines(indent, terms, "and") + body + lines[inner_end:]
            changed = True
            break
    return lines


def _top_level(condition: str) -> list[str]:
    """The tokens of a condition outside any brackets (strings and bracketed parts dropped)."""
    depth, tokens = 0, []
    pattern = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[()\[\]{}]|[^\s()\[\]{}\"']+"
    for token in re.findall(pattern, condition):
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
        elif depth == 0:
            tokens.append(token)
    return tokens


def _negate(condition: str) -> str:
    """``not condition``, written the way a person would."""
    condition = _bare(condition)
    tokens = _top_level(condition)
    if "and" in tokens or "or" in tokens:
        return f"not ({condition})"
    if tokens[:1] == ["not"]:
        return _bare(condition[4:])
    if len(tokens) == 1:  # a name or a call
        return f"not {condition}"
    swaps = {"==": "!=", "!=": "==", "is": "is not", "in": "not in"}
    operators = [t for t in tokens if t in ("==", "!=", "<", ">", "<=", ">=", "is", "in", "not")]
    if operators in (["=="], ["!="], ["is"], ["in"]):
        left, _, right = condition.partition(f" {operators[0]} ")
        if _top_level(left) and not any(t in ("==", "!=", "is", "in") for t in _top_level(left)):
            return f"{left} {swaps[operators[0]]} {right}"
    if operators in (["is", "not"], ["not", "in"]):
        old = " is not " if operators[0] == "is" else " not in "
        left, _, right = condition.partition(old)
        return f"{left} {old.strip().replace('not', '').strip()} {right}"
    return f"not ({condition})"


def _is_bool(condition: str) -> bool:
    """True if mypy types the condition as bool (a comparison of Any values is Any)."""
    condition = _bare(condition)
    tokens = _top_level(condition)
    if "and" in tokens or "or" in tokens:
        parts = re.split(r" (?:and|or) ", condition)
        if len(parts) == len([t for t in tokens if t in ("and", "or")]) + 1:
            return all(_is_bool(part) for part in parts)
        return False
    if tokens[:1] == ["not"] or "is" in tokens or "in" in tokens:
        return True
    if any(t in ("==", "!=", "<", ">", "<=", ">=") for t in tokens):
        return condition.startswith(("len(", "type(", "_is_valid_"))
    return condition.startswith(("isinstance(", "_is_valid_", "_match(", "_unique(", "_equal("))


def _return_last_test(lines: list[str]) -> list[str]:
    """A fast-path function ending ``if C: return False; return True`` returns ``not C``."""
    if len(lines) < 3 or lines[-1] != "    return True" or lines[-2] != "        return False":
        return lines
    for i in range(len(lines) - 3, -1, -1):
        header = _if_header(lines, i)
        if header is not None and header[1] == len(lines) - 2 and _indent_of(lines[i]) == 1:
            condition = _negate(header[0])
            head = "(" if _is_bool(condition) else "bool("
            line = f"    return {condition}" if head == "(" else f"    return bool({condition})"
            if len(line) <= LINE_LENGTH:
                return [*lines[:i], line]
            if condition.startswith("not ("):
                head, condition = "not (", condition[5:-1]
            return [*lines[:i], f"    return {head}", f"        {_bare(condition)}", "    )"]
    return lines


def _docstring(text: str) -> str:
    escaped = ascii(text)[1:-1].replace('"', '\\"')
    return f'"""{escaped}"""'


def _fit(line: str) -> str:
    """Lines the generator could not keep within the line length are marked as such."""
    if len(line) <= LINE_LENGTH or line.endswith("# noqa: E501"):
        return line
    return line + "  # noqa: E501"


def _identifier(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_")
