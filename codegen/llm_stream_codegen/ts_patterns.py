"""A schema `pattern` as an ECMAScript regular expression that matches what Python's `re` does.

The Python validators search with `re`, as jsonschema does, and the TypeScript ones must agree
with them, so each pattern is rewritten for a `u`-flag RegExp where the two dialects differ: `$`
also matches before a final newline in Python, `.` excludes only LF, a lone `{`, `}` or `]` is a
literal, and escapes of punctuation are allowed anywhere. Where no rewriting gives the same
meaning (the Unicode-aware classes `\\d`, `\\w`, `\\s` and `\\b`, inline flags, `\\A` and `\\Z`,
possessive and atomic groups, back references) the pattern is refused with the reason.
"""

from __future__ import annotations

import re

__all__ = ["PatternError", "ecmascript_pattern"]

_QUANTIFIER = re.compile(r"\{(\d*)(,(\d*))?\}")
_GROUP_STARTS = ("(?:", "(?=", "(?!", "(?<=", "(?<!")
_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
_KEPT_ESCAPES = frozenset("nrtfv0")
_UNICODE_CLASSES = frozenset("dDwWsSbB")


class PatternError(ValueError):
    """A pattern with no ECMAScript equivalent; the message says which construct and why."""


def _escape(pattern: str, at: int, in_class: bool) -> tuple[str, int]:
    """The escape at `pattern[at]` (a backslash) as ECMAScript, and the index after it."""
    if at + 1 >= len(pattern):
        raise PatternError("the pattern ends with a lone backslash")
    char = pattern[at + 1]
    if char in _UNICODE_CLASSES:
        raise PatternError(f"\\{char} means a Unicode class in Python and an ASCII one in "
                           "ECMAScript; write the characters out as a class")
    if char in "AZ":
        raise PatternError(f"\\{char} has no ECMAScript counterpart; use ^ or $")
    if char.isdigit() and (char != "0" or pattern[at + 2 : at + 3].isdigit()):
        raise PatternError("back references and octal escapes are not supported")
    if char == "x":
        return pattern[at : at + 4], at + 4
    if char == "u":
        return pattern[at : at + 6], at + 6
    if char == "U":
        return f"\\u{{{int(pattern[at + 2 : at + 10], 16):x}}}", at + 10
    if char in _KEPT_ESCAPES or char in _SYNTAX or (in_class and char == "-"):
        return pattern[at : at + 2], at + 2
    if char.isalnum():
        raise PatternError(f"the escape \\{char} is not supported")
    return char, at + 2  # an escaped punctuation character is that character


def _class(pattern: str, at: int) -> tuple[str, int]:
    """The character class starting at `pattern[at]` (a `[`), and the index after it."""
    out = "["
    at += 1
    if pattern[at : at + 1] == "^":
        out += "^"
        at += 1
    first = True
    while at < len(pattern):
        char = pattern[at]
        if char == "]" and not first:
            return out + "]", at + 1
        if char == "\\":
            text, at = _escape(pattern, at, in_class=True)
        elif char == "[" and pattern[at + 1 : at + 2] == ":":
            raise PatternError("POSIX classes ([:alpha:]) are not supported")
        else:
            text, at = ("\\" + char if char in "[]" else char), at + 1
        out += text
        first = False
    raise PatternError("a character class is not closed")


def ecmascript_pattern(pattern: str) -> str:
    """The source of a `u`-flag RegExp that `test`s true exactly where `re.search` finds."""
    out: list[str] = []
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            text, at = _escape(pattern, at, in_class=False)
            out.append(text)
        elif char == "[":
            text, at = _class(pattern, at)
            out.append(text)
        elif char == "(":
            if pattern.startswith("(?P<", at):
                out.append("(?<")
                at += 4
            elif pattern.startswith("(?", at) and not pattern.startswith(_GROUP_STARTS, at):
                raise PatternError(f"the group {pattern[at : at + 4]}... (inline flags, atomic "
                                   "groups, named references) is not supported")
            else:
                out.append("(")
                at += 1
        elif char in "*+?" and pattern[at + 1 : at + 2] == "+":
            raise PatternError("possessive quantifiers are not supported")
        elif char == "{":
            quantifier = _QUANTIFIER.match(pattern, at)
            if quantifier is None or quantifier.group() == "{}":
                out.append("\\{")  # Python reads a { that starts no quantifier as a literal
                at += 1
            else:
                least, comma, most = quantifier.group(1, 2, 3)
                out.append(f"{{{least or 0}{',' + most if comma else ''}}}")
                at = quantifier.end()
        elif char in "}]":
            out.append("\\" + char)
            at += 1
        elif char == ".":
            out.append("[^\\n]")
            at += 1
        elif char == "$":
            out.append("(?=\\n?$)")  # at the end, or before a newline that ends the text
            at += 1
        else:
            out.append(char)
            at += 1
    return "".join(out)
