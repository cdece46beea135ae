"""`llm-stream check` on a large capture against the fast decoder counting the same events.

Both run as fresh processes on the same file, taking turns, best of `rounds` in CPU time: the
command as a user runs it, and a script that feeds the file in 64 KiB chunks to
`Decoder(typed=False, validate=False)` and counts what comes out.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from workloads import deltas

COUNT = """
import sys
from llm_stream import Decoder
decoder, events = Decoder(typed=False, validate=False), 0
with open(sys.argv[1], "rb") as stream:
    while chunk := stream.read(1 << 16):
        events += len(decoder.feed(chunk))
events += len(decoder.close())
print(events, decoder.conforming)
"""


def capture(path: Path, size: int) -> int:
    """Write a conforming capture of about `size` bytes; returns its events."""
    events = deltas(max(1, size // 120))
    with path.open("wb") as stream:
        for start in range(0, len(events), 10_000):
            stream.write(b"".join(events[start:start + 10_000]))
    return len(events)


def _timed(command: list[str]) -> float:
    """CPU seconds (user and system) of one run of `command`, which must succeed: other
    processes on a shared machine inflate them far less than the wall clock."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def check_report(size: int, rounds: int) -> None:
    script = shutil.which("llm-stream", path=str(Path(sys.executable).parent))
    if script is None:
        raise AssertionError("the llm-stream command is not installed beside this Python")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "capture.sse")
        events = capture(path, size)
        runs = {"check": [script, "check", str(path)],
                "fast decoder, counting": [sys.executable, "-c", COUNT, str(path)]}
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(rounds):
            for name, command in runs.items():
                best[name] = min(best[name], _timed(command))
        mb = path.stat().st_size / 1e6
    print(f"\nllm-stream check on a {mb:.0f} MB capture ({events:,} events), best of {rounds}")
    for name in runs:
        print(f"  {name:24} {best[name]:7.2f} s")
    ratio = best["check"] / best["fast decoder, counting"]
    print(f"  check / fast decoder: {ratio:.2f} (target: at most 1.5)")
