"""The project root's lock, and the journal that makes a change of the tree all or nothing.

Every command that writes the tree holds an exclusive `flock` on the root folder for its whole
run, and every command that reads it a shared one, so that two registrations never interleave
and no reader sees a half-written change. The kernel releases the lock of a killed process.

A change (`registry add`, `registry deprecate`) first records the tree as it was: each file it may
touch, and generated/ whole, is copied into `.llm-stream-journal/`, and only then is the manifest
written, atomically. Writes start after that. Removing the manifest commits the
change. A process killed in between leaves the manifest behind, and the next command rolls the
tree back to the recorded bytes before it does anything else; a journal without a manifest was
never acted on and is simply removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from .atomic import write_atomic
from .output import GENERATED, existing_files

JOURNAL = ".llm-stream-journal"
MANIFEST = "manifest.json"
_SAVED = "files"


@contextlib.contextmanager
def project_lock(root: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold the root folder's lock: exclusive to write, shared to read; waits, saying so."""
    handle = os.open(root, os.O_RDONLY)
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        try:
            fcntl.flock(handle, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"llm-stream: waiting for another llm-stream command to finish with {root}",
                  file=sys.stderr)
            fcntl.flock(handle, mode)
        yield
    finally:
        os.close(handle)  # closing the descriptor releases the lock


def recover(root: Path) -> bool:
    """Roll back a change that a killed process left half done; the caller holds the exclusive
    lock. Returns whether there was one to roll back."""
    folder = root / JOURNAL
    if not folder.exists():
        return False
    manifest = folder / MANIFEST
    rolled_back = manifest.is_file()
    if rolled_back:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
        _restore(root, folder / _SAVED, recorded["kept"], recorded["absent"])
        manifest.unlink()
        print("llm-stream: an interrupted change of the tree was rolled back", file=sys.stderr)
    shutil.rmtree(folder)
    return rolled_back


def _restore(root: Path, saved: Path, kept: list[str], absent: list[str]) -> None:
    """Every recorded file back to its recorded bytes; files created since, removed. A file no
    longer in the journal was put back by an earlier, interrupted recovery."""
    for path in kept:
        copy = saved / path
        if copy.is_file():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(copy, root / path)
    for path in absent:
        (root / path).unlink(missing_ok=True)
    if (root / GENERATED).is_dir():
        for path in existing_files(root) - set(kept):
            (root / path).unlink()


class Journal:
    """One all-or-nothing change of the tree: `write` files, then `commit`, or `rollback`."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        """Record `paths` (relative to root) and every file under generated/ as they are."""
        self.root = root
        self.folder = root / JOURNAL
        recover(root)
        saved = self.folder / _SAVED
        saved.mkdir(parents=True)
        generated = existing_files(root) if (root / GENERATED).is_dir() else set()
        self.kept: list[str] = []
        self.absent: list[str] = []
        for path in sorted(generated | set(paths)):
            if (root / path).is_file():
                _save(root / path, saved / path)
                self.kept.append(path)
            else:
                self.absent.append(path)
        self._recorded = {*self.kept, *self.absent}
        manifest = {"kept": self.kept, "absent": self.absent}
        write_atomic(self.folder / MANIFEST, json.dumps(manifest).encode())

    def changed(self) -> list[tuple[str, str]]:
        """(path, "created" | "updated" | "removed") of every file whose bytes differ now."""
        now = existing_files(self.root) if (self.root / GENERATED).is_dir() else set()
        result = []
        for path in sorted({*self.kept, *self.absent, *now}):
            full, copy = self.root / path, self.folder / _SAVED / path
            current = full.read_bytes() if full.is_file() else None
            before = copy.read_bytes() if copy.is_file() else None
            if current != before:
                how = "created" if before is None else "removed" if current is None else "updated"
                result.append((path, how))
        return result

    def write(self, path: str, content: bytes) -> None:
        if path not in self._recorded:
            raise ValueError(f"{path} was not recorded in the journal")
        write_atomic(self.root / path, content)

    def commit(self) -> None:
        """The change stands: the manifest goes first, so that no later command rolls it back."""
        (self.folder / MANIFEST).unlink()
        shutil.rmtree(self.folder)

    def rollback(self) -> None:
        """Every file back as it was, and the journal gone."""
        _restore(self.root, self.folder / _SAVED, self.kept, self.absent)
        (self.folder / MANIFEST).unlink()
        shutil.rmtree(self.folder)


def _save(source: Path, copy: Path) -> None:
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, copy)
