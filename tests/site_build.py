"""The documentation site as the site's tests read it: built once per run, strictly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE_DIR_VARIABLE = "LLM_STREAM_SITE_DIR"


def build_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build that LLM_STREAM_SITE_DIR names (made by `mkdocs build --strict`, as nox's
    `docs` session does), or a fresh strict build in a temporary folder."""
    given = os.environ.get(SITE_DIR_VARIABLE)
    if given:
        site = Path(given)
        if not (site / "index.html").is_file():
            pytest.fail(f"{SITE_DIR_VARIABLE}={given} holds no built site: run `nox -s docs`")
        return site
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
         "-f", str(ROOT / "site" / "mkdocs.yml"), "-d", str(out)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return out
