"""TypeScript source text: literals of JSON values, template strings and names.

Shared by the TypeScript renderers (types, validators and the jinja templates' `tsrepr` filter),
so that every generated module quotes values the same way.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

__all__ = ["camel", "pascal", "template", "ts_literal", "ts_property"]

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_RESERVED = frozenset({
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
    "else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import",
    "in", "instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true",
    "try", "typeof", "var", "void", "while", "with",
})


def ts_literal(value: object) -> str:
    """A JSON value (or None, True, False) as a TypeScript expression; strings in double quotes,
    as the rest of the bindings write them."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} is not a JSON number")
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def ts_property(name: str) -> str:
    """A property name as it is written in an object type or after a dot: bare when it can be."""
    if _IDENTIFIER.fullmatch(name) and name not in _RESERVED:
        return name
    return ts_literal(name)


def template(parts: Sequence[tuple[bool, str]]) -> str:
    """A string built of literal text and expressions: a plain literal when there is no
    expression, else a template literal."""
    if not any(is_expression for is_expression, _ in parts):
        return ts_literal("".join(text for _, text in parts))
    body = "".join(
        "${" + text + "}" if is_expression
        else text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
        for is_expression, text in parts
    )
    return f"`{body}`"


def pascal(text: str) -> str:
    """`content.delta` -> `ContentDelta`, `event-envelope` -> `EventEnvelope`."""
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[^0-9A-Za-z]+", text) if word)


def camel(text: str) -> str:
    """`content.delta` -> `contentDelta`."""
    name = pascal(text)
    return name[:1].lower() + name[1:]
