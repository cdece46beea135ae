"""The two modes every keyword is emitted in, so that a keyword's check is written once: the fast
path (`is_valid`) returns False at the first failure and names nothing; the full path
(`validate`) appends an error carrying the rule and the JSON pointer, and goes on.

A keyword says which subschemas to visit at which value (and pointer), and under which condition
it fails with which words; the mode says what a visit and a failure emit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from .validator_code import LINE_LENGTH, Function, Part, Ptr, fstring, fstring_lines
from .validator_index import Loc

if TYPE_CHECKING:
    from .validator_generic import GenericKeywords

Failure = tuple[str, Ptr, Sequence[Part]]
"""A condition under which the value at the pointer fails, and what its error says."""


class Mode:
    """What a visit of a subschema and a failure emit into the function `fn`."""

    reports: ClassVar[bool]
    """True for the full path, which names where each value is (pointers, rules, messages)."""

    def __init__(self, compiler: GenericKeywords, fn: Function) -> None:
        self.compiler = compiler
        self.fn = fn

    def visit(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        """The checks of the subschema `node` on the value `v`, inline."""
        self.compiler._node(self, ind, node, loc, v, ptr, rule)

    def fail(self, ind: int, rule: str, ptr: Ptr, message: Sequence[Part]) -> None:
        """The value at `ptr` fails: `message` is what the error says."""
        raise NotImplementedError

    def call(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        """The checks of the subschema `node` on `v`, through its helper function."""
        raise NotImplementedError

    def fail_any(self, ind: int, rule: str, failures: Sequence[Failure], guard: str = "") -> None:
        """Where `guard` holds (always, if empty), each condition of `failures` fails the value
        at its pointer, saying its message."""
        if guard:
            self.fn.emit(ind, f"if {guard}:")
            ind += 1
        for condition, ptr, message in failures:
            self.fn.emit(ind, f"if {condition}:")
            self.fail(ind + 1, rule, ptr, message)

    def holds(self, ind: int, node: object, loc: Loc, v: str, rule: str, ptr: Ptr,
              message: Sequence[Part]) -> None:
        """The subschema `node` holds on `v`, or the value at `ptr` fails once, saying
        `message`."""
        self._unless_valid(ind, node, loc, v, rule, ptr, message)

    def _unless_valid(self, ind: int, node: object, loc: Loc, v: str, rule: str, ptr: Ptr,
                      message: Sequence[Part]) -> None:
        """A failure unless the fast helper of `node` accepts `v`."""
        self.fn.emit(ind, f"if not {self.compiler.helpers.get('is', node, loc).name}({v}):")
        self.fail(ind + 1, rule, ptr, message)

    def no_branch(self, ind: int, branches: list[tuple[object, Loc]], v: str, ptr: Ptr,
                  rule: str, message: list[Part]) -> None:
        """No alternative of anyOf or oneOf matched."""
        self.fail(ind, rule, ptr, message)


class Fast(Mode):
    """`is_valid`: every failure returns False."""

    reports = False

    def fail(self, ind: int, rule: str, ptr: Ptr, message: Sequence[Part]) -> None:
        self.fn.emit(ind, "return False")

    def fail_any(self, ind: int, rule: str, failures: Sequence[Failure], guard: str = "") -> None:
        if failures:
            joined = " or ".join(condition for condition, _, _ in failures)
            self.fn.emit(ind, f"if {guard} and ({joined}):" if guard else f"if {joined}:")
            self.fail(ind + 1, rule, Ptr(), [])

    def holds(self, ind: int, node: object, loc: Loc, v: str, rule: str, ptr: Ptr,
              message: Sequence[Part]) -> None:
        self.visit(ind, node, loc, v, ptr, rule)

    def call(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        self._unless_valid(ind, node, loc, v, rule, ptr, [])


class Full(Mode):
    """`validate`: every failure appends an error, and the checks go on."""

    reports = True

    def fail(self, ind: int, rule: str, ptr: Ptr, message: Sequence[Part]) -> None:
        pointer = ptr.code()
        line = f"errors.append(SchemaError({rule}, {pointer}, {fstring(message)}))"
        if len(line) + 4 * ind <= LINE_LENGTH:
            self.fn.emit(ind, line)
            return
        self.fn.emit(ind, "errors.append(")
        self.fn.emit(ind + 1, "SchemaError(")
        self.fn.emit(ind + 2, f"{rule},")
        self.fn.emit(ind + 2, f"{pointer},")
        lines = fstring_lines(message, LINE_LENGTH - 4 * (ind + 2) - 1)
        for line in lines[:-1]:
            self.fn.emit(ind + 2, line)
        self.fn.emit(ind + 2, lines[-1] + ",")
        self.fn.emit(ind + 1, ")")
        self.fn.emit(ind, ")")

    def call(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        helper = self.compiler.helpers.get("val", node, loc)
        args = [v, ptr.code(), "errors", *([rule] if helper.takes_rule else [])]
        self.fn.emit(ind, f"{helper.name}({', '.join(args)})")

    def no_branch(self, ind: int, branches: list[tuple[object, Loc]], v: str, ptr: Ptr,
                  rule: str, message: list[Part]) -> None:
        self.compiler._discriminate(self, ind, branches, v, ptr, rule, message)
