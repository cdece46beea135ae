"""`llm-stream registry list`: the registered event types as a table, or the reserved names."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .load import load
from .registry_checks import RESERVED_NAMES, RESERVED_PREFIXES
from .sources import SourceError


def table(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns, the first row the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n" for row in rows
    )


def list_event_types(root: Path, *, reserved: bool = False, out: TextIO | None = None,
                     err: TextIO | None = None) -> int:
    """`llm-stream registry list`: the event types as a table (or the reserved names)."""
    out, err = out or sys.stdout, err or sys.stderr
    if reserved:
        rows: list[tuple[str, ...]] = [("RESERVED", "WHY")]
        rows += [(name, why) for name, why in RESERVED_NAMES.items()]
        rows += [(prefix + "*", why) for prefix, why in RESERVED_PREFIXES.items()]
        out.write(table(rows))
        return 0
    try:
        spec = load(root)
    except (SourceError, OSError) as exc:
        err.write(f"error: {exc}\n")
        return 1
    header: tuple[str, ...] = ("NAME", "STATUS", "PLACE", "REFERENCE")
    listed = [header]
    for event in spec.event_types:
        life = event.lifecycle
        place = life.place + (f" ({life.block_kind})" if life.block_kind else "")
        listed.append((event.name, event.status, place, event.reference))
    out.write(table(listed))
    return 0
