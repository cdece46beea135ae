"""`llm-stream conformance URL`: one line per scenario, a summary, and an exit code for CI.

Exit codes: 0 when every scenario passes, 1 when one fails, 2 for bad arguments or a missing
extra. `--json` prints one JSON report instead of lines. Registered as a command of
`llm-stream` by `configure`.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from llm_stream.cli import UsageError

if TYPE_CHECKING:
    from .runner import Verdict


def configure(command: argparse.ArgumentParser) -> None:
    """`llm-stream conformance`'s arguments and handler; refuses at once without httpx."""
    from llm_stream_server.requirements import missing_extra_message, missing_packages

    missing = missing_packages(("httpx",))
    if missing:
        raise UsageError(missing_extra_message("conformance", "http", missing))
    from .scenarios import SCENARIOS

    command.description = (
        "Send the conformance scenarios to a live LLM-Stream endpoint and judge every response "
        "with the decoder. Scenarios: " + ", ".join(s.name for s in SCENARIOS) + ".")
    command.add_argument("url", metavar="URL", nargs="?",
                         help="the endpoint, e.g. http://127.0.0.1:8000/v1/stream")
    command.add_argument("--only", action="append", metavar="SCENARIO", default=[],
                         help="run this scenario only (repeat, or separate with commas)")
    command.add_argument("--json", action="store_true", help="one JSON report instead of lines")
    command.add_argument("--model", default="mock",
                         help="the model every request names (default: mock)")
    command.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                         help="the longest a scenario may take (default 60)")
    command.add_argument("--list", action="store_true", help="list the scenarios and exit")
    command.set_defaults(handler=conformance)


def conformance(args: argparse.Namespace) -> int:
    from .runner import run
    from .scenarios import BY_NAME, SCENARIOS

    if args.list:
        for scenario in SCENARIOS:
            print(f"{scenario.name:<20} {scenario.summary}")
        return 0
    if args.url is None:
        raise UsageError("conformance needs the endpoint's URL")
    address = urlsplit(args.url)
    if address.scheme not in ("http", "https") or not address.netloc:
        raise UsageError(f"{args.url}: not an http(s) URL")
    names = [n.strip() for option in args.only for n in option.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise UsageError(f"unknown scenario {', '.join(unknown)} (scenarios: "
                         f"{', '.join(BY_NAME)})")
    chosen = [BY_NAME[n] for n in names] if names else list(SCENARIOS)
    verdicts: list[Verdict] = []
    width = max(len(s.name) for s in chosen)
    for verdict in run(args.url, chosen, model=args.model, timeout=args.timeout):
        verdicts.append(verdict)
        if not args.json:
            print(_line(verdict, width), flush=True)
    failed = sum(not v.passed for v in verdicts)
    if args.json:
        print(json.dumps({
            "url": args.url,
            "passed": failed == 0,
            "scenarios": len(verdicts),
            "failed": failed,
            "results": [v.as_dict() for v in verdicts],
        }, ensure_ascii=False, indent=2))
    else:
        print(f"{args.url}: {len(verdicts) - failed} of {len(verdicts)} scenarios pass"
              + (f", {failed} fail" if failed else ""))
    return 1 if failed else 0


def _line(verdict: Verdict, width: int) -> str:
    name = verdict.scenario.name.ljust(width)
    if verdict.passed:
        warnings = sorted({f.check for f in verdict.findings})
        tail = f"  (warnings: {', '.join(warnings)})" if warnings else ""
        return f"PASS  {name}  {len(verdict.exchange.events)} events{tail}"
    first = next(f for f in verdict.findings if f.check == verdict.failed_checks[0])
    return f"FAIL  {name}  {', '.join(verdict.failed_checks)}: {first.detail}"
