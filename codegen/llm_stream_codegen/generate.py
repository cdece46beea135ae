"""`llm-stream generate`: check the source, render every artifact, write or compare."""

from __future__ import annotations

import sys
from pathlib import Path

from .check import check
from .output import drift, write
from .render import render_all


def generate(root: Path, *, check_only: bool = False) -> int:
    spec, errors = check(root)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if spec is None or errors:
        print(f"{len(errors)} error(s) in the spec source; nothing written.", file=sys.stderr)
        return 1
    artifacts = render_all(spec)
    if check_only:
        differing = drift(root, artifacts)
        for path in differing:
            print(f"drift: {path}", file=sys.stderr)
        if differing:
            print(f"{len(differing)} generated file(s) differ from the source; "
                  "run `llm-stream generate`.", file=sys.stderr)
            return 1
        print(f"generated/ is up to date ({len(artifacts)} files).")
        return 0
    touched = write(root, artifacts)
    for path in touched:
        print(f"wrote {path}" if (root / path).exists() else f"removed {path}")
    print(f"{len(artifacts)} artifacts, {len(touched)} changed.")
    return 0
