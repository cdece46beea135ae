"""Whether a str is certainly JSON text that `jsontext.loads` accepts: the decoder's check that a
member is JSON text (LS-CALL-2) asks this first, and parses only when it is not sure.

Installed with a C compiler, the extension module of the same name built from `jsonscan.c`
loads instead of this one (from `_native/`, as the compiled decoder does): it reads the str's
characters without building any object, and is False for whatever it cannot be sure of. This
module is the same function where nothing is compiled, written the way that is fastest in pure
Python and exact: the parse that `loads` makes first.
"""

from __future__ import annotations

from .jsontext import from_json, too_deep


def certainly_json(text: object) -> bool:
    """Whether `text` is a str that pydantic-core's `from_json` reads as JSON (so `loads`
    accepts it) nested no deeper than `jsontext.MAX_DEPTH`."""
    if not isinstance(text, str):
        return False
    try:
        from_json(text, allow_inf_nan=False)
    except (ValueError, TypeError):  # TypeError: a surrogate, which UTF-8 cannot encode
        return False
    return not too_deep(text)
