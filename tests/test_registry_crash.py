"""`registry add` under kills and concurrency, run as real processes on copies of the project.

A registration is all or nothing: killed at any instant (SIGKILL, so nothing of the process runs
after it), the next command finds the tree either exactly as before or exactly as a finished
registration leaves it, and a retry succeeds. Two registrations at once serialise on the lock of
the project root. LLM_STREAM_KILLS sets the number of kills (6 by default, 40 in `nox -s fuzz`);
LLM_STREAM_KILL_SEED replays a run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_registry_add import PROPOSAL, copy_project, tree, write_proposal

from llm_stream_codegen.journal import JOURNAL, MANIFEST, Journal

KILLS = int(os.environ.get("LLM_STREAM_KILLS", "6"))
KILL_BUDGET_SECONDS = 600
"""The kill loop stops early, with what it has, when the machine is this slow."""


def _command() -> list[str]:
    beside = Path(sys.executable).with_name("llm-stream")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "llm_stream_codegen.cli"]


def start(*args: str | Path, scratch: Path) -> subprocess.Popen[str]:
    """The command in a session of its own (so that a kill takes its children too); its
    temporary files go to `scratch`, which the test owns."""
    scratch.mkdir(exist_ok=True)
    return subprocess.Popen(
        [*_command(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True, env={**os.environ, "TMPDIR": str(scratch)},
    )


def run(*args: str | Path, scratch: Path) -> subprocess.CompletedProcess[str]:
    process = start(*args, scratch=scratch)
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Until `path` exists or the process has ended."""
    while not path.exists() and process.poll() is None:
        time.sleep(0.005)


def reset(root: Path, pristine: Path) -> None:
    shutil.rmtree(root)
    shutil.copytree(pristine, root)


@pytest.mark.deep
def test_a_registration_killed_at_any_instant_is_all_or_nothing(tmp_path: Path) -> None:
    pristine = copy_project(tmp_path / "pristine")
    before = tree(pristine)
    proposal = write_proposal(tmp_path, PROPOSAL)
    scratch = tmp_path / "tmp"
    finished = tmp_path / "finished"
    shutil.copytree(pristine, finished)
    began = time.monotonic()
    done = run("registry", "add", "--proposal", proposal, "--root", finished, scratch=scratch)
    duration = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    after = tree(finished)

    seed = int(os.environ.get("LLM_STREAM_KILL_SEED", str(random.randrange(1 << 32))))
    chance = random.Random(seed)
    root = tmp_path / "project"
    shutil.copytree(pristine, root)
    outcomes = {"nothing written": 0, "rolled back": 0, "finished": 0}
    deadline = time.monotonic() + KILL_BUDGET_SECONDS
    for kill in range(KILLS):
        if time.monotonic() > deadline:
            break
        process = start("registry", "add", "--proposal", proposal, "--root", root,
                        scratch=scratch)
        if kill % 2:  # every other kill strikes while the tree is being written
            wait_for(root / JOURNAL / MANIFEST, process)
            time.sleep(chance.uniform(0, duration * 0.5))
        else:
            time.sleep(chance.uniform(0, duration * 1.1))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        # the next command, any one, rolls a half-done registration back first
        listed = run("registry", "list", "--root", root, scratch=scratch)
        assert listed.returncode == 0, listed.stderr
        now = tree(root)
        nearest = after if "audio.delta" in listed.stdout else before
        differing = sorted({path for path, _ in set(now.items()) ^ set(nearest.items())})
        assert now in (before, after), f"kill {kill} (seed {seed}) left {differing} half done"
        assert not (root / JOURNAL).exists()
        if now == after:
            outcomes["finished"] += 1
            reset(root, pristine)
        else:
            outcomes["rolled back" if "rolled back" in listed.stderr else "nothing written"] += 1
    print(f"kills: {outcomes} (seed {seed}, a registration takes {duration:.1f} s)")
    retry = run("registry", "add", "--proposal", proposal, "--root", root, scratch=scratch)
    assert retry.returncode == 0, retry.stderr
    assert tree(root) == after


def test_the_next_command_rolls_back_a_change_left_half_done(tmp_path: Path) -> None:
    """A change abandoned after some writes, as a kill leaves it, at a chosen instant."""
    root = copy_project(tmp_path / "project")
    before = tree(root)
    journal = Journal(root, ["registry/event-types.yaml", "schemas/events/audio.delta.json"])
    journal.write("registry/event-types.yaml", b"half\n")
    journal.write("schemas/events/audio.delta.json", b"{}\n")
    (root / "generated/python/llm_stream/models.py").write_bytes(b"half\n")
    (root / "generated/stray.txt").write_bytes(b"created by the killed change\n")
    del journal  # the process dies here: no commit, no rollback
    result = run("generate", "--check", "--root", root, scratch=tmp_path / "tmp")
    assert result.returncode == 0, result.stderr
    assert "an interrupted change of the tree was rolled back" in result.stderr
    assert tree(root) == before


def test_a_journal_never_acted_on_is_dropped(tmp_path: Path) -> None:
    """Killed while recording: no manifest yet, so nothing was written and nothing is undone."""
    root = copy_project(tmp_path / "project")
    before = tree(root)
    (root / JOURNAL / "files" / "registry").mkdir(parents=True)
    (root / JOURNAL / "files" / "registry" / "event-types.yaml").write_bytes(b"partial copy")
    result = run("registry", "list", "--root", root, scratch=tmp_path / "tmp")
    assert result.returncode == 0, result.stderr
    assert "rolled back" not in result.stderr
    assert tree(root) == before


def test_concurrent_registrations_serialise(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    other = {**PROPOSAL, "name": "audio.transcript", "lifecycle": {"place": "any"},
             "schema": {"properties": {"text": {"type": "string"}}, "required": ["text"]}}
    first = write_proposal(tmp_path, PROPOSAL, "first.yaml")
    second = write_proposal(tmp_path, other, "second.yaml")
    scratch = tmp_path / "tmp"
    processes = [start("registry", "add", "--proposal", path, "--root", root, scratch=scratch)
                 for path in (first, second, first)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in processes]
    statuses = [status for status, _, _ in results]
    assert statuses[1] == 0, results[1][2]
    assert sorted([statuses[0], statuses[2]]) == [0, 1], results
    refused = results[0] if statuses[0] == 1 else results[2]
    assert "event type 'audio.delta' is already registered" in refused[2]
    text = (root / "registry/event-types.yaml").read_text()
    assert text.count("  - name: audio.delta\n") == 1
    assert text.count("  - name: audio.transcript\n") == 1
    for name in ("audio.delta", "audio.transcript"):
        assert (root / f"schemas/events/{name}.json").is_file()
    assert run("generate", "--check", "--root", root, scratch=scratch).returncode == 0


@pytest.mark.parametrize("command", [
    ("generate",), ("generate", "--check"), ("check-spec",), ("registry", "list"),
    ("registry", "add", "x.y"), ("registry", "deprecate", "x.y", "--reason", "r"),
], ids=" ".join)
def test_commands_outside_a_project_root_suggest_root(
    command: tuple[str, ...], tmp_path: Path,
) -> None:
    result = subprocess.run([*_command(), *command], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "llm-stream: . is not an llm-stream project root (it has no spec/llm-stream.yaml); "
        "run the command from the project root or give --root DIR")
