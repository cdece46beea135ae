"""Sessions that regenerate and verify everything; plain `nox` runs all the verifying ones.

The verifying sessions share one virtualenv, `.nox/shared`, with the project (editable) and the
extras in `SHARED_EXTRAS`; it is made or brought up to date once per run, so that seven sessions
cost one install. They share work too: `docs` builds the site once into `site-build/`, and the
sessions that look at the site (`tests`, `docs_browser`) require it and read that build; the
round-trip tests run in `roundtrip` only, which `tests` requires instead of running them again.
Installing the project compiles the decoder's modules with mypyc (hatch_build.py) when their
sources changed since the last build, so every session runs the compiled decoder (which
tests/test_native.py asserts where there is a C compiler), and `pure` runs the decoder's tests
again on the pure-Python modules. A session with extras of its own (`bench`) keeps its own
virtualenv. To add a session that shares the environment, decorate it with `@verifying` (or
`@nox.session(venv_backend="none")` for one not run by default) and run its commands with
`shared.run`.

The pytest runs use every core (pytest-xdist), and the everyday run searches less deeply than
`fuzz`: property tests draw the examples their hypothesis settings name and `registry add` is
killed 6 times, where `fuzz` loads the hypothesis profile "long" (tests/conftest.py: five times
the examples) and kills it 40 times.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = [
    "spec", "verify", "roundtrip", "tests", "pure", "lint", "docs", "docs_browser", "typescript",
]

PYTHON = "3.11"
ROOT = Path(__file__).resolve().parent
SHARED_EXTRAS = ("dev", "browser")
SITE_BUILD = ROOT / "site-build"
ROUNDTRIP_TESTS = "tests/test_roundtrip.py"
DECODER_TESTS = ("tests/test_decoder.py", "tests/test_decoder_hostile.py", "tests/test_sse.py",
                 "tests/test_jsonscan.py", "tests/test_plainjson.py",
                 "tests/test_plainjson_hostile.py", ROUNDTRIP_TESTS)
"""The tests of the decoder's modules, which `pure` runs again on the pure-Python ones."""
TYPESCRIPT_PROJECT = ROOT / "tests" / "typescript"
"""The TypeScript tools, tests and benchmark, with the packages its lockfile pins."""
INSTALLED_LOCK = TYPESCRIPT_PROJECT / "node_modules" / ".llm-stream-lock-sha256"
"""The hash of the lockfile (and Node's version) that `npm ci` last installed from."""
FUZZ_KILLS = "40"
"""How many times `fuzz` kills a registration (tests/test_registry_crash.py; 6 everyday)."""


class SharedEnvironment:
    """One virtualenv for every verifying session, made at most once per nox run."""

    def __init__(self, location: Path, extras: tuple[str, ...]) -> None:
        self.location = location
        self.extras = extras
        self.ready = False

    @property
    def bin(self) -> Path:
        return self.location / ("Scripts" if os.name == "nt" else "bin")

    def _prepare(self, session: nox.Session) -> None:
        if self.ready:
            return
        python = self.bin / "python"
        uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
        if uv is not None:
            if not python.exists():
                session.run(uv, "venv", "--quiet", "--python", PYTHON, str(self.location),
                            external=True)
            session.run(uv, "pip", "install", "--quiet", "--python", str(python),
                        "-e", f".[{','.join(self.extras)}]", external=True)
        else:
            if not python.exists():
                session.run(sys.executable, "-m", "venv", str(self.location), external=True)
            session.run(str(python), "-m", "pip", "install", "-q",
                        "-e", f".[{','.join(self.extras)}]", external=True)
        self.ready = True

    def run(self, session: nox.Session, tool: str, *args: str, **kwargs: Any) -> None:
        """Run one of the environment's commands (pytest, llm-stream, mkdocs, ...)."""
        self._prepare(session)
        env = {"VIRTUAL_ENV": str(self.location),
               "PATH": os.pathsep.join([str(self.bin), os.environ.get("PATH", "")]),
               **kwargs.pop("env", {})}
        session.run(str(self.bin / tool), *args, env=env, external=True, **kwargs)


shared = SharedEnvironment(ROOT / ".nox" / "shared", SHARED_EXTRAS)


def verifying(
    function: Callable[[nox.Session], None] | None = None, **options: Any,
) -> Any:
    """A session that runs in the shared environment (options as for `nox.session`)."""
    decorator = nox.session(venv_backend="none", **options)
    return decorator if function is None else decorator(function)


def install(session: nox.Session, *extras: str) -> None:
    """The project, editable, with the extras the session needs, in the session's own
    virtualenv."""
    session.install("-e", f".[{','.join(('dev', *extras))}]")


@verifying
def spec(session: nox.Session) -> None:
    """Check the spec source: schemas, registries, rules, examples."""
    shared.run(session, "llm-stream", "check-spec")


@verifying
def generate(session: nox.Session) -> None:
    """Regenerate every artifact from the spec source."""
    shared.run(session, "llm-stream", "generate")


@verifying
def verify(session: nox.Session) -> None:
    """Fail, listing the files, when generated/ differs from what the source gives; and on a
    breaking change to a permanent event type since the merge base with the upstream branch (or
    the previous commit) unless the spec's version was raised. A clone without that commit
    skips the second check with a message."""
    shared.run(session, "llm-stream", "generate", "--check")
    shared.run(session, "llm-stream", "registry", "diff", "--against", "auto",
               "--fail-on-breaking")


@verifying
def roundtrip(session: nox.Session) -> None:
    """Every example through decoder, models and encoder and back; every invalid one refused."""
    shared.run(session, "pytest", "-q", ROUNDTRIP_TESTS, *session.posargs)


@verifying
def docs(session: nox.Session) -> None:
    """Build the documentation site into site-build/, failing on any warning."""
    shared.run(session, "mkdocs", "build", "--strict", "-f", "site/mkdocs.yml",
               "-d", str(SITE_BUILD), *session.posargs)


@verifying(requires=["roundtrip", "docs"])
def tests(session: nox.Session) -> None:
    """The whole pytest suite, the differential validator test included, on every core
    (pytest-xdist); the round-trip tests run in `roundtrip`, and the site's tests read the build
    of `docs`."""
    shared.run(session, "pytest", "-q", "-n", "auto", "--ignore", ROUNDTRIP_TESTS,
               *session.posargs, env={"LLM_STREAM_SITE_DIR": str(SITE_BUILD)})


@verifying
def pure(session: nox.Session) -> None:
    """The decoder's tests (the property tests that hold its fast paths to the general path
    among them) on its pure-Python modules, `LLM_STREAM_PURE=1`: the reference that the
    compiled modules, which every other session loads, must agree with."""
    shared.run(session, "pytest", "-q", "-n", "auto", *DECODER_TESTS, *session.posargs,
               env={"LLM_STREAM_PURE": "1"})


@verifying
def lint(session: nox.Session) -> None:
    """ruff, and mypy in strict mode over the packages and the build hook (hatch_build.py)."""
    shared.run(session, "ruff", "check", ".")
    shared.run(session, "mypy")


@verifying(requires=["docs"])
def docs_browser(session: nox.Session) -> None:
    """Serve the build of `docs` on loopback and drive it with headless Chromium (Debian's
    /usr/bin/chromium or $CHROMIUM, no browser download), every request off loopback blocked:
    field tables, rule anchors, search, the diagrams, wide tables, dark mode, mobile width.
    Screenshots go to artifacts/."""
    shared.run(session, "pytest", "-q", "tests/browser", *session.posargs,
               env={"LLM_STREAM_BROWSER": "1", "LLM_STREAM_SITE_DIR": str(SITE_BUILD)})


def typescript_packages(session: nox.Session) -> None:
    """The TypeScript project's packages, exactly as its lockfile pins them; `npm ci` runs
    only when the lockfile or Node changed since it last ran (it deletes and refetches
    node_modules every time)."""
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    lock = (TYPESCRIPT_PROJECT / "package-lock.json").read_bytes()
    wanted = hashlib.sha256(lock + node.stdout.encode()).hexdigest()
    if INSTALLED_LOCK.is_file() and INSTALLED_LOCK.read_text() == wanted:
        session.log("npm ci: node_modules already holds what package-lock.json pins")
        return
    session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(TYPESCRIPT_PROJECT),
                external=True)
    INSTALLED_LOCK.write_text(wanted)


def run_together(session: nox.Session, *commands: list[str]) -> None:
    """Run commands at once (each single-threaded, so that they share the cores), then show
    each one's output in turn; the session fails if any of them failed."""
    session.log("at once: " + " & ".join(" ".join(command) for command in commands))
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True) for command in commands]
    failed = []
    for command, process in zip(commands, processes, strict=True):
        output, _ = process.communicate()
        if output:
            print(output, end="", flush=True)
        if process.returncode:
            failed.append(f"{' '.join(command)} exited {process.returncode}")
    if failed:
        session.error("; ".join(failed))


@verifying
def typescript(session: nox.Session) -> None:
    """The TypeScript bindings (Node 20 or later): installed with npm ci, the package type-checked
    on its own (tsc --noEmit) and built with its tests, Node's test runner on those; then the
    two-language tests against the Python bindings (every example and mutated ones, the
    validators, a registration, the guide's code, a stream fetched in headless Chromium)."""
    typescript_packages(session)
    build = TYPESCRIPT_PROJECT / "build"
    shutil.rmtree(build, ignore_errors=True)
    tsc = str(TYPESCRIPT_PROJECT / "node_modules" / "typescript" / "bin" / "tsc")
    run_together(session, ["node", tsc, "--noEmit", "-p", "generated/typescript"],
                 ["node", tsc, "-p", str(TYPESCRIPT_PROJECT)])
    session.run("node", "--test", *sorted(map(str, build.rglob("*.test.js"))), external=True)
    shared.run(session, "pytest", "-q", "-n", "auto", "tests/typescript",
               "tests/test_registry_add.py::test_the_typescript_bindings_have_it",
               *session.posargs, env={"LLM_STREAM_TYPESCRIPT": "1"})


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Throughput against the peers, as ratios measured in one run; the TypeScript decoder's
    table needs Node 20 or later. `nox -s bench -- --tables typescript` runs that table alone
    (`--tables` and `--skip` take the names of `bench/run.py`'s tables)."""
    install(session, "bench")
    typescript_packages(session)
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=PYTHON)
def load(session: nox.Session) -> None:
    """200 concurrent streams through `llm-stream serve` as a gateway in front of a loopback
    upstream, against the same upstream read directly: order and completeness checked, added
    latency per event (p50, p99) and throughput reported. Loopback only; stops by itself. As
    root its processes are scheduled real-time, ahead of the machine's other work
    (`nox -s load -- --no-realtime` shares the cores as everything else does)."""
    install(session)
    session.run("python", "bench/load.py", *session.posargs)


@nox.session(venv_backend="none")
def fuzz(session: nox.Session) -> None:
    """The decoder's fuzz test for a bounded time: LLM_STREAM_FUZZ_SECONDS (120 by default) of
    mutated spec examples in random chunkings; LLM_STREAM_FUZZ_SEED replays a session. Then
    the searches the everyday run keeps short, at depth: the property tests and the validators'
    differential corpora in the hypothesis profile "long", and `registry add` killed
    LLM_STREAM_KILLS (40) times."""
    seconds = os.environ.get("LLM_STREAM_FUZZ_SECONDS", "120")
    shared.run(session, "pytest", "-q", "-s", "tests/fuzz", *session.posargs,
               env={"LLM_STREAM_FUZZ_SECONDS": seconds})
    kills = os.environ.get("LLM_STREAM_KILLS", FUZZ_KILLS)
    shared.run(session, "pytest", "-q", "-n", "auto", "--hypothesis-profile=long",
               "-m", "hypothesis or deep", "--ignore", "tests/fuzz",
               *session.posargs, env={"LLM_STREAM_KILLS": kills})
