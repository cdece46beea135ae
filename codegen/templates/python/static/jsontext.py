"""Parsing JSON text exactly as JSON: the one parser every part of the bindings uses.

pydantic-core's ``from_json``, there anyway for the models, reads integers of any size exactly
and, called with ``allow_inf_nan=False`` as everything here calls it, refuses NaN and Infinity,
which are not JSON. The decoder's hot path calls it alone: a refusal sends the event down the
general path, to `loads`, which gives what it refuses to the standard library, made to refuse
NaN, Infinity and unpaired surrogates as well.

Two limits hold for every text, the same in every binding and whatever the caller's stack
(decision D-LIMITS): arrays and objects nested at most `MAX_DEPTH` deep (LS-LIMIT-3), and no
number whose integer part has more than `MAX_DIGITS` digits (LS-LIMIT-4). Text beyond either is
refused with a `JSONLimitError` that names the rule. `duplicate_names` tells whether a parsed
object lost a member to a name written twice (decision D-DUPLICATE-KEYS).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from pydantic_core import from_json, to_json

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "JSONLimitError", "duplicate_name", "duplicate_names",
           "from_json", "loads", "member_bound", "too_deep"]

MAX_DEPTH: Final = 128
"""How deep arrays and objects may nest (the top-level object is depth 1)."""
MAX_DIGITS: Final = 4300
"""How many digits the integer part of a number may have (Python's int conversion limit)."""


class JSONLimitError(ValueError):
    """JSON text beyond a limit of the bindings' parser; `rule` names the limit."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING = r'"(?:[^"\\]|\\[\s\S])*(?:"|\\?\Z)'
"""A string, skipped whole when the limits are counted: from a quote to the next one that no
backslash escapes, or to the end of a text that never closes it (as the TypeScript bindings
skip it), so that no bracket or digit of an unclosed string counts."""
_NESTING = re.compile(_STRING + r"|[\[\]{}]")
"""A string or a bracket: what nesting depth is counted on."""
_LONG_NUMBER = re.compile(
    _STRING + r"|(?<![\w.])(?<![eE][+-])[0-9]{" + str(MAX_DIGITS + 1) + "}"
)
"""A string (skipped whole) or a run of digits too long for the integer part of a number (not
a fraction's or an exponent's, signed or not)."""
_QUOTE_ESCAPE = "\\u0022"


def _depth_over(text: str) -> bool:
    depth = 0
    for match in _NESTING.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


def too_deep(text: str | bytes) -> bool:
    """Whether the text nests arrays and objects deeper than `MAX_DEPTH`; cheap unless the text
    holds more brackets than that."""
    if len(text) <= 2 * MAX_DEPTH:
        return False
    if isinstance(text, bytes):
        if text.count(b"[") + text.count(b"{") <= MAX_DEPTH:
            return False
        text = text.decode("utf-8", "replace")
    elif text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    return _depth_over(text)


def duplicate_names(text: str | bytes, value: object) -> bool:
    """Whether `value`, parsed from `text`, lost a member to a name written twice in an object.

    Every string of the text, member names included, is written between two quotes, and a quote
    within one is escaped as \\" (one quote more) or as \\u0022 (none); serialised again, the
    value writes each of its strings the same way, escaping quotes as \\". So the two hold as
    many quotes exactly when no member was dropped, unless the text escapes a quote as \\u0022:
    then the members are counted as they are read. First, cheaply: no more members written
    (`member_bound`) than the object and the objects directly in it hold (a part of the members
    it has) leave no room for a member dropped.
    """
    if type(value) is dict and member_bound(text) == _members_near(value):
        return False
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if _QUOTE_ESCAPE not in text:
        serializer = getattr(value, "__pydantic_serializer__", None)  # a model, from this text
        again = to_json(value) if serializer is None else serializer.to_json(
            value, exclude_unset=True)
        return text.count('"') != again.count(b'"')
    return duplicate_name(text) is not None


def member_bound(text: str | bytes) -> int:
    """At least as many as the members written in a JSON text, counted without parsing it.

    A member is a name, whose closing quote no odd run of backslashes escapes, and a colon, with
    or without white space between them. With none between anywhere in the text, the pairs of
    such a quote and a colon bound the members, the colons within strings left out: the k-th
    count below finds the pairs behind k or more backslashes, so their alternating sum is the
    pairs behind an odd run. Otherwise every colon is a bound.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # what is counted is ASCII, which UTF-8 writes alike
    if " :" in text or "\n:" in text or "\t:" in text or "\r:" in text:
        return text.count(":")
    escape, sign, escaped = '\\":', 1, 0
    while count := text.count(escape):
        escaped += sign * count
        escape, sign = "\\" + escape, -sign
    return text.count('":') - escaped


def _members_near(obj: dict[str, Any]) -> int:
    """The members of an object and of the objects directly in it."""
    members = len(obj)
    for member in obj.values():
        if type(member) is dict:
            members += len(member)
    return members


def duplicate_name(text: str) -> str | None:
    """The first member name written twice in an object of the JSON text, the objects taken in
    the order they end (inner ones first), or None."""
    try:
        json.loads(text, object_pairs_hook=_unique_members)
    except _DuplicateName as found:
        return found.name
    except (ValueError, RecursionError):
        pass
    return None


class _DuplicateName(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for name, value in pairs:
        if name in members:
            raise _DuplicateName(name)
        members[name] = value
    return members


def _too_deep_error() -> JSONLimitError:
    return JSONLimitError("LS-LIMIT-3", f"arrays and objects nest more than {MAX_DEPTH} deep")


def _beyond_limits(text: str) -> JSONLimitError | None:
    if too_deep(text):
        return _too_deep_error()
    if len(text) > MAX_DIGITS and any(
        match.group()[0] != '"' for match in _LONG_NUMBER.finditer(text)
    ):
        return JSONLimitError("LS-LIMIT-4", f"a number's integer part has more than "
                                            f"{MAX_DIGITS} digits")
    return None


def _strict_loads(text: str) -> Any:
    """The standard library's parser without its NaN/Infinity extension, which JSON forbids,
    and refusing an unpaired surrogate escape ("\\ud800"), which is no Unicode text."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested deeper than this parser can follow") from None
    if _SURROGATE_ESCAPE.search(text) is not None:
        try:
            json.dumps(value, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise ValueError("a string holds an unpaired surrogate") from None
    return value


def loads(text: str | bytes) -> Any:
    """Parse one JSON text; ValueError when it is not JSON (bytes must be UTF-8), and its
    subclass `JSONLimitError` when it is JSON beyond the limits."""
    try:
        value = from_json(text, allow_inf_nan=False)
    except ValueError:
        if isinstance(text, bytes):
            text = text.decode()
        beyond = _beyond_limits(text)
        if beyond is not None:
            raise beyond from None
        return _strict_loads(text)
    if too_deep(text):
        raise _too_deep_error()
    return value
