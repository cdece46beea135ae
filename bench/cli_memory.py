"""Peak memory of `llm-stream check` and `llm-stream decode` on a long capture:
`python bench/cli_memory.py BYTES [FOLDER]`.

The capture (bench/memory.py's conforming stream of content.delta events) is written to a file
in FOLDER (the system's temporary folder by default) and removed afterwards; each command runs as
its own process, its output thrown away, and its peak resident set is read from its own
resource usage (wait4), so that this script's memory does not count.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polite
from memory import stream


def llm_stream() -> list[str]:
    beside = Path(sys.executable).with_name("llm-stream")
    found = str(beside) if beside.exists() else shutil.which("llm-stream")
    return [found] if found else [sys.executable, "-m", "llm_stream_codegen.cli"]


def peak(command: list[str]) -> tuple[int, float, float]:
    """Exit status, peak RSS in MB and seconds of one run."""
    began = time.monotonic()
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, time.monotonic() - began


def main() -> None:
    size = int(float(sys.argv[1]))
    folder = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        path = Path(scratch) / "capture.sse"
        with path.open("wb") as out:
            for chunk in stream(size):
                out.write(chunk)
        print(f"capture: {path.stat().st_size / 1e9:.2f} GB")
        for name in ("check", "decode"):
            status, rss, seconds = peak([*llm_stream(), name, str(path)])
            print(f"llm-stream {name}: exit {status}, peak RSS {rss:.1f} MB, {seconds:.0f} s")


if __name__ == "__main__":
    sys.exit(polite.run(main))
