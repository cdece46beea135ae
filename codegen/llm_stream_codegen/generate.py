"""`llm-stream generate` and `llm-stream check-spec`: check the source, render, write or compare.

The examples are judged last, by the bindings just written (or, with --check, by the bindings on
disk, which equal the rendering when nothing drifted). Rendering reads the templates of the
project at `root` when it has them (`rendering.templates_of`).

Exit codes: 0 done (or up to date); 1 the source has errors (or, with --check, generated/
differs from the source); with --check, errors in the source exit 2, so that 1 always means
"run `llm-stream generate`".
"""

from __future__ import annotations

import sys
from pathlib import Path

from .check import check
from .examples import start_verifying, verdict, verify_in_subprocess
from .model import Spec
from .output import drift, write
from .render import render_all
from .rendering import Artifact, templates_of
from .schema_walk import pointer_tokens
from .sources import SourceError, json_line
from .validator_compiler import SchemaCompileError

EXIT_DRIFT = 1
EXIT_SOURCE_ERRORS_WHEN_CHECKING = 2


def _report(errors: list[SourceError]) -> None:
    for error in errors:
        print(f"error: {error}", file=sys.stderr)


def _errors(count: int) -> str:
    return f"{count} error{'' if count == 1 else 's'}"


def check_spec(root: Path) -> int:
    """The spec check alone: the source is consistent and every example is judged as tagged."""
    spec, errors = check(root)
    if spec is not None and not errors:
        errors = verify_in_subprocess(root, spec.examples)
    _report(errors)
    if errors:
        print(f"{_errors(len(errors))} in the spec source.", file=sys.stderr)
        return 1
    print(f"the spec source is consistent: {len(spec.rules) if spec else 0} rules, "
          f"{len(spec.examples) if spec else 0} examples judged as tagged.")
    return 0


def _render(spec: Spec, root: Path) -> list[Artifact]:
    """Every artifact; a schema the validator compiler refuses is a fault of the source, shown
    at its file and line."""
    try:
        return render_all(spec)
    except SchemaCompileError as exc:
        doc = spec.schemas.get(exc.schema_id)
        path = doc.path if doc is not None and doc.path else exc.schema_id
        line = 0
        if doc is not None and doc.path:
            line = json_line((root / doc.path).read_text(encoding="utf-8"),
                             pointer_tokens(exc.pointer))
        raise SourceError(path, line, f"{exc.pointer or '/'}: {exc.problem}") from None


def generate(root: Path, *, check_only: bool = False, checked: Spec | None = None) -> int:
    """Check, render, and write or compare; `checked` is the source under `root` as the caller
    has already checked it (a registry change checks the files it writes before writing them)."""
    failed = EXIT_SOURCE_ERRORS_WHEN_CHECKING if check_only else 1
    spec, errors = (checked, []) if checked is not None else check(root)
    artifacts: list[Artifact] = []
    # With --check the bindings on disk judge the examples: they load while the rendering runs.
    judging = start_verifying(root, spec.examples) if check_only and spec and not errors else None
    try:
        if spec is not None and not errors:
            try:
                with templates_of(root):
                    artifacts = _render(spec, root)
            except SourceError as exc:
                errors = [exc]
        _report(errors)
        if spec is None or errors:
            print(f"{_errors(len(errors))} in the spec source; nothing "
                  f"{'compared' if check_only else 'written'}.", file=sys.stderr)
            return failed
        if check_only:
            differing = drift(root, artifacts)
            for path in differing:
                print(f"drift: {path}", file=sys.stderr)
            if differing:
                print(f"{len(differing)} generated file(s) differ from the source; "
                      "run `llm-stream generate`.", file=sys.stderr)
                return EXIT_DRIFT
            touched: list[str] = []
        else:
            touched = write(root, artifacts)
            for path in touched:
                print(f"wrote {path}" if (root / path).exists() else f"removed {path}")
        example_errors = (verdict(judging) if judging is not None
                          else verify_in_subprocess(root, spec.examples))
    finally:
        if judging is not None:
            judging.stop()
    _report(example_errors)
    if example_errors:
        return failed
    if check_only:
        summary = f"{len(artifacts)} artifacts up to date"
    elif touched:
        summary = f"{len(touched)} of {len(artifacts)} artifacts written or removed"
    else:
        summary = f"nothing changed: the {len(artifacts)} artifacts were up to date"
    print(f"{summary}; every example judged as tagged.")
    return 0
