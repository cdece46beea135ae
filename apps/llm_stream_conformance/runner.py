"""Running scenarios against an endpoint, and the verdict on each."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx

from llm_stream import Decoder, Severity

from .exchange import Exchange, send
from .findings import Finding
from .scenarios import Scenario


@dataclass(frozen=True)
class Verdict:
    """One scenario's result."""

    scenario: Scenario
    exchange: Exchange
    findings: list[Finding]

    @property
    def passed(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def failed_checks(self) -> list[str]:
        """The rules, decisions and expectations that failed, each once, in order found."""
        return list(dict.fromkeys(
            f.check for f in self.findings if f.severity is Severity.ERROR))

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.scenario.name,
            "summary": self.scenario.summary,
            "passed": self.passed,
            "failed": self.failed_checks,
            "status": self.exchange.status,
            "events": len(self.exchange.events),
            "seconds": round(self.exchange.seconds, 3),
            "findings": [f.as_dict() for f in self.findings],
        }


def run_scenario(
    client: httpx.Client, url: str, scenario: Scenario, *, model: str, timeout: float
) -> Verdict:
    request = {**scenario.request, "model": model}
    headers = {"Content-Type": scenario.content_type, "Accept": scenario.accept,
               **scenario.headers}
    decoder = Decoder(typed=False, tools=scenario.declared_tools(),
                      request_metadata=scenario.metadata())
    body = json.dumps(request, ensure_ascii=False).encode()
    exchange = send(client, url, body=body, headers=headers, decoder=decoder, timeout=timeout)
    return Verdict(scenario, exchange, scenario.judge(exchange))


def run(
    url: str, scenarios: Iterable[Scenario], *, model: str, timeout: float
) -> Iterable[Verdict]:
    """Each scenario's verdict as soon as it is known, one connection pool for all."""
    with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
        for scenario in scenarios:
            yield run_scenario(client, url, scenario, model=model, timeout=timeout)
