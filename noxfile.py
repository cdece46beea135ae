"""Sessions that regenerate and verify everything; plain `nox` runs all the verifying ones."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = [
    "spec", "verify", "roundtrip", "tests", "lint", "docs", "docs_browser", "typescript",
]

PYTHON = "3.11"
TYPESCRIPT_PROJECT = Path("tests/typescript")
"""The TypeScript tools, tests and benchmark, with the packages its lockfile pins."""


def install(session: nox.Session, *extras: str) -> None:
    """The project, editable, with the extras the session needs."""
    session.install("-e", f".[{','.join(('dev', *extras))}]")


@nox.session(python=PYTHON)
def spec(session: nox.Session) -> None:
    """Check the spec source: schemas, registries, rules, examples."""
    install(session)
    session.run("llm-stream", "check-spec")


@nox.session(python=PYTHON)
def generate(session: nox.Session) -> None:
    """Regenerate every artifact from the spec source."""
    install(session)
    session.run("llm-stream", "generate")


@nox.session(python=PYTHON)
def verify(session: nox.Session) -> None:
    """Fail, listing the files, when generated/ differs from what the source gives; and on a
    breaking change to a permanent event type since the merge base with the upstream branch (or
    the previous commit) unless the spec's version was raised. A clone without that commit
    skips the second check with a message."""
    install(session)
    session.run("llm-stream", "generate", "--check")
    session.run("llm-stream", "registry", "diff", "--against", "auto", "--fail-on-breaking")


@nox.session(python=PYTHON)
def roundtrip(session: nox.Session) -> None:
    """Every example through decoder, models and encoder and back; every invalid one refused."""
    install(session)
    session.run("pytest", "-q", "tests/test_roundtrip.py", *session.posargs)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole pytest suite, the differential validator test included."""
    install(session)
    session.run("pytest", "-q", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, and mypy in strict mode over llm_stream and llm_stream_codegen."""
    install(session)
    session.run("ruff", "check", ".")
    session.run("mypy")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Throughput against the peers, as ratios measured in one run; the TypeScript decoder's
    table needs Node 20 or later."""
    install(session, "bench")
    session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(TYPESCRIPT_PROJECT),
                external=True)
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation site into site-build/, failing on any warning."""
    install(session)
    session.run("mkdocs", "build", "--strict", "-f", "site/mkdocs.yml", *session.posargs)


@nox.session(python=PYTHON)
def docs_browser(session: nox.Session) -> None:
    """Build the site, serve it on loopback and drive it with headless Chromium (Debian's
    /usr/bin/chromium, no browser download): field tables, rule anchors, search, dark mode.
    Screenshots go to artifacts/."""
    install(session, "browser")
    session.run("pytest", "-q", "tests/browser", *session.posargs,
                env={"LLM_STREAM_BROWSER": "1"})


def typescript_build(session: nox.Session) -> None:
    """Install the TypeScript project from its lockfile and build its tests and the package
    into tests/typescript/build, type-checking both."""
    session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(TYPESCRIPT_PROJECT),
                external=True)
    shutil.rmtree(TYPESCRIPT_PROJECT / "build", ignore_errors=True)
    tsc = str(TYPESCRIPT_PROJECT / "node_modules" / "typescript" / "bin" / "tsc")
    session.run("node", tsc, "--noEmit", "-p", "generated/typescript", external=True)
    session.run("node", tsc, "-p", str(TYPESCRIPT_PROJECT), external=True)


@nox.session(python=PYTHON)
def typescript(session: nox.Session) -> None:
    """The TypeScript bindings: installed with npm ci, the package type-checked as it is built
    (tsc --noEmit) and with its tests, Node's test runner on them; then the two-language tests
    (every example, mutated ones, the validators, a registration, a stream fetched in headless
    Chromium) against the Python bindings. Needs Node 20 or later."""
    install(session, "browser")
    typescript_build(session)
    tests = sorted(str(p) for p in (TYPESCRIPT_PROJECT / "build").rglob("*.test.js"))
    session.run("node", "--test", *tests, external=True)
    session.run("pytest", "-q", "tests/typescript",
                "tests/test_registry_add.py::test_the_typescript_bindings_have_it",
                *session.posargs, env={"LLM_STREAM_TYPESCRIPT": "1"})


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """The decoder's fuzz test for a bounded time: LLM_STREAM_FUZZ_SECONDS (120 by default) of
    mutated spec examples in random chunkings; LLM_STREAM_FUZZ_SEED replays a session."""
    install(session)
    seconds = os.environ.get("LLM_STREAM_FUZZ_SECONDS", "120")
    session.run("pytest", "-q", "-s", "tests/fuzz", *session.posargs,
                env={"LLM_STREAM_FUZZ_SECONDS": seconds})
