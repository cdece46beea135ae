"""Compiling the bindings' hot modules with mypyc into the package's `_native/` folder.

The modules of `COMPILED` are compiled from the package's own sources, unchanged, into extension
modules that `llm_stream/__init__.py` puts ahead of the pure ones only while a manifest (the
sha256 of each source, the interpreter's extension suffix) says they were built from the sources
beside them. The pure modules stay the reference, and what the package falls back to: a build
that fails (no C compiler, a mypyc error) says so in one line and leaves `_native/` as it was.

The build hook (`hatch_build.py`) imports this module in an isolated build environment that
holds only mypy and setuptools, so it imports nothing but the standard library (and, for the
project's lock, `journal`, which does the same); the compilation itself runs in a child
interpreter (`compile_here`), which keeps mypyc's and setuptools' output and global state out
of the caller.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from hashlib import sha256
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

COMPILED = ("decoder.py", "sse.py")
"""The modules compiled, by file name in the package: the decoder's per-event work."""
NATIVE = "_native"
"""The folder, inside the package, that holds the extension modules and their manifest."""
MANIFEST = "manifest"
"""The manifest's file name in `NATIVE`; the package's `__init__` reads the same format."""
GROUP = "_native"
"""mypyc's group: its shared library is `<package>._native__mypyc`, inside the package."""
STAGING = (f"{NATIVE}.new", f"{NATIVE}.old")
"""Where a build is assembled, and where the build it replaces is put aside, beside `NATIVE`."""
MYPY_OPTIONS = ("--no-site-packages", "--ignore-missing-imports")
"""The compiled code is typed by the package alone, whatever else the interpreter has installed
(pydantic, which the sources name only for type checking), so every build is the same."""


class BuildError(Exception):
    """The compilation failed; the message is its one-line reason."""


def mypy_version() -> str | None:
    """The installed mypy's version, or None when mypy (and so mypyc) is not installed."""
    try:
        from mypy.version import __version__
    except ImportError:
        return None
    return __version__


def manifest(sources: dict[str, bytes], mypy: str) -> str:
    """The manifest of a build from `sources` (file name to bytes): one `key value...` line a
    fact, so that `__init__` reads it with str.split, without importing json."""
    lines = [f"suffix {EXTENSION_SUFFIXES[0]}", f"mypy {mypy}"]
    lines += [f"sha256 {name} {sha256(content).hexdigest()}"
              for name, content in sorted(sources.items())]
    return "\n".join(lines) + "\n"


def read_sources(package: Path, modules: Sequence[str] = COMPILED) -> dict[str, bytes]:
    return {name: (package / name).read_bytes() for name in modules}


def is_current(package: Path, modules: Sequence[str] = COMPILED) -> bool:
    """Whether `package/_native/` holds a build of these sources by this mypy and interpreter."""
    mypy = mypy_version()
    try:
        present = (package / NATIVE / MANIFEST).read_text(encoding="utf-8")
    except OSError:
        return False
    return mypy is not None and present == manifest(read_sources(package, modules), mypy)


def compile_modules(package: Path, into: Path, modules: Sequence[str] = COMPILED) -> None:
    """Compile `modules` of `package` and put the extension files and their manifest in `into`
    (which must not exist). The package is copied to a temporary folder first: mypy and
    setuptools write caches and build folders beside what they compile.

    Raises BuildError with a one-line reason."""
    mypy = mypy_version()
    if mypy is None:
        raise BuildError("mypy (which provides mypyc) is not installed")
    with tempfile.TemporaryDirectory(prefix="llm-stream-native-") as work:
        copy = Path(work) / package.name
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns(
            "__pycache__", NATIVE, *STAGING, "*.so", "*.pyd"))
        sources = read_sources(copy, modules)
        codegen = str(Path(__file__).resolve().parent.parent)
        command = [sys.executable, "-c", _CHILD, codegen, package.name, *modules]
        result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BuildError(_reason(result.stdout + result.stderr))
        built = sorted((Path(work) / "out" / package.name).glob(f"*{EXTENSION_SUFFIXES[0]}"))
        if not built:
            raise BuildError("the compiler produced no extension module")
        into.mkdir()
        for extension in built:
            shutil.copy2(extension, into / extension.name)
        (into / MANIFEST).write_text(manifest(sources, mypy), encoding="utf-8")


def _reason(output: str) -> str:
    """The line of a failed build's output that says why: mypy's first error, else the last
    line that names an error, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if ": error:" in line:
            return line
    named = [line for line in lines if "error" in line.lower()]
    return (named or lines or ["the build exited without a word"])[-1]


def install(package: Path, root: Path, modules: Sequence[str] = COMPILED) -> str:
    """Bring `package/_native/` up to date with the sources, holding `root`'s write lock:
    nothing to do when its manifest matches; else build beside it and rename the build into
    place, so that `_native/` is at every moment a whole build or absent. Returns what was done,
    in one line; raises BuildError (with `_native/` as it was) when the build fails."""
    from .journal import project_lock  # here: journal's output module imports this one

    native = package / NATIVE
    if is_current(package, modules):
        return f"{native} is up to date"
    with project_lock(root, exclusive=True):
        if is_current(package, modules):  # built by the install that held the lock before
            return f"{native} is up to date"
        new, old = (package / name for name in STAGING)
        for leftover in (new, old):  # of a build that was killed
            shutil.rmtree(leftover, ignore_errors=True)
        try:
            compile_modules(package, new, modules)
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        if native.exists():
            native.rename(old)
        new.rename(native)
        shutil.rmtree(old, ignore_errors=True)
    return f"compiled {', '.join(modules)} into {native}"


_CHILD = ("import sys; sys.path.insert(0, sys.argv[1]); "
          "from llm_stream_codegen.native import compile_here; "
          "compile_here(sys.argv[2], sys.argv[3:])")
"""The child's program. It puts the builder's folder on its path itself: pip's isolated build
environment starts each interpreter with a sitecustomize that drops every path the
interpreter's own site-packages add, an editable install of this project's among them, and
PYTHONPATH's entries with them."""


def compile_here(package: str, modules: Sequence[str]) -> None:
    """The child's work, in the folder that holds the package's copy: mypyc writes the C code
    to `c/`, setuptools compiles it to `out/<package>/`."""
    from mypyc.build import mypycify
    from setuptools import setup

    extensions = mypycify([*MYPY_OPTIONS, *(f"{package}/{name}" for name in modules)],
                          opt_level="3", group_name=f"{package}.{GROUP}", target_dir="c")
    setup(name=f"{package}-native", ext_modules=extensions, script_args=[
        "--quiet", "build_ext", "--build-lib", "out", "--build-temp", "temp"])

