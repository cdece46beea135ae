"""Shared fixtures (the project root, throwaway copies of the spec source) and the run's shape:
the hypothesis profile "long" that `nox -s fuzz` loads, the `deep` marker, and the order that
starts the slowest modules first, so that no core waits at the end of a parallel run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from depth import LONG, LONG_FACTOR
from hypothesis import settings

from llm_stream_codegen.load import SOURCE_DIRS

ROOT = Path(__file__).resolve().parent.parent
SLOWEST_FIRST = (
    "test_registry_crash.py", "test_validator_compiler.py", "test_cli_guarantees.py",
    "test_generate_cli.py", "test_validators_differential.py", "test_registry_add.py",
    "test_typescript_validators.py",
)
"""Modules whose tests take the longest (`pytest --durations`), started before the rest; each
module stays in one piece, so that its module-scoped fixtures are made once."""

settings.register_profile(LONG, max_examples=LONG_FACTOR * settings.default.max_examples)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "deep: a search whose depth the hypothesis profile sets (nox -s fuzz runs "
        "these in the profile \"long\")")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else len(SLOWEST_FIRST)

    items.sort(key=rank)


@pytest.fixture
def source_copy(tmp_path: Path) -> Path:
    """A copy of the spec source (spec/, schemas/, registry/, mappings/) to break without
    touching the real source."""
    for folder in SOURCE_DIRS:
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path
