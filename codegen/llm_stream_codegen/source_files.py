"""The spec source's files, each read and parsed once a command.

`check_files` judges the files as they are read and `load` joins the same parsed documents into the
model, so that a command parses every YAML and JSON file of the source once, however many steps
look at it. Reading raises `SourceError` naming file and line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .model import SchemaDoc
from .sources import SourceError, read_json, read_yaml

SPEC_FILE = "spec/llm-stream.yaml"
EXAMPLES_FILE = "spec/examples/examples.yaml"
REGISTRY_DIR = "registry"
SCHEMA_DIR = "schemas"
MAPPINGS_DIR = "mappings"
SPEC_SCHEMA = "spec/spec.schema.json"
EXAMPLES_SCHEMA = "spec/examples.schema.json"
REGISTRY_SCHEMA = "registry/registry.schema.json"
MAPPINGS_SCHEMA = "mappings/mappings.schema.json"

SOURCE_DIRS = ("spec", "schemas", "registry", "mappings")
SOURCE_PATTERNS = (
    "spec/*.yaml", "spec/*.json", "spec/examples/**/*", "schemas/**/*.json",
    "registry/*.yaml", "registry/*.json", "mappings/*.yaml", "mappings/*.json",
)
"""The files `read_source` reads: an editor's swap file or a stray note beside them changes no
hash."""


def source_files(root: Path) -> Iterator[Path]:
    """Every file the spec source is read from, in a stable order (the input of the input
    hash); hidden files are never part of it."""
    found = {
        path for pattern in SOURCE_PATTERNS for path in root.glob(pattern)
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    }
    yield from sorted(found)


def hash_files(root: Path, files: Iterator[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_schemas(root: Path) -> dict[str, SchemaDoc]:
    schemas: dict[str, SchemaDoc] = {}
    for path in sorted((root / SCHEMA_DIR).rglob("*.json")):
        display = path.relative_to(root).as_posix()
        document = read_json(path, display)
        if not isinstance(document, dict) or not isinstance(document.get("$id"), str):
            raise SourceError(display, 1, "a schema must be an object with a string $id")
        if document["$id"] in schemas:
            other = schemas[document["$id"]].path
            raise SourceError(display, 1, f"$id {document['$id']!r} is also the $id of {other}")
        schemas[document["$id"]] = SchemaDoc(document["$id"], display, document)
    return schemas


def read_registry_files(root: Path) -> dict[str, tuple[str, Any]]:
    """Every registry YAML file by its `registry` name, with its display path."""
    files: dict[str, tuple[str, Any]] = {}
    for path in sorted((root / REGISTRY_DIR).glob("*.yaml")):
        display = path.relative_to(root).as_posix()
        data = read_yaml(path, display)
        name = data.get("registry") if isinstance(data, dict) else None
        if not isinstance(name, str):
            raise SourceError(display, 1, "a registry file needs a string member 'registry'")
        if name in files:
            raise SourceError(display, 1, f"registry {name!r} is also defined in {files[name][0]}")
        files[name] = (display, data)
    return files


def read_mapping_files(root: Path) -> list[tuple[str, Any]]:
    """Every mappings/FORMAT.yaml with its display path; a source without the folder (an older
    tree that `registry diff` reads) has none."""
    return [
        (path.relative_to(root).as_posix(), read_yaml(path, path.relative_to(root).as_posix()))
        for path in sorted((root / MAPPINGS_DIR).glob("*.yaml"))
    ]


@dataclass(frozen=True)
class SourceFiles:
    """Every parsed file of the source under `root`, as `load` joins them."""

    root: Path
    spec: Any
    """spec/llm-stream.yaml."""
    examples: Any
    """spec/examples/examples.yaml, the manifest of the examples."""
    registries: Mapping[str, tuple[str, Any]]
    """registry/*.yaml by registry name, with the display path."""
    mappings: tuple[tuple[str, Any], ...]
    """mappings/*.yaml with the display path."""
    schemas: Mapping[str, SchemaDoc]
    """schemas/**/*.json by $id."""
    input_hash: str
    """The hash of every file of the source (`hash_files`)."""


Judge = Callable[[str, str, Any], None]
"""Called as each YAML file is read with the schema it must satisfy, its display path and its
parsed document (`check_files.check_files` judges them so)."""


def _unjudged(schema: str, display: str, data: Any) -> None:
    """Loading alone judges nothing."""


def read_source(root: Path, judge: Judge = _unjudged, *,
                input_hash: str | None = None) -> SourceFiles:
    """Read and parse every file of the source, handing each YAML document to `judge` as soon
    as it is read, so that the faults of the files read before one that cannot be read are
    still reported; `input_hash` is the hash of the files when the caller has it."""

    def judged(schema: str, display: str, data: Any) -> Any:
        judge(schema, display, data)
        return data

    spec = judged(SPEC_SCHEMA, SPEC_FILE, read_yaml(root / SPEC_FILE, SPEC_FILE))
    examples = judged(EXAMPLES_SCHEMA, EXAMPLES_FILE,
                      read_yaml(root / EXAMPLES_FILE, EXAMPLES_FILE))
    registries = read_registry_files(root)
    for display, data in registries.values():
        judge(REGISTRY_SCHEMA, display, data)
    mappings = tuple(read_mapping_files(root))
    for display, data in mappings:
        judge(MAPPINGS_SCHEMA, display, data)
    schemas = load_schemas(root)
    if input_hash is None:
        input_hash = hash_files(root, source_files(root))
    return SourceFiles(root, spec, examples, registries, mappings, schemas, input_hash)
