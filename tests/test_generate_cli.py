"""`llm-stream generate` as a user runs it: the installed command on a copy of the project.

It renders the copy's own templates; says when nothing changed; exits 1 on drift, 2 on a source
it cannot judge under --check; shows a fault of the source at its file and line, never as a
traceback; and without the toolchain extra says which extra to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llm_stream_codegen.rendering import PACKAGE_DIR

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("spec", "schemas", "registry", "mappings", "generated", "codegen/templates")
TEMPLATE = "codegen/templates/python/static/encoder.py"
ARTIFACT = f"{PACKAGE_DIR}/encoder.py"


def _command() -> list[str]:
    beside = Path(sys.executable).with_name("llm-stream")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "llm_stream_codegen.cli"]


def generate(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_command(), "generate", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for folder in COPIED:
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_projects_own_templates_and_what_changed(project: Path) -> None:
    unchanged = generate(project)
    assert unchanged.returncode == 0, unchanged.stderr
    assert unchanged.stdout.splitlines()[-1].startswith("nothing changed: the ")
    template = project / TEMPLATE
    template.write_text(template.read_text() + "\n# a change of this copy's template\n")
    drifted = generate(project, "--check")
    assert drifted.returncode == 1
    assert f"drift: {ARTIFACT}" in drifted.stderr
    written = generate(project)
    assert written.returncode == 0, written.stderr
    assert f"wrote {ARTIFACT}" in written.stdout
    assert "# a change of this copy's template" in (project / ARTIFACT).read_text()
    assert generate(project, "--check").returncode == 0


def test_a_fault_of_the_source_is_shown_at_its_line(project: Path) -> None:
    usage = project / "schemas/events/usage.json"
    lines = usage.read_text().splitlines()
    at = next(n for n, text in enumerate(lines, 1) if '"minimum": 0' in text)
    usage.write_text(usage.read_text().replace('"minimum": 0', '"minimum": NaN', 1))
    for args, status in (((), 1), (("--check",), 2)):
        result = generate(project, *args)
        assert result.returncode == status
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(
            f"error: schemas/events/usage.json:{at}: invalid JSON: NaN is not a JSON number\n")


def test_without_the_toolchain_extra_it_names_the_extra(tmp_path: Path) -> None:
    """An interpreter that has the bindings' one dependency (pydantic) and not the toolchain's."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    packages = tmp_path / "site-packages"
    packages.mkdir()
    for name in ("pydantic", "pydantic_core", "typing_extensions.py", "annotated_types",
                 "typing_inspection"):
        (packages / name).symlink_to(site / name)
    path = os.pathsep.join([str(ROOT / "codegen"), str(ROOT / "generated" / "python"),
                            str(packages)])
    env = {**os.environ, "PYTHONPATH": path}
    base = [sys.executable, "-S", "-m", "llm_stream_codegen.cli"]
    probe = subprocess.run([sys.executable, "-S", "-c", "import jinja2"], env=env,
                           capture_output=True, check=False)
    assert probe.returncode != 0  # the toolchain is really absent
    for command in (["generate"], ["check-spec"], ["registry", "list"]):
        result = subprocess.run([*base, *command, "--root", str(ROOT)], env=env,
                                capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(f"llm-stream: `llm-stream {command[0]}` needs the "
                                        "toolchain extra (module ")
        assert result.stderr.endswith("pip install 'llm-stream[toolchain]'\n")
    stream = subprocess.run([*base, "check", str(ROOT / "spec/examples/complete/"
                                                 "complete-example.sse")],
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    assert stream.returncode == 0, stream.stderr  # the stream commands need no extra
