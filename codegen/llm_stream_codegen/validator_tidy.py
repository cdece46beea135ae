"""Peephole passes over a generated function, so that the code reads as a person would write it:
nested ifs merged, negations simplified, a last test returned directly.
"""

from __future__ import annotations

import re

from .validator_code import LINE_LENGTH, bare


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
    if text.startswith("(") and text.endswith(")") and bare(text) != text:
        text = bare(text).strip()
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


def merge_nested_ifs(lines: list[str]) -> list[str]:
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
    condition = bare(condition)
    tokens = _top_level(condition)
    if "and" in tokens or "or" in tokens:
        return f"not ({condition})"
    if tokens[:1] == ["not"]:
        return bare(condition[4:])
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
    condition = bare(condition)
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


def return_last_test(lines: list[str]) -> list[str]:
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
            return [*lines[:i], f"    return {head}", f"        {bare(condition)}", "    )"]
    return lines
