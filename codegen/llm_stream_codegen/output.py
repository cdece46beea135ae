"""Putting rendered artifacts on disk, or comparing them with what is there.

`generated/` belongs to the generator: a file there that no renderer produced is stale and goes;
each file is written to a temporary name and renamed, so an interrupted run never leaves a
half-written artifact.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .atomic import write_atomic
from .native import NATIVE

if TYPE_CHECKING:
    from .rendering import Artifact

GENERATED = "generated"
_IGNORED_PARTS = frozenset({"__pycache__", "node_modules", "dist", NATIVE})
"""What building the bindings leaves beside them: Python's caches, the compiled modules, and the
TypeScript package's dependencies and build when it is built in place (`npm pack`)."""


def existing_files(root: Path) -> set[str]:
    folder = root / GENERATED
    return {
        p.relative_to(root).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not _IGNORED_PARTS.intersection(p.relative_to(folder).parts)
    }


def drift(root: Path, artifacts: Iterable[Artifact]) -> list[str]:
    """Paths whose content differs from the rendering, is missing, or is stale."""
    wanted = {a.path: a.content for a in artifacts}
    changed = [
        path for path, content in wanted.items()
        if not (root / path).is_file() or (root / path).read_bytes() != content
    ]
    stale = existing_files(root) - wanted.keys()
    return sorted([*changed, *stale])


def write(root: Path, artifacts: Iterable[Artifact]) -> list[str]:
    """Write what changed, remove what is stale; returns the paths touched."""
    artifacts = list(artifacts)
    touched = drift(root, artifacts)
    wanted = {a.path: a.content for a in artifacts}
    for path in touched:
        if path in wanted:
            write_atomic(root / path, wanted[path])
        else:
            (root / path).unlink()
    return touched
