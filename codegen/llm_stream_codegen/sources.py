"""Reading the spec source's files so that every error can name the file and the line.

YAML mappings come back as `Located` dicts that remember their line; dates stay strings (a registry
date is text to print, not a value to compute with); duplicate keys are refused rather than
silently overwritten, because a duplicated rule or entry is exactly the mistake to catch. NaN and
the infinities, which JSON does not have, are refused, and so is nesting deeper than MAX_DEPTH,
which no spec file needs and which would otherwise exhaust the stack.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

MAX_DEPTH = 64
"""The deepest a spec file's mappings and lists may nest."""


class SourceError(Exception):
    """A fault in the spec source, located by file and line (0 when the line is unknown)."""

    def __init__(self, path: Path | str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.path = str(path)
        self.line = line
        self.message = message


class Located(dict[str, Any]):
    """A YAML mapping that knows the 1-based line it starts on."""

    line: int = 0


class _Loader(yaml.SafeLoader):
    """The pure-Python reader: its error messages are the ones reported."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise SourceError(str(mark.name), mark.line + 1,
                                  f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's reader where PyYAML has it, with the same constructors and resolvers; a file it
    refuses is read again by `_Loader`, so that errors read the same with or without it."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Located:
    mapping = Located()
    mapping.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise SourceError(
                str(node.start_mark.name),
                key_node.start_mark.line + 1,
                f"duplicate key {key!r}",
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


for _loader in (_Loader, _FastLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers
                if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def _read_text(path: Path, display: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceError(display, 0, "the file does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(display, 0, f"cannot be read: {exc}") from None


def read_yaml(path: Path, display: str) -> Any:
    """Parse a YAML file; `display` is the path errors show (relative to the project root)."""
    return parse_yaml(_read_text(path, display), display)


def parse_yaml(text: str, display: str) -> Any:
    """Parse a YAML text as the file `display` would be read."""
    try:
        data = yaml.load(text, Loader=_FastLoader)
        if _nesting(data) <= MAX_DEPTH:
            return data
    except (yaml.YAMLError, SourceError, RecursionError):
        pass
    stream = io.StringIO(text)
    stream.name = display
    try:
        return yaml.load(stream, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise SourceError(display, mark.line + 1 if mark else 0, str(exc.problem)) from exc


def _nesting(value: Any) -> int:
    """How deep mappings and lists nest in `value`: libyaml's reader has no limit of its own,
    so a deeper file is read again by `_Loader`, which refuses it with its line."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return deepest


def read_json(path: Path, display: str) -> Any:
    """Parse a JSON file, refusing duplicate keys for the same reason as in YAML, the non-JSON
    constants NaN and Infinity, and nesting deeper than MAX_DEPTH."""
    text = _read_text(path, display)

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise SourceError(display, 0, f"duplicate key {key!r}")
            result[key] = value
        return result

    def not_json(name: str) -> Any:
        raise SourceError(display, _constant_line(text, name),
                          f"invalid JSON: {name} is not a JSON number")

    too_deep = _too_deep(text)
    if too_deep:
        raise SourceError(display, too_deep, f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=not_json)
    except json.JSONDecodeError as exc:
        raise SourceError(display, exc.lineno, f"invalid JSON: {exc.msg}") from exc


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|([\[{])|([\]}])|(-?Infinity|NaN)')


def _too_deep(text: str) -> int:
    """The line where a JSON text first nests deeper than MAX_DEPTH, or 0."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        if match[1]:
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif match[2]:
            depth -= 1
    return 0


def _constant_line(text: str, name: str) -> int:
    """The line of the first `name` (NaN, Infinity, -Infinity) outside a string."""
    for match in _JSON_TOKEN.finditer(text):
        if match[3] == name:
            return text.count("\n", 0, match.start()) + 1
    return 0


def json_line(text: str, path: Sequence[str | int]) -> int:
    """The line of the value at `path` (keys and indexes) in a JSON text; 0 if there is none.

    It walks the text along the path, skipping the values beside it with the JSON decoder, so
    that a schema fault found on the parsed document can be shown at its line.
    """
    decoder = json.JSONDecoder()
    spaces = re.compile(r"[ \t\n\r]*")

    def skip(at: int) -> int:
        match = spaces.match(text, at)
        return match.end() if match else at

    position = skip(0)
    try:
        for step in path:
            opener = text[position]
            position = skip(position + 1)
            if opener == "{" and isinstance(step, str):
                while text[position] != "}":
                    key, position = decoder.raw_decode(text, position)
                    position = skip(skip(position) + 1)  # past the colon
                    if key == step:
                        break
                    _, position = decoder.raw_decode(text, position)
                    position = skip(position)
                    if text[position] == ",":
                        position = skip(position + 1)
                else:
                    return 0
            elif opener == "[" and str(step).isdigit():
                for _ in range(int(step)):
                    _, position = decoder.raw_decode(text, position)
                    position = skip(skip(position) + 1)  # past the comma
            else:
                return 0
    except (ValueError, IndexError):
        return 0
    return text.count("\n", 0, position) + 1


def line_of(value: object) -> int:
    """The line a YAML mapping starts on, or 0 for anything else."""
    return value.line if isinstance(value, Located) else 0
