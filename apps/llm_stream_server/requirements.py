"""The third-party packages of the `serve` extra, checked before anything imports them."""

from __future__ import annotations

import importlib.util

SERVE_PACKAGES = ("starlette", "uvicorn", "httptools")


def missing_packages(packages: tuple[str, ...] = SERVE_PACKAGES) -> list[str]:
    """The packages of `packages` that cannot be imported here."""
    missing = []
    for name in packages:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def missing_extra_message(command: str, extra: str, missing: list[str]) -> str:
    """What to tell someone who runs `command` without the extra it needs."""
    return (
        f"llm-stream {command} needs the {extra!r} extra, which is not installed "
        f"(missing: {', '.join(missing)}); install it with: pip install 'llm-stream[{extra}]'"
    )
