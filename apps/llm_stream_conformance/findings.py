"""What a scenario found wrong, named by what it breaks.

A finding's `check` is a rule ID of the standard (`LS-...`), a decision of this project
(`D-...`) where the draft is silent, or `expect:NAME` for what a scenario expects of a model
that no rule states (a tool call when one is asked for, a `max_tokens` stop).
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_stream import Diagnostic, Severity


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    message: str
    severity: Severity = Severity.ERROR
    line: int | None = None

    @classmethod
    def of(cls, diagnostic: Diagnostic) -> Finding:
        return cls(diagnostic.rule, diagnostic.message, diagnostic.severity, diagnostic.line)

    def __str__(self) -> str:
        return f"{self.check} {self.detail}"

    @property
    def detail(self) -> str:
        """The finding without its check: severity, line and message."""
        where = f"line {self.line}: " if self.line else ""
        marker = "warning: " if self.severity is Severity.WARNING else ""
        return f"{marker}{where}{self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"check": self.check, "severity": self.severity.value, "line": self.line,
                "message": self.message}
