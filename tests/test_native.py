"""The compiled modules: built by mypyc for real, loaded only while they match their sources.

The loader's cases build one small module into a copy of the package's `__init__` (a few seconds,
where the decoder's two modules take half a minute of CPU): the loader reads the manifest's list
of modules, so what it does is the same. The decoder's own build is the one the install made,
and `test_this_environment_runs_the_compiled_decoder` holds the test run to it, so that a machine
with a C compiler never tests pure Python alone without saying so.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import llm_stream
import llm_stream_codegen
from llm_stream_codegen.journal import project_lock
from llm_stream_codegen.native import COMPILED as PACKAGE_COMPILED
from llm_stream_codegen.native import (
    MANIFEST,
    NATIVE,
    SOURCE_SUFFIXES,
    BuildError,
    install,
    is_current,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "generated" / "python" / "llm_stream"
MODULES = ("caller.py", "small.py")
"""Two compiled modules, the first importing the second: mypyc's runtime, not the import
system, loads a module that another of its group imports, and gives it its `__file__`."""
COMPILED = f"compiled {', '.join(MODULES)} into"
"""What an install that compiled says, before the folder it compiled into."""
SUFFIX = EXTENSION_SUFFIXES[0]
CALLER = ("from .small import double\n\n\n"
          "def quadruple(x: int) -> int:\n    return double(double(x))\n")
SMALL = ("from .limits import LIMIT\n\n\ndef double(x: int) -> int:\n    return x * 2\n\n\n"
         "def limit() -> int:\n    return LIMIT\n")
LIMITS = "from typing import Final\n\nLIMIT: Final = 20\n"
"""A module the compiled one imports, not compiled itself: mypyc inlines its `Final` constant."""
REPORT = ("import llm_stream, llm_stream.small as small\n"
          "print(llm_stream.implementation(), small.__file__, type(small.double).__name__, "
          "small.double(21))")
OTHER = ".cpython-399-elsewhere.so"
"""Another interpreter's extension suffix."""


def _package(root: Path, source: str = SMALL) -> Path:
    """A package `llm_stream` under `root`: the bindings' own `__init__`, a small module, a
    module that calls it and the module of constants it imports."""
    package = root / "llm_stream"
    package.mkdir(parents=True)
    shutil.copy2(PACKAGE / "__init__.py", package / "__init__.py")
    (package / "caller.py").write_text(CALLER)
    (package / "small.py").write_text(source)
    (package / "limits.py").write_text(LIMITS)
    return package


def _environment(root: Path, **env: str) -> dict[str, str]:
    """This process's environment with `root` first on the path (and LLM_STREAM_PURE unset
    unless `env` sets it)."""
    environment = {key: value for key, value in os.environ.items() if key != "LLM_STREAM_PURE"}
    environment.update(PYTHONPATH=str(root), **env)
    return environment


def _python(root: Path, code: str, umask: int = -1, **env: str) -> list[str]:
    """The words `code` prints in a fresh interpreter with `root` first on its path."""
    result = subprocess.run([sys.executable, "-c", code], env=_environment(root, **env),
                            capture_output=True, text=True, check=True, umask=umask)
    return result.stdout.split()


def _loaded(root: Path, **env: str) -> list[str]:
    """The implementation, the small module's file, its function's type and a call's result."""
    return _python(root, REPORT, **env)


HASHED = ("import sys\nopened = []\n"
          "sys.addaudithook(lambda event, args: event == 'open' and opened.append(args[0]))\n"
          "import llm_stream\n"
          "names = {str(path).rsplit('/', 1)[-1] for path in opened}\n"
          "print(llm_stream.implementation(), *sorted(name for name in names "
          "if name.endswith('.py') and name != '__init__.py'))")
"""Prints the implementation and the sources the loader hashed, but for `__init__.py`, which
the import system opens too: the package's other modules, which only the loader opens."""
SOURCES = ["caller.py", "limits.py", "small.py"]


def _hashed(root: Path, umask: int = -1) -> list[str]:
    """The implementation `import llm_stream` chose, then the sources it hashed to choose."""
    return _python(root, HASHED, umask=umask)


def _moved_back(package: Path) -> None:
    """Give every source of `package` another time of change, a minute older, as an installer
    gives them new ones, their content unchanged."""
    for source in package.glob("*.py"):
        status = source.stat()
        os.utime(source, ns=(status.st_atime_ns, status.st_mtime_ns - 60 * 10**9))


def _with_times_of(package: Path, manifest: str) -> str:
    """`manifest` with the sources' times of change in `package` now."""
    lines = [line.split() for line in manifest.splitlines()]
    for words in lines:
        if words[0] == "source":
            words[3] = str((package / words[1]).stat().st_mtime_ns)
    return "".join(" ".join(words) + "\n" for words in lines)


def _files(folder: Path) -> dict[str, bytes]:
    """The files under `folder`, by path in it, with their content."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root whose package has a fresh build of its small module."""
    root = tmp_path_factory.mktemp("built")
    package = _package(root)
    assert install(package, root, MODULES) == f"{COMPILED} {package / NATIVE}"
    return root


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Path:
    """The built root, copied, to change without touching the others' build."""
    shutil.copytree(built, tmp_path / "root")
    return tmp_path / "root"


def test_a_fresh_build_is_loaded(built: Path) -> None:
    implementation, file, kind, result = _loaded(built)
    assert implementation == "compiled"
    assert Path(file) == built / "llm_stream" / NATIVE / "llm_stream" / f"small{SUFFIX}"
    assert (kind, result) == ("builtin_function_or_method", "42")
    manifest = (built / "llm_stream" / NATIVE / f"manifest{SUFFIX}.txt"
                ).read_text().splitlines()
    assert manifest[0] == f"suffix {SUFFIX}"
    assert manifest[2] == "compiled caller.py small.py"
    assert [line.split()[1] for line in manifest[3:]] == [
        "__init__.py", "caller.py", "limits.py", "small.py"]


def test_a_module_another_compiled_one_imports_names_its_real_file(built: Path) -> None:
    """mypyc's runtime loads `small` for `caller`, and names its file after the group's library:
    the library's folder joined with the module's dotted path, which the build's layout makes
    the extension's own path."""
    code = ("import llm_stream.caller as caller, llm_stream.small as small\n"
            "print(caller.quadruple(5), small.__file__, small.__spec__.origin, caller.__file__)")
    result, *files = _python(built, code)
    assert result == "20"
    folder = built / "llm_stream" / NATIVE / "llm_stream"
    assert [Path(file) for file in files] == [
        folder / f"small{SUFFIX}", folder / f"small{SUFFIX}", folder / f"caller{SUFFIX}"]
    assert all(Path(file).is_file() for file in files)


def test_checking_the_build_loads_no_openssl(built: Path) -> None:
    """The check runs at every `import llm_stream`: it hashes with CPython's built-in sha256,
    since `hashlib` loads OpenSSL, which costs more than the rest of the import."""
    code = "import sys, llm_stream\nprint(llm_stream.implementation(), '_hashlib' in sys.modules)"
    assert _python(built, code) == ["compiled", "False"]


def test_a_second_install_of_the_same_sources_builds_nothing(copy: Path) -> None:
    package = copy / "llm_stream"
    before = (package / NATIVE).stat().st_ino, _files(package / NATIVE)
    assert install(package, copy, MODULES) == f"{package / NATIVE} is up to date"
    assert ((package / NATIVE).stat().st_ino, _files(package / NATIVE)) == before


def test_a_changed_source_falls_back_to_the_pure_module(copy: Path) -> None:
    source = copy / "llm_stream" / "small.py"
    source.write_text(SMALL.replace("x * 2", "x + x"))
    implementation, file, kind, result = _loaded(copy)
    assert (implementation, Path(file), kind, result) == ("pure", source, "function", "42")
    assert not is_current(copy / "llm_stream", MODULES)


@pytest.mark.parametrize("line", [f"suffix {OTHER}", "suffix"])
def test_a_build_for_another_interpreter_is_not_loaded(copy: Path, line: str) -> None:
    manifest = copy / "llm_stream" / NATIVE / MANIFEST
    manifest.write_text(manifest.read_text().replace(f"suffix {SUFFIX}", line))
    assert _loaded(copy)[:2] == ["pure", str(copy / "llm_stream" / "small.py")]


@pytest.mark.parametrize(("value", "implementation"),
                         [("1", "pure"), ("yes", "pure"), ("0", "compiled"), ("", "compiled")])
def test_LLM_STREAM_PURE_chooses_the_pure_modules(
        built: Path, value: str, implementation: str) -> None:
    assert _loaded(built, LLM_STREAM_PURE=value)[0] == implementation


def test_a_change_of_a_module_the_compiled_one_imports_makes_the_build_stale(
        copy: Path) -> None:
    """mypyc compiled the constant of `limits` into `small`: a build that outlived a change of
    `limits` would go on using the old value."""
    code = "import llm_stream, llm_stream.small as small\nprint(small.limit())"
    assert _python(copy, code) == ["20"]
    (copy / "llm_stream" / "limits.py").write_text(LIMITS.replace("20", "200"))
    assert _python(copy, code) == ["200"]
    assert _loaded(copy)[0] == "pure" and not is_current(copy / "llm_stream", MODULES)


def test_a_module_added_to_the_package_makes_the_build_stale(copy: Path) -> None:
    (copy / "llm_stream" / "added.py").write_text("ADDED = 1\n")
    assert _loaded(copy)[0] == "pure"


def test_a_source_with_a_new_time_of_change_and_the_same_content_still_matches(
        copy: Path) -> None:
    """A checkout rewrites the files: the loader then hashes them, and finds the same sources."""
    for source in (copy / "llm_stream").glob("*.py"):
        os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    assert _loaded(copy)[0] == "compiled" and is_current(copy / "llm_stream", MODULES)


def test_new_times_of_the_same_sources_are_recorded_so_that_only_one_import_hashes(
        copy: Path) -> None:
    """An installer gives every file a new time of change. The first import hashes the sources
    and finds them alike, so it writes their times into the manifest (keeping its mode whatever
    the umask, and leaving no temporary file), and the next hashes nothing."""
    package = copy / "llm_stream"
    native = package / NATIVE
    (native / MANIFEST).chmod(0o644)
    built = (native / MANIFEST).read_text()
    _moved_back(package)
    assert _hashed(copy, umask=0o077) == ["compiled", *SOURCES]
    assert _hashed(copy) == ["compiled"]
    assert (native / MANIFEST).read_text() == _with_times_of(package, built) != built
    assert (native / MANIFEST).stat().st_mode & 0o777 == 0o644
    assert not [name for name in _files(native) if name.split("/")[-1].startswith(".")]
    assert is_current(package, MODULES)


def test_a_source_changed_after_its_time_was_recorded_is_not_loaded(copy: Path) -> None:
    """The times recorded vouch only for the content hashed: a source written again (of the
    same size) has another time, so it is hashed, and the build is stale; the manifest is left
    as it was."""
    package = copy / "llm_stream"
    _moved_back(package)
    assert _hashed(copy) == ["compiled", *SOURCES]
    recorded = (package / NATIVE / MANIFEST).read_bytes()
    edited = SMALL.replace("x * 2", "x + x")
    assert len(edited) == len(SMALL)
    (package / "small.py").write_text(edited)
    assert _loaded(copy) == ["pure", str(package / "small.py"), "function", "42"]
    assert _hashed(copy) == ["pure", "small.py"]
    assert (package / NATIVE / MANIFEST).read_bytes() == recorded


def test_a_time_of_change_not_yet_settled_is_hashed_again(copy: Path) -> None:
    """A file written again within one tick of its file system's clock can keep its time with
    another content of the same size, so the manifest records only times at least 2 s old;
    younger ones, or ones ahead of the clock, are hashed at each import."""
    package = copy / "llm_stream"
    recorded = (package / NATIVE / MANIFEST).read_bytes()
    ahead = time.time_ns() + 60 * 10**9
    for source in package.glob("*.py"):
        os.utime(source, ns=(ahead, ahead))
    assert _hashed(copy) == ["compiled", *SOURCES]
    assert _hashed(copy) == ["compiled", *SOURCES]
    assert (package / NATIVE / MANIFEST).read_bytes() == recorded


def test_an_unwritable_build_is_hashed_at_each_import_without_a_word(copy: Path) -> None:
    """A site-packages the importing user cannot write keeps its manifest: each import hashes
    the sources, loads the build all the same and says nothing. Run as root, whom no mode
    stops, the imports run without root's capabilities (setpriv)."""
    package = copy / "llm_stream"
    _moved_back(package)
    native = package / NATIVE
    files = _files(native)
    native.chmod(0o555)
    try:
        results = [subprocess.run([*_unprivileged(), sys.executable, "-c", HASHED],
                                  env=_environment(copy), capture_output=True, text=True,
                                  check=False) for _ in range(2)]
    finally:
        native.chmod(0o755)
    assert [(result.returncode, result.stderr, result.stdout.split()) for result in results] == [
        (0, "", ["compiled", *SOURCES])] * 2
    assert _files(native) == files


def test_processes_importing_at_once_leave_a_whole_manifest(copy: Path) -> None:
    """Each process that records the times writes its own temporary file and renames it over
    the manifest, so processes importing at once leave one whole manifest, and nothing else."""
    package = copy / "llm_stream"
    built = (package / NATIVE / MANIFEST).read_text()
    _moved_back(package)
    children = [subprocess.Popen([sys.executable, "-c", HASHED], env=_environment(copy),
                                 stdout=subprocess.PIPE, text=True) for _ in range(8)]
    chosen = [child.communicate(timeout=120)[0].split()[0] for child in children]
    assert chosen == ["compiled"] * 8
    assert (package / NATIVE / MANIFEST).read_text() == _with_times_of(package, built)
    assert sorted(_files(package / NATIVE)) == sorted(
        [MANIFEST, f"_native__mypyc{SUFFIX}", f"llm_stream/caller{SUFFIX}",
         f"llm_stream/small{SUFFIX}"])
    assert _hashed(copy) == ["compiled"]


def test_times_are_not_recorded_over_a_manifest_replaced_meanwhile(tmp_path: Path) -> None:
    """An install may replace the manifest while an import hashes the sources: the import then
    leaves the install's manifest, which describes the build beside it."""
    manifest = tmp_path / MANIFEST
    manifest.write_text("suffix S\nsource a.py 1 5 new\n")
    llm_stream._record_times(str(manifest), "suffix S\nsource a.py 1 4 old\n", {"a.py": 3})
    assert manifest.read_text() == "suffix S\nsource a.py 1 5 new\n"
    assert os.listdir(tmp_path) == [MANIFEST]


def test_another_interpreters_build_is_left_alone(copy: Path) -> None:
    """Two interpreters sharing the tree (a venv and a nox session's) each keep their build:
    an install replaces its own interpreter's files only."""
    native = copy / "llm_stream" / NATIVE
    theirs = {f"llm_stream/small{OTHER}": b"their module",
              f"_native__mypyc{OTHER}": b"their library",
              f"manifest{OTHER}.txt": f"suffix {OTHER}\n".encode()}
    for name, content in theirs.items():
        (native / name).write_bytes(content)
    assert _loaded(copy)[0] == "compiled"
    (copy / "llm_stream" / "small.py").write_text(SMALL.replace("x * 2", "x + x"))
    assert install(copy / "llm_stream", copy, MODULES) == f"{COMPILED} {native}"
    assert {name: (native / name).read_bytes() for name in theirs} == theirs
    assert _loaded(copy)[0] == "compiled"


def test_an_install_after_an_interrupted_one_leaves_only_its_build(copy: Path) -> None:
    """An install killed after it removed its manifest leaves no manifest: pure until the next
    install, which removes the files of this interpreter that its build does not have (a
    module's extension where an older layout put it among them) and the temporary files a
    killed process left."""
    native = copy / "llm_stream" / NATIVE
    (native / MANIFEST).unlink()
    (native / "llm_stream" / f"gone{SUFFIX}").write_bytes(b"of an older build")
    (native / f"small{SUFFIX}").write_bytes(b"of the older layout")
    (native / "llm_stream" / f".small{SUFFIX}.x1y2z3").write_bytes(b"half written")
    (native / f".{MANIFEST}.12345").write_bytes(b"half written by an import")
    assert _loaded(copy)[0] == "pure"
    install(copy / "llm_stream", copy, MODULES)
    assert sorted(path.relative_to(native).as_posix() for path in native.rglob("*")) == sorted(
        [MANIFEST, "llm_stream", f"llm_stream/caller{SUFFIX}", f"llm_stream/small{SUFFIX}",
         f"_native__mypyc{SUFFIX}"])
    assert _loaded(copy)[0] == "compiled"


TWICE_C = """#include <Python.h>

static PyObject *twice(PyObject *module, PyObject *x) { return PyNumber_Add(x, x); }
static PyMethodDef methods[] = {{"twice", twice, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "llm_stream.twice", NULL, 0, methods};
PyMODINIT_FUNC PyInit_twice(void) { return PyModule_Create(&module); }
"""
"""A C source: the extension module `twice`, which stands for the pure module of its name."""
TWICE_PY = "def twice(x: int) -> int:\n    return x + x\n"
WITH_C = (*MODULES, "twice.c")
TWICE = ("import llm_stream, llm_stream.twice as twice\n"
         "print(llm_stream.implementation(), twice.__file__, type(twice.twice).__name__, "
         "twice.twice(21))")


@pytest.fixture(scope="module")
def built_with_c(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root whose package has a fresh build of its small module and of a C source."""
    root = tmp_path_factory.mktemp("built_with_c")
    package = _package(root)
    (package / "twice.c").write_text(TWICE_C)
    (package / "twice.py").write_text(TWICE_PY)
    assert install(package, root, WITH_C) == (
        f"compiled {', '.join(WITH_C)} into {package / NATIVE}")
    return root


def test_a_c_source_is_built_into_the_extension_module_of_its_name(built_with_c: Path) -> None:
    """The C source's extension lies beside the compiled modules, in place of the pure module
    of its name, and the manifest covers the source as it covers the modules."""
    package = built_with_c / "llm_stream"
    assert _python(built_with_c, TWICE) == [
        "compiled", str(package / NATIVE / "llm_stream" / f"twice{SUFFIX}"),
        "builtin_function_or_method", "42"]
    assert _python(built_with_c, TWICE, LLM_STREAM_PURE="1") == [
        "pure", str(package / "twice.py"), "function", "42"]
    manifest = (package / NATIVE / MANIFEST).read_text().splitlines()
    assert manifest[2] == "compiled caller.py small.py twice.c"
    assert [line.split()[1] for line in manifest[3:]] == [
        "__init__.py", "caller.py", "limits.py", "small.py", "twice.c", "twice.py"]
    assert is_current(package, WITH_C)


@pytest.mark.parametrize("change", ["edited", "removed"])
def test_a_changed_c_source_makes_the_build_stale(
        built_with_c: Path, tmp_path: Path, change: str) -> None:
    """The extension of an edited C source is never loaded: the pure module of its name is."""
    shutil.copytree(built_with_c, tmp_path / "root")
    package = tmp_path / "root" / "llm_stream"
    if change == "edited":
        (package / "twice.c").write_text(TWICE_C.replace("PyNumber_Add(x, x)",
                                                         "PyNumber_Multiply(x, x)"))
    else:
        (package / "twice.c").unlink()
    assert _python(tmp_path / "root", TWICE) == [
        "pure", str(package / "twice.py"), "function", "42"]
    assert not is_current(package, WITH_C)


def test_a_c_source_added_to_the_package_makes_the_build_stale(copy: Path) -> None:
    (copy / "llm_stream" / "added.c").write_text(TWICE_C)
    assert _loaded(copy)[0] == "pure"
    assert not is_current(copy / "llm_stream", MODULES)


def test_a_c_source_that_does_not_compile_leaves_the_package_pure_in_one_line(
        tmp_path: Path) -> None:
    """The compiler's first error, naming the C source and its line, is the one line the build
    says, and nothing is built: the Python modules compiled beside it are not kept either."""
    package = _package(tmp_path)
    (package / "twice.c").write_text(TWICE_C.replace("return PyNumber_Add(x, x);",
                                                     "return PyNumber_Add(x, x)"))
    (package / "twice.py").write_text(TWICE_PY)
    with pytest.raises(BuildError) as raised:
        install(package, tmp_path, WITH_C)
    assert "\n" not in str(raised.value)
    assert re.search(r"twice\.c:3:\d+: error: ", str(raised.value)), str(raised.value)
    assert not (package / NATIVE).exists()
    assert _python(tmp_path, TWICE) == ["pure", str(package / "twice.py"), "function", "42"]


def test_uv_installs_again_after_a_change_of_any_source_the_manifest_covers() -> None:
    """uv runs the build hook again only when a file of its cache keys changed: they cover every
    kind of source the manifest does, so that an edited C source is compiled anew, not left
    stale (and pure) by the next install."""
    keys = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["cache-keys"]
    files = {key["file"] for key in keys}
    package = PACKAGE.relative_to(ROOT).as_posix()
    assert {f"{package}/*{suffix}" for suffix in SOURCE_SUFFIXES} <= files


@pytest.mark.parametrize("change", ["an extension added", "an extension missing",
                                    "an extension outside its folder", "another list of modules",
                                    "a manifest not UTF-8"])
def test_a_build_whose_files_are_not_its_manifests_is_not_loaded(
        copy: Path, change: str) -> None:
    """The loader trusts the manifest only as far as `_native/` holds, for this interpreter,
    exactly the files of the build it describes; any doubt means pure, never a traceback."""
    native = copy / "llm_stream" / NATIVE
    small = native / "llm_stream" / f"small{SUFFIX}"
    manifest = native / MANIFEST
    if change == "an extension added":
        shutil.copy2(small, native / "llm_stream" / f"limits{SUFFIX}")
    elif change == "an extension missing":
        small.unlink()
    elif change == "an extension outside its folder":
        small.rename(native / small.name)
    elif change == "another list of modules":
        manifest.write_text(manifest.read_text().replace("small.py\n", "small.py limits.py\n"))
    else:
        manifest.write_bytes(b"\xff\xfe" + manifest.read_bytes())
    assert _loaded(copy)[:2] == ["pure", str(copy / "llm_stream" / "small.py")]
    assert not is_current(copy / "llm_stream", MODULES)


def _unprivileged() -> list[str]:
    """The words that run a command without root's capabilities, for a mode to stop it as it
    stops any other user (none when not root); skips the test where that cannot be done."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("run as root without setpriv, which could drop root's capabilities")
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all", "--"]


def test_an_unwritable_tree_is_left_pure_in_one_line(tmp_path: Path) -> None:
    """An install into a tree it cannot write (read-only, or another user's) says so before
    compiling anything, and the install goes on pure. Run as root, whom no mode stops, the
    install runs without root's capabilities (setpriv)."""
    code = ("import sys; from pathlib import Path; "
            "from llm_stream_codegen.native import BuildError, install\n"
            f"try:\n    install(Path(sys.argv[1]), Path(sys.argv[2]), {MODULES!r})\n"
            "except BuildError as exc:\n    print(exc)")
    package = _package(tmp_path)
    package.chmod(0o555)
    try:
        result = subprocess.run(
            [*_unprivileged(), sys.executable, "-c", code, str(package), str(tmp_path)],
            capture_output=True, text=True, timeout=300, check=False)
    finally:
        package.chmod(0o755)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"{package} is not writable, so no build can be kept there\n"
    assert not (package / NATIVE).exists()


@pytest.mark.parametrize("pure", [True, False], ids=["pure", "as installed"])
def test_version_names_the_implementation(pure: bool) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "LLM_STREAM_PURE"}
    if pure:
        environment["LLM_STREAM_PURE"] = "1"
    loaded = subprocess.run([sys.executable, "-c", "import llm_stream\n"
                             "print(llm_stream.implementation())"], env=environment,
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ("pure" if pure else _installed_implementation())
    command = [sys.executable, "-m", "llm_stream_codegen.cli", "--version"]
    version = subprocess.run(command, env=environment, capture_output=True, text=True,
                             check=True)
    assert version.stdout.endswith(f"; decoder: {loaded})\n")


def test_a_build_waits_for_the_projects_lock(copy: Path) -> None:
    """The build writes the tree, so it holds the lock that `generate` and `registry add` take;
    one that finds it held waits, saying so, and builds once it is free."""
    package = copy / "llm_stream"
    (package / "small.py").write_text(SMALL.replace("2", "3"))
    code = ("import sys; from pathlib import Path; from llm_stream_codegen.native import install;"
            f"print(install(Path(sys.argv[1]), Path(sys.argv[2]), {MODULES!r}))")
    with project_lock(copy, exclusive=True):
        child = subprocess.Popen([sys.executable, "-c", code, str(package), str(copy)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stderr is not None
        assert "waiting for another llm-stream command" in child.stderr.readline()
        assert child.poll() is None and not is_current(package, MODULES)
    output, _ = child.communicate(timeout=300)
    assert (child.returncode, output) == (0, f"{COMPILED} {package / NATIVE}\n")
    extension = package / NATIVE / "llm_stream" / f"small{SUFFIX}"
    assert _loaded(copy)[:2] == ["compiled", str(extension)]


def test_the_build_finds_its_builder_where_pip_hides_the_projects_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip builds in an environment whose interpreters start with a sitecustomize (found
    through PYTHONPATH) that drops every path the interpreter's own site-packages add: a
    reinstall over an editable install of this project loses its `codegen` folder there."""
    codegen = Path(llm_stream_codegen.__file__).resolve().parent.parent
    hiding = tmp_path / "hiding"
    hiding.mkdir()
    (hiding / "sitecustomize.py").write_text(
        "import os, sys\n"
        f"sys.path[:] = [p for p in sys.path if os.path.realpath(p) != {str(codegen)!r}]\n")
    monkeypatch.setenv("PYTHONPATH", str(hiding))
    root = tmp_path / "root"
    package = _package(root)
    assert install(package, root, MODULES) == f"{COMPILED} {package / NATIVE}"


FAILURES = {
    "a type error": ({}, SMALL + "WRONG: int = 'text'\n",
                     f"small.py:{len(SMALL.splitlines()) + 1}: error: Incompatible"),
    "no C compiler": ({"CC": "/nonexistent/cc"}, SMALL.replace("2", "3"), "/nonexistent/cc"),
}


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
@pytest.mark.parametrize("before", ["a build", "no build"])
def test_a_failed_build_leaves_native_as_it_was(
        copy: Path, monkeypatch: pytest.MonkeyPatch, failure: str, before: str) -> None:
    """A build that fails says why in one line; `_native/` stays the previous build (which, its
    sources changed, is no longer loaded) or absent, and no staging folder is left behind."""
    env, source, reason = FAILURES[failure]
    package = copy / "llm_stream"
    if before == "no build":
        shutil.rmtree(package / NATIVE)
    kept = _files(package / NATIVE) if before == "a build" else None
    (package / "small.py").write_text(source)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(BuildError) as raised:
        install(package, copy, MODULES)
    assert "\n" not in str(raised.value) and reason in str(raised.value)
    assert (_files(package / NATIVE) if (package / NATIVE).exists() else None) == kept
    assert not (package / NATIVE).exists() or not any(
        name.startswith(".") for name in os.listdir(package / NATIVE))
    assert _loaded(copy)[0] == "pure"


def _c_compiler() -> str | None:
    """The C compiler that setuptools would call (CC, else the interpreter's), if installed."""
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(shlex.split(compiler)[0])


def _python_headers() -> bool:
    """Whether this interpreter's C headers, which every extension module includes, are here."""
    return (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file()


def _installed_implementation() -> str:
    """What the install gives where it could compile: "compiled", else "pure"."""
    return "compiled" if _c_compiler() and _python_headers() else "pure"


def test_this_environment_runs_the_compiled_decoder() -> None:
    if os.environ.get("LLM_STREAM_PURE", "") not in ("", "0"):
        pytest.skip("LLM_STREAM_PURE is set: this run tests the pure modules on purpose")
    if _c_compiler() is None:
        pytest.skip("no C compiler here, so the install could not compile the decoder")
    if not _python_headers():
        pytest.skip(f"no Python.h in {sysconfig.get_paths()['include']} (the Python headers, "
                    "a package like python3-dev), so the install could not compile the decoder")
    package = Path(llm_stream.__file__).parent
    assert llm_stream.implementation() == "compiled", (
        f"{package / NATIVE} is missing or stale: reinstall the project (`pip install -e .`, "
        "or `nox`, which reinstalls it) to compile the decoder's modules")
    modules = [f"llm_stream.{name.rpartition('.')[0]}" for name in PACKAGE_COMPILED]
    code = (f"import {', '.join(modules)}\n"
            f"print({', '.join(f'{module}.__file__' for module in modules)})")
    files = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split()
    assert [Path(file).parent for file in files] == [package / NATIVE / "llm_stream"] * len(
        modules)
    assert all(Path(file).is_file() and file.endswith(SUFFIX) for file in files)
