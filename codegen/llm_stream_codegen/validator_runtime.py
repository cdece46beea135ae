"""The support functions the generated module carries, each copied into it only when its code
uses it, with the imports they need.
"""

from __future__ import annotations

import re
from typing import Final

RUNTIME: Final[dict[str, str]] = {
    "_at": '''


def _at(pointer: str) -> str:
    """How a message names a value: its JSON pointer, or "the value" at the root."""
    return pointer or "the value"
''',
    "_esc": '''


def _esc(key: object) -> str:
    """A property name as a JSON pointer segment (RFC 6901)."""
    return str(key).replace("~", "~0").replace("/", "~1")
''',
    "_kind": '''


def _kind(value: object) -> str:
    """How a message names the JSON type of a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return f"a {type(value).__name__}"
''',
    "_is_integer": '''


def _is_integer(value: object) -> bool:
    """JSON Schema's integer, past the fast path: integral floats, int subclasses but bool."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)
''',
    "_is_number": '''


def _is_number(value: object) -> bool:
    """JSON Schema's number, past the fast path: any number but a bool."""
    return isinstance(value, numbers.Number) and not isinstance(value, bool)
''',
    "_match": '''


def _match(pattern: re.Pattern[str], matched: set[str], text: str) -> bool:
    """pattern.search(text), remembering strings that matched (up to 4096 per pattern)."""
    if pattern.search(text) is None:
        return False
    if len(matched) < 4096:
        matched.add(text)
    return True
''',
    "_not_multiple": '''


def _not_multiple(value: Any, divisor: float) -> bool:
    """True unless value is a multiple of a float divisor (as jsonschema decides it)."""
    quotient = value / divisor
    try:
        return bool(int(quotient) != quotient)
    except OverflowError:
        return (Fraction(value) / Fraction(divisor)).denominator != 1
''',
    "_unbool": '''
_TRUE = object()
_FALSE = object()


def _unbool(value: object) -> object:
    """Make True and 1, False and 0 different for equality (JSON Schema equality)."""
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value
''',
    "_equal": '''


def _equal(one: Any, two: Any) -> bool:
    """JSON equality: 1 == 1.0 but True != 1, deep for arrays and objects."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and _equal(value, two[key]) for key, value in one.items()
        )
    return bool(_unbool(one) == _unbool(two))
''',
    "_among": '''


def _among(value: object, options: tuple[object, ...]) -> bool:
    """True if value is JSON-equal to one of options."""
    return any(_equal(value, option) for option in options)
''',
    "_unique": '''


def _unique(items: list[Any]) -> bool:
    """uniqueItems as jsonschema decides it: sort when the items sort, else compare pairs."""
    try:
        ordered: list[Any] = sorted(_unbool(item) for item in items)
        for one, two in itertools.pairwise(ordered):
            if _equal(one, two):
                return False
    except (NotImplementedError, TypeError):
        seen: list[object] = []
        for item in items:
            value = _unbool(item)
            if any(_equal(other, value) for other in seen):
                return False
            seen.append(value)
    return True
''',
}

RUNTIME_IMPORTS: Final = {
    "_is_number": "import numbers",
    "_not_multiple": "from fractions import Fraction",
    "_equal": "from collections.abc import Mapping, Sequence",
    "_unique": "import itertools",
}


def uses(name: str, text: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None
