"""Regenerating everything after a registry change, inside the change's journal.

The examples are then judged by the bindings just generated under the root, which for a copy of
the project are not the installed ones; what `generate` prints is shown only when it fails.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from .generate import generate
from .model import Spec
from .output import GENERATED
from .registry_proposal import RegistryError


@contextlib.contextmanager
def _bindings_of(root: Path) -> Iterator[None]:
    """Let the example check's subprocess import the bindings generated under `root`, which
    for a copy of the project are not the installed ones."""
    bindings = str((root / GENERATED / "python").resolve())
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = bindings + (os.pathsep + old if old else "")
    try:
        yield
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def regenerate(root: Path, checked: Spec, err: TextIO) -> None:
    """`generate` under `root` from the source as `checked`; RegistryError when it fails, its
    output written to `err`."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output), _bindings_of(root):
        status = generate(root, checked=checked)
    if status != 0:
        err.write(output.getvalue())
        raise RegistryError(["regeneration failed (see above); every file touched has its "
                             "previous bytes back"])
