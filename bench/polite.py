"""How a benchmark script ends when it is stopped or its reader goes away: as the project's
commands end, without a traceback: Ctrl-C exits 130, a closed output pipe (`| head`) 141, as a
shell reports SIGINT and SIGPIPE."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable

EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


def run(main: Callable[[], int | None]) -> int:
    """`main`'s exit status (0 for None), or that of its interruption."""
    try:
        try:
            return main() or 0
        finally:
            sys.stdout.flush()
    except KeyboardInterrupt:
        # asyncio reports, as it collects them, the tasks the interruption cancelled: noise
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):  # the final flush cannot fail then
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
