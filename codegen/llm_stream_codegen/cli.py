"""The `llm-stream` command: one table of subcommands, and the one place that turns every failure
into a message and an exit code.

Each command is one entry of COMMANDS: its name, a one-line summary for `--help`, and the
function that adds its arguments and handler, imported only when the command runs (the stream
commands live in the bindings, `llm_stream.cli`, so that they work with the runtime dependencies
alone). A handler returns the exit code. Whatever happens, no traceback reaches the user: a usage
or I/O error exits 2, Ctrl-C 130, a closed output pipe 141 (as a shell reports SIGPIPE).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

PROG = "llm-stream"
TOOLCHAIN_MODULES = frozenset({"jinja2", "yaml", "jsonschema", "datamodel_code_generator"})
"""What the `toolchain` extra installs; a command that misses one says which extra to install."""
SPEC_MARKER = Path("spec/llm-stream.yaml")
"""The file that makes a folder a project root."""
EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 2, 130, 141


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    configure: str
    """`module:function` that adds the command's arguments and its `handler` to a parser."""


COMMANDS = (
    Command("generate", "regenerate every artifact from the spec source; --check compares only",
            "llm_stream_codegen.cli:configure_generate"),
    Command("check-spec", "check the spec source and judge every example as tagged",
            "llm_stream_codegen.cli:configure_check_spec"),
    Command("registry", "manage the event type registry: add, list, deprecate, diff",
            "llm_stream_codegen.registry_cli:configure_registry"),
    Command("check", "check a captured response body or HTTP response, rule by rule",
            "llm_stream.cli:configure_check"),
    Command("check-request", "check an application/llm-request+json body",
            "llm_stream.cli:configure_check_request"),
    Command("decode", "print the events of a captured stream as JSON Lines, as they decode",
            "llm_stream.cli:configure_decode"),
    Command("translate", "translate a vendor stream into LLM-Stream, or LLM-Stream into "
            "OpenAI Chat Completions chunks", "llm_stream.translate.command:configure"),
    Command("translate-request", "translate a request body from or to a vendor's format",
            "llm_stream.cli:configure_translate_request"),
    Command("serve", "run a reference endpoint: a mock model, or a gateway to a vendor",
            "llm_stream_server.cli:configure"),
    Command("conformance", "send the conformance scenarios to a live endpoint and judge them",
            "llm_stream_conformance.cli:configure"),
)


# -- the toolchain's own commands ---------------------------------------------------------------


def add_root(parser: argparse.ArgumentParser, *, writes: bool) -> None:
    """`--root`; `writes` says whether the command changes the tree (it then holds the root's
    lock exclusively; readers hold it shared)."""
    parser.add_argument("--root", default=".", help="the project root (default: .)")
    parser.set_defaults(writes=writes)


def _generate(args: argparse.Namespace) -> int:
    from .generate import generate

    return generate(Path(args.root), check_only=args.check)


def _check_spec(args: argparse.Namespace) -> int:
    from .generate import check_spec

    return check_spec(Path(args.root))


def configure_generate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when generated/ differs from the source")
    add_root(parser, writes=True)
    parser.set_defaults(handler=_generate)


def configure_check_spec(parser: argparse.ArgumentParser) -> None:
    add_root(parser, writes=False)
    parser.set_defaults(handler=_check_spec)


# -- dispatch -----------------------------------------------------------------------------------


def _version() -> str:
    """The package's version, the standard's, and whether the decoder runs compiled."""
    from llm_stream import implementation
    from llm_stream.registry import SPEC_VERSION
    from llm_stream.version import __version__

    return f"{PROG} {__version__} (LLM-Stream {SPEC_VERSION}; decoder: {implementation()})"


class _Version(argparse.Action):
    """--version, importing the bindings only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(_version())
        parser.exit()


def parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The command line: every command listed, the `chosen` one's arguments added."""
    top = argparse.ArgumentParser(
        prog=PROG,
        description="The LLM-Stream 1.0 toolchain: generate from the spec source, check and "
                    "decode streams, manage the registry. Each command takes --help.",
        epilog="Exit codes: 0 success or conforming; 1 refused, not conforming or drift; "
               "2 usage or I/O error; 130 interrupted.",
    )
    top.add_argument("--version", action=_Version)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                  title="commands")
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.summary,
                                  description=command.summary[0].upper() + command.summary[1:]
                                  + ".")
        if command.name == chosen:
            _configurer(command)(sub)
    return top


def _configurer(command: Command) -> Callable[[argparse.ArgumentParser], None]:
    module, _, function = command.configure.partition(":")
    configure: Callable[[argparse.ArgumentParser], None] = getattr(
        importlib.import_module(module), function)
    return configure


def _missing_extra(exc: ModuleNotFoundError, arguments: Sequence[str]) -> str | None:
    """What to install, when the module missing is one of the toolchain extra's."""
    if not exc.name or exc.name.partition(".")[0] not in TOOLCHAIN_MODULES:
        return None
    return (f"`{PROG} {_chosen(arguments)}` needs the toolchain extra (module {exc.name} is "
            "missing): pip install 'llm-stream[toolchain]'")


def _chosen(arguments: Sequence[str]) -> str | None:
    """The command named on the line: its first argument that is not an option."""
    return next((a for a in arguments if not a.startswith("-")), None)


def _not_a_root(root: Path) -> str | None:
    if (root / SPEC_MARKER).is_file():
        return None
    return (f"{root} is not an llm-stream project root (it has no {SPEC_MARKER}); run the "
            "command from the project root or give --root DIR")


@contextlib.contextmanager
def _holding_root(args: argparse.Namespace) -> Iterator[None]:
    """The project root's lock for the command's run, after rolling back a change that a killed
    command left half done."""
    root = getattr(args, "root", None)
    writes = getattr(args, "writes", None)
    if root is None or writes is None or getattr(args, "reserved", False):
        yield
        return
    problem = _not_a_root(Path(root))
    if problem:
        from llm_stream.cli import UsageError

        raise UsageError(problem)
    from .journal import JOURNAL, project_lock, recover

    root_path = Path(root)
    if (root_path / JOURNAL).exists():
        with project_lock(root_path, exclusive=True):
            recover(root_path)
    changes = writes and not getattr(args, "check", False) and not getattr(args, "dry_run", False)
    with project_lock(root_path, exclusive=changes):
        yield


def _run(arguments: list[str]) -> int:
    chosen = _chosen(arguments)
    known = {c.name for c in COMMANDS}
    try:
        args = parser(chosen if chosen in known else None).parse_args(arguments)
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else EXIT_USAGE
    with _holding_root(args):
        return int(args.handler(args))


def _escape_output() -> None:
    """stdout and stderr never fail on text: a file name's undecodable bytes go out as they
    came (surrogateescape), any other unencodable character as its escape."""
    escape = codecs.lookup_error("surrogateescape")
    replace = codecs.lookup_error("backslashreplace")

    def handler(error: UnicodeError) -> tuple[str | bytes, int]:
        try:
            return escape(error)
        except UnicodeError:
            return replace(error)

    codecs.register_error("llm-stream", handler)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="llm-stream")


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so that the final flush cannot fail."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _fail(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"{PROG}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    _escape_output()
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            status = _run(arguments)
        finally:
            sys.stdout.flush()
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except ModuleNotFoundError as exc:
        missing = _missing_extra(exc, arguments)
        if missing is None:
            raise
        _fail(missing)
        return EXIT_USAGE
    except OSError as exc:
        _fail(f"{exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}")
        return EXIT_USAGE
    except Exception as exc:
        from llm_stream.cli import UsageError

        if not isinstance(exc, UsageError):
            raise
        _fail(str(exc))
        return EXIT_USAGE
    return status


if __name__ == "__main__":
    sys.exit(main())
