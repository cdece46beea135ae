"""What every layer reports: a problem named by the rule it breaks and the input line it is on.

One shape for all layers (SSE, envelope, lifecycle, request) so that a caller can sort, print
and serialise diagnostics without knowing which layer found them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """MUST-level rules give errors; SHOULD-level rules and unregistered event types warnings."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A rule broken at a line of the input (1-based; 0 when the input has no lines)."""

    rule: str
    line: int
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"{self.line}: {self.rule} {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class SchemaError:
    """A validator's finding: the rule, the JSON pointer of the offending value, and why."""

    rule: str
    pointer: str
    message: str


class LLMStreamError(Exception):
    """Raised in strict mode on the first error-severity diagnostic.

    `events` holds the events that the same `feed()` or `close()` completed before the error,
    so that nothing decoded is lost with it.
    """

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic
        self.events: list[object] = []
