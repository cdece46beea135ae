"""Shared fixtures: the project root and throwaway copies of the spec source."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from llm_stream_codegen.load import SOURCE_DIRS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def source_copy(tmp_path: Path) -> Path:
    """A copy of the spec source (spec/, schemas/, registry/, mappings/) to break without
    touching the real source."""
    for folder in SOURCE_DIRS:
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path
