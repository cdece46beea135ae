"""The TypeScript decoder on the Python benchmark's bytes, against eventsource-parser.

The bodies of the decoder table (`run.body`: LF and CRLF, fed in 4 KiB chunks and one event a
chunk) are written to files and decoded in Node by tests/typescript/bench.ts: ours validating
every event (the default `Decoder`), the peer eventsource-parser followed by JSON.parse. It needs
Node 20 or later and the TypeScript project's packages (`npm ci --prefix tests/typescript`, which
`nox -s bench` runs).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent / "tests" / "typescript"
OURS = "llm-stream (validating)"
PEER = "eventsource-parser + JSON.parse"
TARGET = 1.0


def typescript_table(body: Callable[[int, bytes], Sequence[bytes]], events: int,
                     rounds: int = 5) -> None:
    """Print events per second of both, and their ratio, for each body and feed."""
    with tempfile.TemporaryDirectory() as folder:
        workloads = []
        for eol, label in ((b"\n", "LF"), (b"\r\n", "CRLF")):
            path = Path(folder, f"{label}.sse")
            path.write_bytes(b"".join(body(events, eol)))
            workloads += [{"name": f"{label}, 4 KiB", "body": str(path), "chunk": 4096},
                          {"name": f"{label}, 1 event", "body": str(path), "chunk": 0}]
        result = subprocess.run(
            ["node", "--expose-gc", str(PROJECT / "run.mjs"), "bench.ts"],
            input=json.dumps({"rounds": rounds, "workloads": workloads}),
            capture_output=True, text=True, check=True,
        )
    answer = json.loads(result.stdout)
    rows: dict[str, dict[str, float]] = answer["rows"]
    print(f"\nTypeScript decoder (Node {answer['node']}): events per CPU second, {events:,} "
          f"content.delta events, best of {rounds}")
    print(f"{'':34}" + "".join(f"{column:>16}" for column in rows))
    for name, key in ((OURS, "ours"), (PEER, "peer")):
        print(f"{name:34}" + "".join(f"{row[key]:16,.0f}" for row in rows.values()))
    label = f"validating / eventsource-parser (target {TARGET})"
    print(f"{label:34}" + "".join(f"{row['ours'] / row['peer']:16.2f}" for row in rows.values()))
