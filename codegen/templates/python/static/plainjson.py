"""The value of a JSON text as pydantic-core's `from_json(data, allow_inf_nan=False)` gives it:
the decoder's parse of each event, and the translators' of each vendor event.

Installed with a C compiler, the extension module of the same name built from `plainjson.c`
loads instead of this one (from `_native/`, as the compiled decoder does): it builds the value of
the plain text nearly every event is (objects, arrays, strings, short integers, floats, true,
false, null) itself, in less time, and gives any other text to `from_json`. This
module is the same function where nothing is compiled.
"""

from __future__ import annotations

from typing import Any

from .jsontext import from_json


def parse(data: bytes | str) -> Any:
    """The value of the JSON text `data`, as `from_json(data, allow_inf_nan=False)` gives it
    (ValueError when it is no JSON)."""
    return from_json(data, allow_inf_nan=False)
