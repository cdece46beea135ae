"""Parsing JSON text exactly as JSON: the one parser every part of the bindings uses.

pydantic-core's ``from_json``, there anyway for the models, reads integers of any size exactly
and, called with ``allow_inf_nan=False`` as everything here calls it, refuses NaN and Infinity,
which are not JSON. The decoder's hot path calls it alone: a refusal sends the event down the
general path, to `loads`. That gives what it refuses but JSON allows (nesting deeper than its
limit) to the standard library, made to refuse NaN, Infinity and unpaired surrogates as well;
nesting deeper than the interpreter's recursion limit is refused too, as a ValueError.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic_core import from_json

__all__ = ["from_json", "loads"]


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _strict_loads(text: str | bytes) -> Any:
    """The standard library's parser without its NaN/Infinity extension, which JSON forbids,
    and refusing an unpaired surrogate escape ("\\ud800"), which is no Unicode text; bytes must
    be UTF-8, as for pydantic-core."""
    if isinstance(text, bytes):
        text = text.decode()
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested deeper than this parser can follow") from None
    if _SURROGATE_ESCAPE.search(text) is not None:
        try:
            json.dumps(value, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise ValueError("a string holds an unpaired surrogate") from None
    return value


def loads(text: str | bytes) -> Any:
    """Parse one JSON text; ValueError when it is not JSON."""
    try:
        return from_json(text, allow_inf_nan=False)
    except ValueError:
        return _strict_loads(text)
