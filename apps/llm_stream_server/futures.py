"""Settling a future that something else may have settled first."""

from __future__ import annotations

import asyncio
from typing import TypeVar

T = TypeVar("T")


def settle(future: asyncio.Future[T], value: T) -> None:
    """Give `future` its result unless it has one (or was cancelled): a wake-up that comes twice,
    or after the waiter gave up, is no error."""
    if not future.done():
        future.set_result(value)
