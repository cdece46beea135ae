"""The `llm-stream` command: the toolchain's subcommands, and the bindings' for streams.

The stream commands (check, check-request, decode) live in the bindings (`llm_stream.cli`) so
that they work with the runtime dependencies alone; this module imports the toolchain lazily.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

TOOLCHAIN_COMMANDS = ("generate", "check-spec", "registry")
APPLICATION_COMMANDS = {
    "serve": "llm_stream_server.cli",
    "conformance": "llm_stream_conformance.cli",
}
"""The applications built on the bindings, by command: each module's main(argv) runs it."""


def _generate(args: argparse.Namespace) -> int:
    from .generate import generate

    return generate(Path(args.root), check_only=args.check)


def _check_spec(args: argparse.Namespace) -> int:
    from .generate import check_spec

    return check_spec(Path(args.root))


def toolchain_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llm-stream",
        description="The LLM-Stream 1.0 toolchain: generate, check and register.",
        epilog="Streams: `llm-stream check [--json] [--tools FILE] PATH|-` checks a captured "
        "response, `llm-stream check-request PATH|-` a request body, `llm-stream decode PATH|-` "
        "prints the events as JSON Lines, `llm-stream translate --from FORMAT|--to openai-chat "
        "PATH|-` translates vendor streams, `llm-stream translate-request --from FORMAT|--to "
        "FORMAT PATH|-` request bodies; each takes --help. Endpoints: `llm-stream serve` runs "
        "one (a mock model or a gateway), `llm-stream conformance URL` tests a live one.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    generate = commands.add_parser(
        "generate", help="regenerate every artifact from the spec source"
    )
    generate.add_argument("--check", action="store_true",
                          help="write nothing; exit 1 when generated/ differs from the source")
    generate.add_argument("--root", default=".", help="the project root (default: .)")
    generate.set_defaults(handler=_generate)
    spec = commands.add_parser(
        "check-spec", help="check the spec source and judge every example as tagged"
    )
    spec.add_argument("--root", default=".", help="the project root (default: .)")
    spec.set_defaults(handler=_check_spec)
    from .registry_cli import add_registry_parser

    add_registry_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in APPLICATION_COMMANDS:
        application = import_module(APPLICATION_COMMANDS[arguments[0]])
        return int(application.main(arguments[1:]))
    if arguments and arguments[0] in TOOLCHAIN_COMMANDS:
        args = toolchain_parser().parse_args(arguments)
        return int(args.handler(args))
    if (arguments and arguments[0] in ("-h", "--help")) or not arguments:
        toolchain_parser().print_help()
        return 0 if arguments else 2
    from llm_stream.cli import main as stream_main

    return stream_main(arguments)


if __name__ == "__main__":
    sys.exit(main())
