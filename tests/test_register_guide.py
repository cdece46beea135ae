"""The registration guide's transcripts are what the commands print today.

Each ```console block of site/docs/guides/register.md that runs `llm-stream registry add` is run,
in order, in one copy of the project (so that the dry run and the registration see the same
tree); its output must equal the transcript, up to a final `...` line, which stands for the rest.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from test_registry_add import copy_project

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "site" / "docs" / "guides" / "register.md"
BLOCK = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def transcripts() -> list[tuple[str, str]]:
    """(command, output) of every console block that runs `llm-stream registry add`."""
    found = []
    for block in BLOCK.findall(GUIDE.read_text(encoding="utf-8")):
        lines = block.splitlines()
        if not lines[0].startswith("$ llm-stream registry add"):
            continue
        command = [lines[0][2:]]
        rest = lines[1:]
        while command[-1].endswith("\\"):
            command[-1] = command[-1][:-1]
            command.append(rest.pop(0).strip())
        found.append((" ".join(command), "\n".join(rest) + "\n"))
    return found


def _llm_stream() -> str:
    beside = Path(sys.executable).with_name("llm-stream")
    found = str(beside) if beside.exists() else shutil.which("llm-stream")
    assert found, "the llm-stream command is not installed"
    return found


def test_the_transcripts_are_real_runs(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    shown = transcripts()
    assert len(shown) == 3
    for command, expected in shown:
        arguments = shlex.split(command)
        result = subprocess.run([_llm_stream(), *arguments[1:]], cwd=root, capture_output=True,
                                text=True, timeout=600, check=False)
        output = result.stdout + result.stderr
        if expected.endswith("\n...\n"):
            expected = expected.removesuffix("...\n")
            output = output[:len(expected)]
        assert output == expected, (
            f"{GUIDE.relative_to(ROOT)}: the transcript of `{command[:60]}...` is stale; "
            f"the command now prints:\n{result.stdout + result.stderr}")
