"""Render every artifact from the resolved spec, in memory, deterministically: this module only
chooses what to render; each renderer is a module of its own, and what they share is in
`rendering`.

Writing is separate (`output.py`), so that `generate --check` renders exactly what `generate`
would write and compares it byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .model import Spec
from .render_docs import render_docs
from .render_models import render_models
from .render_python import rendered_python, static_python
from .render_registry import render_registry
from .render_rules import render_rules
from .render_typescript import render_typescript
from .render_validators import render_validators
from .rendering import Artifact

Renderer = Callable[[Spec], Iterator[Artifact]]


def renderers() -> tuple[Renderer, ...]:
    """Every renderer, in output order; each module of codegen adds its own artifacts here."""
    return (static_python, rendered_python, render_models, render_validators, render_docs,
            render_registry, render_rules, render_typescript)


def render_all(spec: Spec) -> list[Artifact]:
    artifacts = [artifact for render in renderers() for artifact in render(spec)]
    paths = [a.path for a in artifacts]
    duplicates = {p for p in paths if paths.count(p) > 1}
    if duplicates:
        raise RuntimeError(f"two renderers write {sorted(duplicates)}")
    return sorted(artifacts, key=lambda a: a.path)
