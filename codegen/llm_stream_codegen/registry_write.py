"""The transactional write of a registry change: the source files written and everything
regenerated as one step, or nothing changed.

A `journal.Journal` records the tree before the first write: if regeneration fails, or the
command is interrupted or killed at any instant, every file touched (the source files and
generated/) gets its previous bytes back, at once or by the next command. Each file is written to
a temporary name and renamed (`atomic.write_atomic`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from .journal import Journal
from .model import Spec
from .registry_regenerate import regenerate


def apply(root: Path, writes: Mapping[str, str], checked: Spec,
          err: TextIO) -> list[tuple[str, str]]:
    """Write `writes` (path -> text), regenerate everything from `checked` (the source with the
    writes in, as checked), and return the paths changed; on a failed regeneration, or any
    exception, restore every file and raise. A journal records the tree first, so that a kill at
    any instant is rolled back by the next command."""
    journal = Journal(root, writes)
    try:
        for path, text in writes.items():
            journal.write(path, text.encode("utf-8"))
        regenerate(root, checked, err)
        changed = journal.changed()
    except BaseException:
        journal.rollback()
        raise
    journal.commit()
    return changed


def report_generated(changed: Sequence[tuple[str, str]], writes: Mapping[str, str],
                     out: TextIO) -> None:
    """The generated files a change created or removed, and how many it updated."""
    generated = [(path, how) for path, how in changed if path not in writes]
    for path, how in generated:
        if how != "updated":
            out.write(f"  {how:<9} {path}\n")
    updated = sum(1 for _, how in generated if how == "updated")
    if updated:
        out.write(f"  updated   {updated} generated file(s) (each names the hash of its "
                  "inputs)\n")
