"""`llm-stream generate --check` (what `nox -s verify` runs) catches every hand edit.

A copy of the project is edited by hand, once under generated/ and once in a template, without
regenerating; the check must fail and name the file. The copy's own codegen runs, so that the
edited template is the one rendered.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from llm_stream_codegen.load import SOURCE_DIRS

ROOT = Path(__file__).resolve().parent.parent
COPIED = (*SOURCE_DIRS, "codegen", "generated")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    for folder in COPIED:
        shutil.copytree(ROOT / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def generate_check(root: Path) -> subprocess.CompletedProcess[str]:
    paths = (root / "codegen", root / "generated" / "python")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}
    command = ["generate", "--check", "--root", str(root)]
    return subprocess.run(
        [sys.executable, "-m", "llm_stream_codegen.cli", *command],
        capture_output=True, text=True, env=env, cwd=root, check=False,
    )


def test_an_untouched_copy_has_no_drift(project: Path) -> None:
    result = generate_check(project)
    assert result.returncode == 0, result.stderr


@contextmanager
def appended(path: Path, text: bytes) -> Iterator[None]:
    """`path` with `text` appended, as a hand edit would leave it; restored afterwards."""
    original = path.read_bytes()
    path.write_bytes(original + text)
    try:
        yield
    finally:
        path.write_bytes(original)


@pytest.mark.parametrize("edited", [
    "generated/python/llm_stream/encoder.py",
    "generated/docs/events/usage.md",
    "generated/registry/stop-reasons.csv",
])
def test_a_hand_edit_under_generated_fails(project: Path, edited: str) -> None:
    with appended(project / edited, b"\n"):
        result = generate_check(project)
    assert result.returncode == 1
    assert f"drift: {edited}" in result.stderr


def test_a_stray_file_under_generated_fails(project: Path) -> None:
    stray = project / "generated/python/llm_stream/helper.py"
    stray.write_text("x = 1\n")
    try:
        result = generate_check(project)
    finally:
        stray.unlink()
    assert result.returncode == 1
    assert "drift: generated/python/llm_stream/helper.py" in result.stderr


@pytest.mark.parametrize(("template", "artifact"), [
    ("codegen/templates/python/static/encoder.py", "generated/python/llm_stream/encoder.py"),
    ("codegen/templates/python/registry.py.j2", "generated/python/llm_stream/registry.py"),
])
def test_a_template_edit_without_regenerating_fails(
    project: Path, template: str, artifact: str
) -> None:
    with appended(project / template, b"\n# changed\n"):
        result = generate_check(project)
    assert result.returncode == 1
    assert f"drift: {artifact}" in result.stderr
