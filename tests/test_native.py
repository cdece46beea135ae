"""The compiled modules: built by mypyc for real, loaded only while they match their sources.

The loader's cases build one small module into a copy of the package's `__init__` (a few seconds,
where the decoder's two modules take half a minute of CPU): the loader reads the manifest's list
of modules, so what it does is the same. The decoder's own build is the one the install made,
and `test_this_environment_runs_the_compiled_decoder` holds the test run to it, so that a machine
with a C compiler never tests pure Python alone without saying so.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import llm_stream
import llm_stream_codegen
from llm_stream_codegen.journal import project_lock
from llm_stream_codegen.native import (
    MANIFEST,
    NATIVE,
    STAGING,
    BuildError,
    install,
    is_current,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "generated" / "python" / "llm_stream"
MODULES = ("small.py",)
SMALL = "def double(x: int) -> int:\n    return x * 2\n"
REPORT = ("import llm_stream, llm_stream.small as small\n"
          "print(llm_stream.implementation(), small.__file__, type(small.double).__name__, "
          "small.double(21))")


def _package(root: Path, source: str = SMALL) -> Path:
    """A package `llm_stream` under `root`: the bindings' own `__init__` and a small module."""
    package = root / "llm_stream"
    package.mkdir(parents=True)
    shutil.copy2(PACKAGE / "__init__.py", package / "__init__.py")
    (package / "small.py").write_text(source)
    return package


def _python(root: Path, code: str, **env: str) -> list[str]:
    """The words `code` prints in a fresh interpreter with `root` first on its path (and
    LLM_STREAM_PURE unset unless `env` sets it)."""
    environment = {key: value for key, value in os.environ.items() if key != "LLM_STREAM_PURE"}
    environment.update(PYTHONPATH=str(root), **env)
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                            text=True, check=True)
    return result.stdout.split()


def _loaded(root: Path, **env: str) -> list[str]:
    """The implementation, the small module's file, its function's type and a call's result."""
    return _python(root, REPORT, **env)


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root whose package has a fresh build of its small module."""
    root = tmp_path_factory.mktemp("built")
    package = _package(root)
    assert install(package, root, MODULES) == f"compiled small.py into {package / NATIVE}"
    return root


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Path:
    """The built root, copied, to change without touching the others' build."""
    shutil.copytree(built, tmp_path / "root")
    return tmp_path / "root"


def test_a_fresh_build_is_loaded(built: Path) -> None:
    implementation, file, kind, result = _loaded(built)
    assert implementation == "compiled"
    assert Path(file) == built / "llm_stream" / NATIVE / f"small{EXTENSION_SUFFIXES[0]}"
    assert (kind, result) == ("builtin_function_or_method", "42")
    manifest = (built / "llm_stream" / NATIVE / MANIFEST).read_text().splitlines()
    assert manifest[0] == f"suffix {EXTENSION_SUFFIXES[0]}"
    assert manifest[2].startswith("sha256 small.py ")


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


@pytest.mark.parametrize("line", ["suffix .cpython-299-elsewhere.so", "suffix"])
def test_a_build_for_another_interpreter_is_not_loaded(copy: Path, line: str) -> None:
    manifest = copy / "llm_stream" / NATIVE / MANIFEST
    manifest.write_text(manifest.read_text().replace(f"suffix {EXTENSION_SUFFIXES[0]}", line))
    assert _loaded(copy)[:2] == ["pure", str(copy / "llm_stream" / "small.py")]


@pytest.mark.parametrize(("value", "implementation"),
                         [("1", "pure"), ("yes", "pure"), ("0", "compiled"), ("", "compiled")])
def test_LLM_STREAM_PURE_chooses_the_pure_modules(
        built: Path, value: str, implementation: str) -> None:
    assert _loaded(built, LLM_STREAM_PURE=value)[0] == implementation


def test_version_names_the_implementation() -> None:
    command = [sys.executable, "-m", "llm_stream_codegen.cli", "--version"]
    pure = subprocess.run(command, env={**os.environ, "LLM_STREAM_PURE": "1"},
                          capture_output=True, text=True, check=True)
    assert pure.stdout.endswith("; decoder: pure)\n")


def test_a_build_waits_for_the_projects_lock(copy: Path) -> None:
    """The build writes the tree, so it holds the lock that `generate` and `registry add` take;
    one that finds it held waits, saying so, and builds once it is free."""
    package = copy / "llm_stream"
    (package / "small.py").write_text(SMALL.replace("2", "3"))
    code = ("import sys; from pathlib import Path; from llm_stream_codegen.native import install;"
            "print(install(Path(sys.argv[1]), Path(sys.argv[2]), ('small.py',)))")
    with project_lock(copy, exclusive=True):
        child = subprocess.Popen([sys.executable, "-c", code, str(package), str(copy)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stderr is not None
        assert "waiting for another llm-stream command" in child.stderr.readline()
        assert child.poll() is None and not is_current(package, MODULES)
    output, _ = child.communicate(timeout=300)
    assert (child.returncode, output) == (0, f"compiled small.py into {package / NATIVE}\n")
    extension = package / NATIVE / f"small{EXTENSION_SUFFIXES[0]}"
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
    assert install(package, root, MODULES) == f"compiled small.py into {package / NATIVE}"


FAILURES = {
    "a type error": ({}, SMALL + "WRONG: int = 'text'\n", "small.py:3: error: Incompatible"),
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
    assert not any((package / name).exists() for name in STAGING)
    assert _loaded(copy)[0] == "pure"


def _c_compiler() -> str | None:
    """The C compiler that setuptools would call (CC, else the interpreter's), if installed."""
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(shlex.split(compiler)[0])


def test_this_environment_runs_the_compiled_decoder() -> None:
    if os.environ.get("LLM_STREAM_PURE", "") not in ("", "0"):
        pytest.skip("LLM_STREAM_PURE is set: this run tests the pure modules on purpose")
    if _c_compiler() is None:
        pytest.skip("no C compiler here, so the install could not compile the decoder")
    package = Path(llm_stream.__file__).parent
    assert llm_stream.implementation() == "compiled", (
        f"{package / NATIVE} is missing or stale: reinstall the project (`pip install -e .`, "
        "or `nox`, which reinstalls it) to compile the decoder's modules")
    from llm_stream import decoder, sse

    for module in (decoder, sse):
        assert module.__file__ is not None and module.__file__.endswith(EXTENSION_SUFFIXES[0])
