"""Writing a file atomically: to a temporary name beside it, then renamed over it, so that an
interrupted write never leaves a half-written file, and the file keeps its mode."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
