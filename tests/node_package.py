"""Running the TypeScript bindings from pytest: Node, the test project's packages, the driver.

The tests here need Node 20+ and `npm ci` in tests/typescript (the `typescript` nox session does
both and sets LLM_STREAM_TYPESCRIPT=1); run alone, they install the packages themselves. The
driver (`driver.ts`, run by `run.mjs`) takes one JSON job and answers it, so that a whole corpus
costs one Node process.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "tests" / "typescript"
SAFE_INTEGER = 2**53

requires_node = pytest.mark.skipif(
    os.environ.get("LLM_STREAM_TYPESCRIPT") != "1",
    reason="TypeScript test: set LLM_STREAM_TYPESCRIPT=1 (nox -s typescript)",
)


def node_project() -> Path:
    """The test project, its packages installed from the lockfile if they are not yet."""
    if shutil.which("node") is None:
        pytest.fail("no node on PATH: install Node 20 or later")
    if not (PROJECT / "node_modules" / "typescript").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PROJECT, check=True,
                       capture_output=True)
    return PROJECT


def run_driver(job: dict[str, Any], package_source: Path | None = None) -> dict[str, Any]:
    """The driver's answer to `job`, run against the generated package or another's sources."""
    command = ["node", str(node_project() / "run.mjs"), "driver.ts"]
    if package_source is not None:
        command.append(str(package_source))
    result = subprocess.run(command, input=json.dumps(job), capture_output=True, text=True,
                            check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def as_javascript_reads_it(value: Any) -> Any:
    """A JSON value as JSON.parse gives it back, for comparing events across the languages:
    numbers are IEEE doubles (2.0 is 2, integers past 2^53 rounded, out of range is null once
    written), everything else as is."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        if not math.isfinite(number):
            return None
        return int(number) if number.is_integer() else number
    if isinstance(value, list):
        return [as_javascript_reads_it(item) for item in value]
    return {key: as_javascript_reads_it(item) for key, item in value.items()}


def reads_alike(value: Any) -> bool:
    """Whether JavaScript reads and writes a JSON value as Python does: no integral float (2.0
    is 2 there) and no integer past 2^53 (rounded there)."""
    if isinstance(value, bool):
        return True
    if isinstance(value, float):
        return not value.is_integer()
    if isinstance(value, int):
        return abs(value) <= SAFE_INTEGER
    if isinstance(value, list):
        return all(reads_alike(item) for item in value)
    if isinstance(value, dict):
        return all(reads_alike(item) for item in value.values())
    return True


def canonical(value: Any) -> str:
    """One text for equal JSON values, member order aside."""
    return json.dumps(as_javascript_reads_it(value), sort_keys=True, ensure_ascii=False)
