"""Stage one of the spec check: every file of the source is well-formed (the spec's files, the
registry and mappings files against their schemas, every schema against the 2020-12
meta-schema), each fault named with its file and line.

The files are judged as they are read (`source_files.read_source`), and `load` joins what was
read. A source found well-formed is remembered under the hash of its files, of the code that
judges them and of the versions of jsonschema and its format checkers (`output_cache`), so that
the next command over the same source reads and parses the files but does not judge them again;
a source with faults is judged every time, so that its errors are always reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import output_cache
from .model import SchemaDoc
from .source_files import SourceFiles, hash_files, read_source, source_files
from .sources import SourceError, json_line, line_of, read_json

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

JUDGING_CODE = ("check_files.py", "source_files.py", "sources.py")
"""The modules whose code decides a verdict, part of its key."""
JUDGING_PACKAGES = ("jsonschema", "rfc3339-validator", "rfc3986-validator", "rfc3987",
                    "jsonpointer", "uri-template", "webcolors", "isoduration", "fqdn", "idna")
"""jsonschema and the packages its format checker asserts formats with, when installed."""


@cache
def meta_validator() -> Draft202012Validator:
    """The meta-schema, its formats asserted: a `pattern` that is not a regular expression is a
    fault of the source, not a crash of the validator compiler."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA,
                                format_checker=Draft202012Validator.FORMAT_CHECKER)


def check_files(root: Path) -> tuple[SourceFiles | None, list[SourceError]]:
    """Stage one: the spec's files, every registry file and every schema are well-formed.
    Returns the files as read (None when one cannot be read), for `load` to join."""
    input_hash = hash_files(root, source_files(root))
    verdict = _verdict_key(input_hash)
    if output_cache.known(verdict):
        return read_source(root, input_hash=input_hash), []
    from jsonschema import Draft202012Validator

    errors: list[SourceError] = []
    validators: dict[str, Draft202012Validator] = {}

    def judge(schema_path: str, display: str, data: Any) -> None:
        if schema_path not in validators:
            validators[schema_path] = Draft202012Validator(read_json(root / schema_path,
                                                                     schema_path))
        errors.extend(_against(schema_path, display, data, validators[schema_path]))

    try:
        files = read_source(root, judge, input_hash=input_hash)
    except SourceError as exc:
        return None, [*errors, exc]
    for doc in files.schemas.values():
        for error in meta_validator().iter_errors(doc.document):
            where = "/".join(str(p) for p in error.absolute_path)
            errors.append(SourceError(
                doc.path or doc.id, schema_line(root, doc, error.absolute_path),
                f"not a valid JSON Schema 2020-12 at /{where}: {error.message}",
            ))
    if not errors:
        output_cache.remember(verdict)
    return files, errors


def _verdict_key(input_hash: str) -> str:
    here = Path(__file__).resolve().parent
    code = [(here / name).read_text(encoding="utf-8") for name in JUDGING_CODE]
    return output_cache.cache_key("well-formed source", {"files": input_hash, "code": code},
                                  JUDGING_PACKAGES)


def schema_line(root: Path, doc: SchemaDoc, path: Iterator[Any] | list[Any]) -> int:
    """The line of the node at `path` in a schema file (0 when it has no file)."""
    if not doc.path:
        return 0
    try:
        return json_line((root / doc.path).read_text(encoding="utf-8"), list(path))
    except OSError:
        return 0


def _line_at(document: Any, path: Iterator[Any] | list[Any]) -> int:
    """The line of the deepest located mapping on `path` inside a YAML document."""
    line, node = line_of(document), document
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
        line = line_of(node) or line
    return line


def _against(schema_path: str, display: str, data: Any,
             validator: Draft202012Validator) -> Iterator[SourceError]:
    """The faults of one YAML document against its schema, each at its entry's line."""
    from jsonschema.exceptions import best_match

    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        shown = best_match([error])
        path = list(shown.absolute_path)
        yield SourceError(display, _line_at(data, path),
                          f"{_entry_name(data, path)}does not satisfy {schema_path}: "
                          f"{shown.message}")


def _entry_name(data: Any, path: list[Any]) -> str:
    """How an error names the entry it is in: by its name, value, id or file, else its number;
    a map of a mappings file by its name."""
    if len(path) >= 2 and path[0] == "maps" and isinstance(data, dict):
        return f"map {path[1]!r}: "
    if len(path) >= 2 and isinstance(path[1], int) and isinstance(data, dict):
        entry = data[path[0]][path[1]]
        if isinstance(entry, dict):
            name = next((entry[k] for k in ("name", "value", "id", "file") if k in entry), None)
            return f"entry {name!r}: " if name else f"entry {path[1] + 1}: "
    return ""


