"""Compiling the bindings' hot modules with mypyc into the package's `_native/` folder.

The modules of `COMPILED` are compiled from the package's own sources into extension modules
that `llm_stream/__init__.py` puts ahead of the pure ones only while a manifest says they were
built from the sources beside them: its Python modules, unchanged, by mypyc, and its C sources
(`jsonscan.c`, `plainjson.c`) each into the extension module of its name, which stands for the
pure module of the same name. The manifest covers every top-level source of the package, not
only the compiled ones: mypyc inlines the `Final` constants and relies on the types of what the
compiled modules import, so a change anywhere in the package makes the build stale.
Each interpreter has its own manifest (named with its extension suffix, as the extension files
are), so builds for several interpreters sharing one tree coexist. The pure modules stay the
reference, and what the package falls back to: a build that fails (no C compiler, a mypyc error,
a C source that does not compile, a tree it cannot write) says so in one line and leaves
`_native/` as it was.

The build hook (`hatch_build.py`) imports this module in an isolated build environment that
holds only mypy and setuptools, so it imports nothing but the standard library (and `atomic`,
and for the project's lock `journal`, which do the same); the compilation itself runs in a child
interpreter (`compile_here`), which keeps mypyc's and setuptools' output and global state out
of the caller.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from hashlib import sha256
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from .atomic import write_atomic

COMPILED = ("decoder.py", "sse.py", "jsonscan.c", "plainjson.c")
"""The modules compiled, by file name in the package: the decoder's per-event work, the C
scanner that decides, without parsing, that a member is JSON text, and the C parser that builds
the value of an event's plain JSON."""
SOURCE_SUFFIXES = (".py", ".c")
"""The suffixes of the package's top-level sources, which the manifest covers: its modules and
the C sources of its extension modules (`__init__` lists the same)."""
NATIVE = "_native"
"""The folder, inside the package, that holds the extension modules and their manifests."""
SUFFIX = EXTENSION_SUFFIXES[0]
"""This interpreter's extension suffix, which names its extension files and its manifest."""
MANIFEST = f"manifest{SUFFIX}.txt"
"""This interpreter's manifest in `NATIVE`; the package's `__init__` reads the same name and
format."""
GROUP = "_native"
"""mypyc's group: its shared library is `<package>._native__mypyc`, inside the package. It lies
in `NATIVE` itself and each compiled module's extension in `NATIVE/<package>/`, the layout mypyc's
runtime assumes of a group: a compiled module that another imports gets the `__file__` of the
library's folder joined with the module's dotted path, which is then the real file."""
MYPY_OPTIONS = ("--no-site-packages", "--ignore-missing-imports")
"""The compiled code is typed by the package alone, whatever else the interpreter has installed
(pydantic, which the sources name only for type checking), so every build is the same."""


class BuildError(Exception):
    """The compilation failed, or its result could not be kept; the message is the one-line
    reason."""


def mypy_version() -> str | None:
    """The installed mypy's version, or None when mypy (and so mypyc) is not installed."""
    try:
        from mypy.version import __version__
    except ImportError:
        return None
    return __version__


def extension_files(package: str, modules: Sequence[str]) -> set[str]:
    """The files a build of `package`'s `modules` puts in `NATIVE` for this interpreter, by path
    in it: the group's shared library, and one extension a module in the folder `package`."""
    return ({f"{package}/{name.rpartition('.')[0]}{SUFFIX}" for name in modules}
            | {f"{GROUP}__mypyc{SUFFIX}"})


def present_files(native: Path, package: str) -> set[str]:
    """This interpreter's extension files in `native` and in its folder `package`, by path in
    `native` (so that `extension_files` says whether they are a whole build)."""
    return {path.relative_to(native).as_posix() for folder in (native, native / package)
            for path in folder.glob(f"*{SUFFIX}")}


def manifest(package: Path, modules: Sequence[str], mypy: str) -> str:
    """The manifest of a build of `package`'s sources: one `key value...` line a fact, so that
    `__init__` reads it with str.split, without importing json. A line `source NAME SIZE
    MTIME_NS SHA256` a top-level source (of `SOURCE_SUFFIXES`): the loader hashes only a file
    whose size is the same and whose time of change is not, and writes the manifest again with
    the new times once it found the same content (`__init__`'s `_record_times`), which keeps
    `import llm_stream` from hashing the package."""
    lines = [f"suffix {SUFFIX}", f"mypy {mypy}", f"compiled {' '.join(modules)}"]
    for source in sorted(path for path in package.iterdir() if path.suffix in SOURCE_SUFFIXES):
        status = source.stat()
        digest = sha256(source.read_bytes()).hexdigest()
        lines.append(f"source {source.name} {status.st_size} {status.st_mtime_ns} {digest}")
    return "\n".join(lines) + "\n"


def _facts(manifest: str) -> list[list[str]]:
    """What two manifests must share to describe one build: all but the files' times of change
    and sizes (a checkout changes the times, and the digest covers the size)."""
    lines = [line.split() for line in manifest.splitlines()]
    return [[line[0], line[1], line[4]] if line[:1] == ["source"] and len(line) == 5 else line
            for line in lines]


def is_current(package: Path, modules: Sequence[str] = COMPILED) -> bool:
    """Whether `package/_native/` holds, for this interpreter, a whole build of these sources by
    this mypy."""
    mypy = mypy_version()
    native = package / NATIVE
    try:
        present = (native / MANIFEST).read_text(encoding="utf-8")
        built = present_files(native, package.name)
    except (OSError, ValueError):
        return False
    return (mypy is not None and built == extension_files(package.name, modules)
            and _facts(present) == _facts(manifest(package, modules, mypy)))


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
            "__pycache__", NATIVE, "*.so", "*.pyd"))
        built_from = manifest(copy, modules, mypy)  # the copy keeps the files' times of change
        codegen = str(Path(__file__).resolve().parent.parent)
        command = [sys.executable, "-c", _CHILD, codegen, package.name, *modules]
        result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BuildError(_reason(result.stdout + result.stderr))
        built = sorted((Path(work) / "out" / package.name).glob(f"*{SUFFIX}"))
        places = {extension: _place(package.name, extension.name) for extension in built}
        if set(places.values()) != extension_files(package.name, modules):
            raise BuildError("the compiler did not produce the extension modules expected")
        (into / package.name).mkdir(parents=True)
        for extension, place in places.items():
            shutil.copy2(extension, into / place)
        (into / MANIFEST).write_text(built_from, encoding="utf-8")


def _place(package: str, extension: str) -> str:
    """Where in `NATIVE` an extension file that setuptools built into the package goes: the
    group's library at the top, a module's in the folder `package`."""
    return extension if extension.startswith(f"{GROUP}__mypyc") else f"{package}/{extension}"


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
    """Bring this interpreter's build in `package/_native/` up to date with the sources, holding
    `root`'s write lock: nothing to do when it is current; else compile, then `_put_in_place`.
    Returns what was done, in one line; raises BuildError (with `_native/` as it was) when the
    build fails or the tree cannot be written."""
    from .journal import project_lock  # here: journal's output module imports this one

    native = package / NATIVE
    if is_current(package, modules):
        return f"{native} is up to date"
    written = native if native.exists() else package
    if not os.access(written, os.W_OK):  # before half a minute of compiling for nothing
        raise BuildError(f"{written} is not writable, so no build can be kept there")
    try:
        with project_lock(root, exclusive=True):
            if is_current(package, modules):  # built by the install that held the lock before
                return f"{native} is up to date"
            with tempfile.TemporaryDirectory(prefix="llm-stream-build-") as work:
                compile_modules(package, Path(work) / NATIVE, modules)
                _put_in_place(Path(work) / NATIVE, native, package.name)
    except OSError as exc:
        raise BuildError(f"the build could not be kept in {native}: {exc}") from exc
    return f"compiled {', '.join(modules)} into {native}"


def _put_in_place(build: Path, native: Path, package: str) -> None:
    """Replace this interpreter's files in `native` by `build`'s, leaving other interpreters'
    alone: its manifest goes first and comes back last, so that a kill at any point leaves
    either no manifest for this interpreter (pure, rebuilt by the next install) or a whole
    build. Each extension file is renamed into place, so a process that loaded the old one
    keeps it mapped."""
    native.mkdir(exist_ok=True)
    (native / MANIFEST).unlink(missing_ok=True)
    for folder in (native, native / package):  # write_atomic's and the loader's temporary
        for leftover in folder.glob(f".*{SUFFIX}*"):  # files, of a process killed
            leftover.unlink()
    for place in sorted(present_files(build, package)):
        write_atomic(native / place, (build / place).read_bytes())
    for old in present_files(native, package) - present_files(build, package):
        (native / old).unlink()
    write_atomic(native / MANIFEST, (build / MANIFEST).read_bytes())


_CHILD = ("import sys; sys.path.insert(0, sys.argv[1]); "
          "from llm_stream_codegen.native import compile_here; "
          "compile_here(sys.argv[2], sys.argv[3:])")
"""The child's program. It puts the builder's folder on its path itself: pip's isolated build
environment starts each interpreter with a sitecustomize that drops every path the
interpreter's own site-packages add, an editable install of this project's among them, and
PYTHONPATH's entries with them."""


def compile_here(package: str, modules: Sequence[str]) -> None:
    """The child's work, in the folder that holds the package's copy: mypyc writes the C code
    of the Python modules to `c/`, setuptools compiles it, and each C source as the extension
    module of its name, to `out/<package>/`."""
    from mypyc.build import mypycify
    from setuptools import Extension, setup

    python = [f"{package}/{name}" for name in modules if name.endswith(".py")]
    extensions = mypycify([*MYPY_OPTIONS, *python], opt_level="3",
                          group_name=f"{package}.{GROUP}", target_dir="c")
    extensions += [Extension(f"{package}.{name.removesuffix('.c')}", [f"{package}/{name}"])
                   for name in modules if name.endswith(".c")]
    setup(name=f"{package}-native", ext_modules=extensions, script_args=[
        "--quiet", "build_ext", "--build-lib", "out", "--build-temp", "temp"])
