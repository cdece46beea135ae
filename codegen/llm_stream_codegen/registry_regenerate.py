"""Regenerating everything after a registry change, inside the change's journal.

The examples are then judged by the bindings just generated under the root, which for a copy of
the project are not the installed ones; what `generate` prints is shown only when it fails.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import TextIO

from .generate import generate
from .model import Spec
from .registry_proposal import RegistryError


def regenerate(root: Path, checked: Spec, err: TextIO) -> None:
    """`generate` under `root` from the source as `checked`; RegistryError when it fails, its
    output written to `err`."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        status = generate(root, checked=checked)
    if status != 0:
        err.write(output.getvalue())
        raise RegistryError(["regeneration failed (see above); every file touched has its "
                             "previous bytes back"])
