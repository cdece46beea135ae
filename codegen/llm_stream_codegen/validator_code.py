"""Writing the generated Python: literals, the f-strings of error messages, the JSON pointer of the
value at hand, type tests, and the function under construction with its lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final, Self

from .schema_walk import escape_token
from .validator_index import Loc
from .validator_runtime import uses

LINE_LENGTH: Final = 100

TYPE_NAMES: Final = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}

_CLASSES: Final = {"object": "dict", "array": "list", "string": "str"}


def lit(text: str) -> str:
    """A Python string literal, ASCII only, double-quoted where possible."""
    code = ascii(text)
    if code.startswith("'") and '"' not in text:
        code = '"' + code[1:-1].replace("\\'", "'") + '"'
    return code


def pattern_lit(pattern: str) -> str:
    """A regex literal: a raw string where that reads better and means the same."""
    if (
        "\\" in pattern
        and pattern.isascii()
        and pattern.isprintable()
        and '"' not in pattern
        and not pattern.endswith("\\")
    ):
        return f'r"{pattern}"'
    return lit(pattern)


def json_text(value: object) -> str:
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
        inner = ", ".join(f"{json_text(str(k))}: {json_text(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    return repr(value)


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def py_inline(value: object, loc: Loc) -> str:
    """A JSON value as a one-line Python literal."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return lit(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise loc.fail(f"{value!r} is not a JSON number")
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(py_inline(v, loc) for v in value) + "]"
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise loc.fail(f"object key {k!r} is not a string")
            items.append(f"{lit(k)}: {py_inline(v, loc)}")
        return "{" + ", ".join(items) + "}"
    raise loc.fail(f"{value!r} is not a JSON value")


def py_block(value: object, loc: Loc, indent: int, *, tuple_: bool = False) -> list[str]:
    """A JSON value as a Python literal wrapped to the line length; the first line unindented."""
    inline = py_inline(value, loc)
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
            sub = py_block(v, loc, indent + 1)
            lines.append(f"{pad}{lit(str(k))}: {sub[0]}")
            lines.extend(sub[1:])
            lines[-1] += ","
        lines.append("    " * indent + "}")
    else:
        lines.append("(" if tuple_ else "[")
        for v in value:
            sub = py_block(v, loc, indent + 1)
            lines.append(pad + sub[0])
            lines.extend(sub[1:])
            lines[-1] += ","
        lines.append("    " * indent + (")" if tuple_ else "]"))
    return lines


# A string under construction: literal pieces and Python expressions, joined into an f-string.
Part = tuple[bool, str]  # (is_expression, text)


def _merge(parts: Sequence[Part]) -> list[Part]:
    merged: list[Part] = []
    for is_expr, text in parts:
        if not is_expr and merged and not merged[-1][0]:
            merged[-1] = (False, merged[-1][1] + text)
        elif is_expr or text:
            merged.append((is_expr, text))
    return merged


def fstring(parts: Sequence[Part]) -> str:
    merged = _merge(parts)
    if not any(is_expr for is_expr, _ in merged):
        return lit("".join(text for _, text in merged))
    template = "".join(
        "{" + text + "}" if is_expr else text.replace("{", "{{").replace("}", "}}")
        for is_expr, text in merged
    )
    return "f" + lit(template)


def fstring_lines(parts: Sequence[Part], width: int) -> list[str]:
    """The same string as implicitly concatenated literals, each at most ``width`` wide."""
    tokens: list[Part] = []
    for is_expr, text in _merge(parts):
        if is_expr:
            tokens.append((True, text))
            continue
        for word in re.findall(r"\S+\s*|\s+", text):
            tokens.extend((False, word[i : i + 40]) for i in range(0, len(word), 40))
    lines: list[str] = []
    current: list[Part] = []
    for token in tokens:
        if current and len(fstring([*current, token])) > width:
            lines.append(fstring(current))
            current = []
        current.append(token)
    lines.append(fstring(current))
    return lines


@dataclass(frozen=True)
class Ptr:
    """The JSON pointer of the value being checked, as pieces of a string built on error; the
    generated code's names for escaping a key and for naming the value at a pointer, and its
    string syntax, are the language's (`ts_validators` has its own)."""

    parts: tuple[Part, ...] = ()
    ESCAPE: ClassVar[str] = "_esc"
    NAMED: ClassVar[str] = "_at"

    def key(self, name: str) -> Self:
        return replace(self, parts=(*self.parts, (False, "/" + escape_token(name))))

    def index(self, i: int) -> Self:
        return replace(self, parts=(*self.parts, (False, f"/{i}")))

    def dynamic_key(self, var: str) -> Self:
        return replace(self, parts=(*self.parts, (False, "/"), (True, f"{self.ESCAPE}({var})")))

    def dynamic_index(self, var: str) -> Self:
        return replace(self, parts=(*self.parts, (False, "/"), (True, var)))

    def code(self) -> str:
        return "p" if self.parts == ((True, "p"),) else self.string(self.parts)

    @staticmethod
    def string(parts: Sequence[Part]) -> str:
        """The parts as a string expression of the generated code."""
        return fstring(parts)

    def subject(self) -> tuple[Part, ...]:
        """How a message names the value: its pointer, or "the value" at the root."""
        if not self.parts:
            return ((False, "the value"),)
        if self.parts == ((True, "p"),):
            return ((True, f"{self.NAMED}(p)"),)
        return self.parts


def name_wanted(names: object) -> str:
    """What a message says of a property name that `propertyNames` refuses: what the schema's
    description says it must be, where it says so."""
    description = names.get("description") if isinstance(names, Mapping) else None
    if isinstance(description, str):
        return f": the property name must be {description}"
    return " has a property name that is not allowed"


def plural(n: int | float, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def number_text(value: int | float) -> str:
    return repr(value)


@dataclass
class Function:
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
        bindings = [(name, value) for name, value in bindings if uses(name, text)]
        text += "\n" + "\n".join(value for _, value in bindings)
        if header.startswith("for "):
            target, _, rest = header[4:].partition(" in ")
            names = [n.strip() for n in target.split(",")]
            if len(names) == 2 and rest.endswith(".items():") and not uses(names[1], text):
                names, rest = names[:1], rest.removesuffix(".items():") + ":"
            renamed = [n if uses(n, text) else "_" + n for n in names]
            header = f"for {', '.join(renamed)} in {rest}"
        self.emit(indent, header)
        for name, value in bindings:
            self.emit(indent + 1, f"{name} = {value}")
        self.lines.extend(body)


@dataclass
class Constants:
    """The module constants of the generated code, one for each distinct code, named by kind and
    number; `declare` writes a declaration from the name, the type annotation and the code."""

    declare: Callable[[str, str, str], str]
    prefix: str = ""
    names: dict[str, str] = field(default_factory=dict)  # code -> name
    counts: dict[str, int] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def name(self, kind: str, code: str, annotation: str = "") -> str:
        name = self.names.get(code)
        if name is None:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            name = f"{self.prefix}{kind}_{self.counts[kind]}"
            self.names[code] = name
            self.lines.append(self.declare(name, annotation, code))
        return name


@dataclass
class Helper:
    name: str
    mode: str  # "is" or "val"
    node: object
    loc: Loc
    takes_rule: bool


@dataclass
class Helpers:
    """The helper function of each mode and shared subschema, made on first use, and those whose
    source is still to be written."""

    name: Callable[[str, Loc], str]
    made: dict[tuple[str, Loc], Helper] = field(default_factory=dict)
    pending: list[Helper] = field(default_factory=list)

    def get(self, mode: str, node: object, loc: Loc) -> Helper:
        helper = self.made.get((mode, loc))
        if helper is None:
            takes_rule = mode == "val" and not (isinstance(node, Mapping) and "x-rule" in node)
            helper = Helper(self.name(mode, loc), mode, node, loc, takes_rule)
            self.made[mode, loc] = helper
            self.pending.append(helper)
        return helper


def type_test(types: Sequence[str], v: str, *, negate: bool) -> str:
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
            tests.append(type_test([t], v, negate=False))
    joined = " or ".join(tests)
    return f"not ({joined})" if negate else f"({joined})"


def bare(test: str) -> str:
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


def type_words(types: Sequence[str]) -> str:
    words = [TYPE_NAMES[t] for t in types]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def docstring(text: str) -> str:
    escaped = ascii(text)[1:-1].replace('"', '\\"')
    return f'"""{escaped}"""'


def fit(line: str) -> str:
    """Lines the generator could not keep within the line length are marked as such."""
    if len(line) <= LINE_LENGTH or line.endswith("# noqa: E501"):
        return line
    return line + "  # noqa: E501"


def identifier(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_")
