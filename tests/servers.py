"""Real servers for the endpoint tests: an ASGI app served by uvicorn on 127.0.0.1, in a thread
of its own, on a port the system picks, stopped when the block ends."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

from llm_stream_server.app import ServerOptions, create_app
from llm_stream_server.upstream import Upstream


@contextlib.contextmanager
def serving(app: ASGIApp) -> Iterator[str]:
    """Serve `app`; yields its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                            access_log=False, lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


@contextlib.contextmanager
def serving_upstream(upstream: Upstream, options: ServerOptions | None = None) -> Iterator[str]:
    """`llm-stream serve`'s app answering from `upstream`; yields its base URL."""
    with serving(create_app(upstream, options or ServerOptions())) as url:
        yield url
