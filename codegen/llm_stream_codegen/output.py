"""Putting rendered artifacts on disk, or comparing them with what is there.

`generated/` belongs to the generator: a file there that no renderer produced is stale and goes;
each file is written to a temporary name and renamed, so an interrupted run never leaves a
half-written artifact.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .render import Artifact

GENERATED = "generated"
_IGNORED_PARTS = frozenset({"__pycache__", "node_modules", "dist"})
"""What building the bindings leaves beside them: Python's caches, and the TypeScript package's
dependencies and build when it is built in place (`npm pack`)."""


def existing_files(root: Path) -> set[str]:
    folder = root / GENERATED
    return {
        p.relative_to(root).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not _IGNORED_PARTS.intersection(p.relative_to(folder).parts)
    }


def _file_mode(path: Path) -> int:
    """The mode a rewritten file keeps: its own, or for a new file what the umask allows."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _file_mode(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


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
