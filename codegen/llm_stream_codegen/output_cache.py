"""A cache of what an external generator made, by the hash of everything its output depends on;
jinja keeps its compiled templates beside it (`rendering.new_environment`).

datamodel-code-generator takes most of the time of `llm-stream generate`, and its output is a
function of its input, its arguments and the versions of the packages that run it: with all of
those in the key, a hit is the output a run would give, byte for byte. Entries are written
atomically, under a key that names their whole content, in a folder only the user can write
(`$LLM_STREAM_CACHE_DIR`, else `$XDG_CACHE_HOME/llm-stream`, else `~/.cache/llm-stream`; an
empty `LLM_STREAM_CACHE_DIR` turns the cache off). A cache that cannot be read or written is
passed by, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from .atomic import write_atomic


def cache_dir() -> Path | None:
    """Where entries live; None when the cache is turned off."""
    configured = os.environ.get("LLM_STREAM_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-stream"


def cache_key(kind: str, inputs: object, packages: Iterable[str]) -> str:
    """The hash of the inputs (JSON), the Python version and the installed versions of
    `packages`, for entries of `kind`."""
    versions: dict[str, str | None] = {}
    for name in sorted(packages):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    key = {"kind": kind, "python": sys.version_info[:2], "packages": versions, "inputs": inputs}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _trusted(folder: Path) -> bool:
    """Whether only this user can have written the entries: a folder of theirs that no one
    else may write to."""
    try:
        status = folder.stat()
    except OSError:
        return False
    return status.st_uid == os.getuid() and not status.st_mode & 0o022


def trusted_folder(*parts: str) -> Path | None:
    """The cache's folder (or a folder within it), made if need be; None when the cache is
    off, or the folder cannot be made or trusted."""
    folder = cache_dir()
    if folder is None:
        return None
    folder = folder.joinpath(*parts)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if _trusted(folder) else None


def cached(key: str, make: Callable[[], str]) -> str:
    """The text stored under `key`, or `make()`, stored under it for next time."""
    folder = trusted_folder()
    if folder is None:
        return make()
    entry = folder / f"{key}.txt"
    try:
        return entry.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    text = make()
    with contextlib.suppress(OSError):
        write_atomic(entry, text.encode())
    return text


def known(key: str) -> bool:
    """Whether a verdict was remembered under `key` (see `remember`)."""
    folder = trusted_folder()
    return folder is not None and (folder / f"{key}.ok").is_file()


def remember(key: str) -> None:
    """Remember a verdict under `key`: an empty entry, whose presence is the verdict."""
    folder = trusted_folder()
    if folder is not None:
        with contextlib.suppress(OSError):
            write_atomic(folder / f"{key}.ok", b"")
