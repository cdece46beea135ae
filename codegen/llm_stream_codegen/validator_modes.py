"""The two modes every keyword is emitted in, so that a keyword's check is written once: the fast
path (`is_valid`) returns False at the first failure and names nothing; the full path
(`validate`) appends an error carrying the rule and the JSON pointer, and goes on.

A keyword says which subschemas to visit at which value (and pointer), and under which condition
it fails with which words; the mode says what a visit and a failure emit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from .validator_code import Function, Part, Ptr
from .validator_index import Loc

if TYPE_CHECKING:
    from .validator_generic import GenericKeywords


class Mode:
    """What a visit of a subschema and a failure emit into the function `fn`."""

    reports: ClassVar[bool]
    """True for the full path, which names where each value is (pointers, rules, messages)."""

    def __init__(self, compiler: GenericKeywords, fn: Function) -> None:
        self.compiler = compiler
        self.fn = fn

    def visit(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        """The checks of the subschema `node` on the value `v`, inline."""
        raise NotImplementedError

    def fail(self, ind: int, rule: str, ptr: Ptr, message: Sequence[Part]) -> None:
        """The value at `ptr` fails: `message` is what the error says."""
        raise NotImplementedError

    def call(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        """The checks of the subschema `node` on `v`, through its helper function."""
        raise NotImplementedError

    def fail_any(self, ind: int, rule: str, ptr: Ptr,
                 failures: Sequence[tuple[str, Sequence[Part]]]) -> None:
        """The value at `ptr` fails under each condition of `failures`, saying its message."""
        for condition, message in failures:
            self.fn.emit(ind, f"if {condition}:")
            self.fail(ind + 1, rule, ptr, message)

    def no_branch(self, ind: int, branches: list[tuple[object, Loc]], v: str, ptr: Ptr,
                  rule: str, message: list[Part]) -> None:
        """No alternative of anyOf or oneOf matched."""
        self.fail(ind, rule, ptr, message)


class Fast(Mode):
    """`is_valid`: every failure returns False."""

    reports = False

    def visit(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        self.compiler._is(self.fn, ind, node, loc, v)

    def fail(self, ind: int, rule: str, ptr: Ptr, message: Sequence[Part]) -> None:
        self.fn.emit(ind, "return False")

    def fail_any(self, ind: int, rule: str, ptr: Ptr,
                 failures: Sequence[tuple[str, Sequence[Part]]]) -> None:
        if failures:
            self.fn.emit(ind, f"if {' or '.join(condition for condition, _ in failures)}:")
            self.fail(ind + 1, rule, ptr, [])

    def call(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        self.fn.emit(ind, f"if not {self.compiler._helper('is', node, loc).name}({v}):")
        self.fn.emit(ind + 1, "return False")


class Full(Mode):
    """`validate`: every failure appends an error, and the checks go on."""

    reports = True

    def visit(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        self.compiler._val(self.fn, ind, node, loc, v, ptr, rule)

    def fail(self, ind: int, rule: str, ptr: Ptr, message: Sequence[Part]) -> None:
        self.compiler._error(self.fn, ind, rule, ptr, message)

    def call(self, ind: int, node: object, loc: Loc, v: str, ptr: Ptr, rule: str) -> None:
        self.fn.emit(ind, self.compiler._call_val(node, loc, v, ptr, rule))

    def no_branch(self, ind: int, branches: list[tuple[object, Loc]], v: str, ptr: Ptr,
                  rule: str, message: list[Part]) -> None:
        self.compiler._val_no_branch(self.fn, ind, branches, v, ptr, rule, message)
