"""Parsing JSON text exactly as JSON: the one parser every part of the bindings uses.

orjson when it is installed (it is fast, and refuses what JSON refuses), else the standard
library, made to refuse NaN, Infinity and unpaired surrogates as well; integers beyond 64 bits,
which orjson reads inexactly, always go to the standard library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_fast_loads: Callable[[str | bytes], Any] | None
try:
    from orjson import loads as _orjson_loads

    _fast_loads = _orjson_loads
except ImportError:  # orjson is optional: the standard library is the fallback
    _fast_loads = None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _strict_loads(text: str | bytes) -> Any:
    """The standard library's parser without its NaN/Infinity extension, which JSON forbids,
    and refusing an unpaired surrogate escape ("\\ud800"), which is no Unicode text, as orjson
    does; bytes must be UTF-8, as orjson wants them."""
    if isinstance(text, bytes):
        text = text.decode()
    value = json.loads(text, parse_constant=_reject_constant)
    if _SURROGATE_ESCAPE.search(text) is not None:
        try:
            json.dumps(value, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise ValueError("a string holds an unpaired surrogate") from None
    return value


parse_fast: Callable[[str | bytes], Any] = _fast_loads or _strict_loads
"""The first try on the decoder's hot path, which rechecks what it gives; `loads` is exact."""


_LONG_INTEGER = re.compile(r"[0-9]{19}")
"""orjson reads an integer beyond 64 bits as a float, which loses digits (and a float where an
int belongs fails the models); a text that may hold one goes to the standard library."""


def loads(text: str) -> Any:
    """Parse one JSON text; orjson when installed, the standard library for what it refuses or
    would read inexactly (integers beyond 64 bits are JSON too), ValueError when it is not JSON."""
    if _fast_loads is not None and _LONG_INTEGER.search(text) is None:
        try:
            return _fast_loads(text)
        except ValueError:
            pass
    return _strict_loads(text)
