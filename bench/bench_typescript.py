"""The TypeScript decoder on the Python benchmark's bytes, against eventsource-parser.

Every workload of the decoder matrix (`workloads.matrix`) is written to a file as its chunks, and
decoded in Node by tests/typescript/bench.ts, chunk by chunk as the Python decoders take it: ours
validating every event (the default `Decoder`), the peer eventsource-parser followed by
JSON.parse. It needs Node 20 or later and the TypeScript project's packages
(`npm ci --prefix tests/typescript`, which `nox -s bench` runs).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from workloads import MAX_BLOCKS, Workload

PROJECT = Path(__file__).resolve().parent.parent / "tests" / "typescript"
TARGET = 1.0
"""Ours, validating, at least as fast as the peer, which validates nothing."""


def missing_tools() -> str | None:
    """What the table cannot run without, said as a command to run; None when nothing is
    missing."""
    if shutil.which("node") is None:
        return "install Node 20 or later"
    if not (PROJECT / "node_modules" / "eventsource-parser").is_dir():
        return f"npm ci --prefix {PROJECT}"
    return None


def typescript_table(workloads: Iterable[Workload], rounds: int, only: str = "") -> None:
    """Print thousands of events per CPU second of both, and their ratio, for each workload."""
    missing = missing_tools()
    if missing is not None:
        print(f"\nTypeScript decoder: not measured ({missing} first)", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as folder:
        jobs = []
        for number, workload in enumerate(workloads):
            if only not in workload.name:
                continue
            path = Path(folder, f"{number}.sse")
            path.write_bytes(b"".join(chunk for chunks in workload.streams for chunk in chunks))
            jobs.append({"name": workload.name, "body": str(path), "events": workload.events,
                         "streams": [[len(chunk) for chunk in chunks]
                                     for chunks in workload.streams]})
        result = subprocess.run(
            ["node", "--expose-gc", str(PROJECT / "run.mjs"), "bench.ts"],
            input=json.dumps({"rounds": rounds, "maxBlocks": MAX_BLOCKS, "workloads": jobs}),
            capture_output=True, text=True, check=True,
        )
    answer = json.loads(result.stdout)
    rows: dict[str, dict[str, float]] = answer["rows"]
    width = max(map(len, rows)) + 2
    print(f"\nTypeScript decoder (Node {answer['node']}): thousands of events per CPU second, "
          f"best of {rounds}; ours validating, the peer eventsource-parser + JSON.parse")
    print(f"{'workload':{width}}{'ours':>9}{'peer':>9}{f'ours/peer >= {TARGET}':>20}")
    missed = 0
    for name, row in rows.items():
        ratio = row["ours"] / row["peer"]
        missed += ratio < TARGET
        mark = "*" if ratio < TARGET else " "
        print(f"{name:{width}}{row['ours'] / 1000:9,.0f}{row['peer'] / 1000:9,.0f}"
              f"{f'{ratio:.2f}{mark}':>20}")
    print(f"{missed} of {len(rows)} cells below target")
