"""`llm-stream serve`: run the endpoint, with the mock model or in front of a vendor.

Exit codes: 0 when stopped (Ctrl-C included), 2 for bad arguments, a missing extra or a port
that cannot be bound. Registered as a command of `llm-stream` by `configure`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import socket
import sys
from typing import TYPE_CHECKING

from llm_stream.cli import UsageError

from .requirements import missing_extra_message, missing_packages

if TYPE_CHECKING:
    from types import FrameType

    from starlette.applications import Starlette

    from .upstream import Upstream


def configure(command: argparse.ArgumentParser) -> None:
    """`llm-stream serve`'s arguments and handler; refuses at once without the serve extra."""
    missing = missing_packages()
    if missing:
        raise UsageError(missing_extra_message("serve", "serve", missing))
    from .gateway import FORMATS

    command.description = (
        "A reference LLM-Stream endpoint: POST /v1/stream (LLM-Stream) and POST "
        "/v1/chat/completions (OpenAI-compatible). With no --upstream it answers from a built-in "
        "deterministic mock model; with one it is a gateway that translates the vendor's stream.")
    command.add_argument("--host", default="127.0.0.1", help="address to listen on "
                         "(default 127.0.0.1)")
    command.add_argument("--port", type=int, default=8000,
                         help="port to listen on; 0 picks a free one (default 8000)")
    command.add_argument("--upstream", choices=["mock", *FORMATS], default="mock",
                         help="where answers come from (default: the mock model)")
    command.add_argument("--upstream-url", metavar="URL",
                         help="the upstream's base URL (default: the vendor's public API; "
                         "any OpenAI-compatible server with --upstream openai-chat)")
    command.add_argument("--api-key-env", metavar="NAME",
                         help="the environment variable holding the upstream's key (default: "
                         + ", ".join(f"{f.key_env} for {f.name}" for f in FORMATS.values()
                                     if f.key_env) + ")")
    command.add_argument("--max-body-bytes", type=int, default=4 << 20, metavar="N",
                         help="largest request body accepted; larger ones get 413 "
                         "(default 4 MiB)")
    command.add_argument("--keep-alive", type=float, default=15.0, metavar="SECONDS",
                         help="send a keep-alive comment after this much upstream silence "
                         "(default 15)")
    command.add_argument("--silence-timeout", type=float, default=120.0, metavar="SECONDS",
                         help="end a stream with an error event after this much upstream "
                         "silence (default 120)")
    command.add_argument("--mock-token-delay", type=float, default=0.02, metavar="SECONDS",
                         help="the mock model's pause between tokens (default 0.02)")
    command.add_argument("--mock-first-token-delay", type=float, default=0.0,
                         metavar="SECONDS", help="the mock model's pause before its first "
                         "token (default 0)")
    command.set_defaults(handler=serve)


def serve(args: argparse.Namespace) -> int:
    """Run until stopped; a bad upstream or an address in use is a usage error."""
    from .app import ServerOptions, create_app
    from .relay import Deadlines

    try:
        upstream = build_upstream(args)
        listening = bind(args.host, args.port)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options = ServerOptions(
        max_body_bytes=args.max_body_bytes,
        deadlines=Deadlines(keep_alive=args.keep_alive, silence=args.silence_timeout),
    )
    host, port = listening.getsockname()[:2]
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    print(f"llm-stream serve: listening on http://{host}:{port} (upstream: {upstream.name}); "
          "POST /v1/stream, POST /v1/chat/completions", file=sys.stderr, flush=True)
    return run(create_app(upstream, options), listening)


def build_upstream(args: argparse.Namespace) -> Upstream:
    """The upstream the arguments describe; ValueError names what is missing."""
    from .gateway import FORMATS, Gateway
    from .mock import MockModel, MockTiming

    if args.upstream == "mock":
        return MockModel(MockTiming(first_token_delay=args.mock_first_token_delay,
                                    token_delay=args.mock_token_delay))
    vendor = FORMATS[args.upstream]
    base_url = args.upstream_url or vendor.default_url
    if not base_url:
        raise ValueError(f"--upstream {vendor.name} needs --upstream-url")
    key_env = args.api_key_env or vendor.key_env
    api_key = os.environ.get(key_env) if key_env else None
    if args.api_key_env and not api_key:
        raise ValueError(f"the environment variable {args.api_key_env} is not set")
    return Gateway(vendor, base_url=base_url, api_key=api_key, silence=args.silence_timeout)


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, listening before the server starts, so that the port (0 picks one)
    can be reported and nobody who connects after the report is refused."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listening = socket.socket(family, socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen(2048)  # connections wait from now on, before uvicorn accepts them
    except OSError as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return listening


def run(app: Starlette, listening: socket.socket) -> int:
    import uvicorn

    from .streaming import stop_streams

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=5)
    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            stop_streams()
            super().handle_exit(sig, frame)

    # What the server has built by now (modules, validators, the app) lives as long as it
    # does: frozen out of the collector's reach, a full collection does not stall every stream
    # for the milliseconds it takes to walk them
    gc.collect()
    gc.freeze()
    with contextlib.suppress(KeyboardInterrupt):
        Server(config).run(sockets=[listening])
    return 0
