"""`llm-stream generate` and `llm-stream check-spec`: check the source, render, write or compare.

The examples are judged last, by the bindings just written (or, with --check, by the bindings on
disk, which equal the rendering when nothing drifted).
"""

from __future__ import annotations

import sys
from pathlib import Path

from .check import check
from .examples import start_verifying, verdict, verify_in_subprocess
from .output import drift, write
from .render import render_all
from .sources import SourceError


def _report(errors: list[SourceError]) -> None:
    for error in errors:
        print(f"error: {error}", file=sys.stderr)


def check_spec(root: Path) -> int:
    """The spec check alone: the source is consistent and every example is judged as tagged."""
    spec, errors = check(root)
    if spec is not None and not errors:
        errors = verify_in_subprocess(root)
    _report(errors)
    if errors:
        print(f"{len(errors)} error(s) in the spec source.", file=sys.stderr)
        return 1
    print(f"the spec source is consistent: {len(spec.rules) if spec else 0} rules, "
          f"{len(spec.examples) if spec else 0} examples judged as tagged.")
    return 0


def generate(root: Path, *, check_only: bool = False) -> int:
    # With --check the bindings on disk are judged, so the judging can start at once and run
    # while the source is checked and rendered.
    judging = start_verifying(root) if check_only else None
    try:
        spec, errors = check(root)
        _report(errors)
        if spec is None or errors:
            print(f"{len(errors)} error(s) in the spec source; nothing written.",
                  file=sys.stderr)
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
        else:
            for path in write(root, artifacts):
                print(f"wrote {path}" if (root / path).exists() else f"removed {path}")
        example_errors = verdict(judging or start_verifying(root))
        judging = None
    finally:
        if judging is not None:  # not waited for: an error or drift came first
            judging.kill()
            judging.communicate()
    _report(example_errors)
    if example_errors:
        return 1
    outcome = "up to date" if check_only else "written"
    print(f"{len(artifacts)} artifacts {outcome}; every example judged as tagged.")
    return 0
