"""Reading the spec source's files so that every error can name the file and the line.

YAML mappings come back as `Located` dicts that remember their line; dates stay strings (a registry
date is text to print, not a value to compute with); duplicate keys are refused rather than
silently overwritten, because a duplicated rule or entry is exactly the mistake to catch.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml


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
    text = _read_text(path, display)
    try:
        return yaml.load(text, Loader=_FastLoader)
    except (yaml.YAMLError, SourceError):
        pass
    stream = io.StringIO(text)
    stream.name = display
    try:
        return yaml.load(stream, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise SourceError(display, mark.line + 1 if mark else 0, str(exc.problem)) from exc


def read_json(path: Path, display: str) -> Any:
    """Parse a JSON file, refusing duplicate keys for the same reason as in YAML."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise SourceError(display, 0, f"duplicate key {key!r}")
            result[key] = value
        return result

    try:
        return json.loads(_read_text(path, display), object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise SourceError(display, exc.lineno, f"invalid JSON: {exc.msg}") from exc


def line_of(value: object) -> int:
    """The line a YAML mapping starts on, or 0 for anything else."""
    return value.line if isinstance(value, Located) else 0
