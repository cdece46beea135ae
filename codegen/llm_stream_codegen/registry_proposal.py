"""What a maintainer proposes to register, read from a proposal file or from flags.

Values are kept as given: judging them is `registry_checks`' job, so that every problem of a
proposal is reported at once. A refused change is a `RegistryError` with one message a problem.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .model import VENDORS
from .sources import SourceError, read_json, read_yaml

PROPOSAL_KEYS = (
    "name", "description", "schema", "reference", "status", "date", "change_controller",
    "contact", "reason", "lifecycle", "checks", "mappings",
)
FIELD_TYPES = ("string", "integer", "number", "boolean", "object", "array")


class RegistryError(Exception):
    """A registry change refused; `problems` holds one message per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


def refused(
    exc: RegistryError, source: str, what: str, err: TextIO, *, written: bool = False,
) -> int:
    """Report a refused change, each problem prefixed with where the proposal came from; exit
    status 1."""
    for problem in exc.problems:
        prefix = "" if problem.startswith(("  ", source)) else f"{source}: "
        err.write(f"error: {prefix}{problem}\n")
    count = sum(1 for p in exc.problems if not p.startswith("  "))
    if not written:
        err.write(f"{count} problem(s): the {what} is refused; nothing was written.\n")
    return 1


@dataclass
class Proposal:
    """What a maintainer proposes; values are as given, judged by `prepare`."""

    name: Any = None
    description: Any = None
    schema: Any = None
    reference: Any = None
    status: Any = "provisional"
    date: Any = None
    change_controller: Any = None
    contact: Any = None
    reason: Any = None
    lifecycle: Any = field(default_factory=dict)
    checks: Any = field(default_factory=list)
    mappings: Any = field(default_factory=dict)
    source: str = "registry add"
    """Where it comes from, for messages: the proposal file, or "registry add" for flags."""


def proposal_from_data(data: Any, source: str) -> Proposal:
    """A proposal from a parsed YAML document; refuses what is not a mapping of known members."""
    if not isinstance(data, Mapping):
        raise RegistryError([f"{source}: a proposal is a mapping of {', '.join(PROPOSAL_KEYS)}"])
    unknown = [str(key) for key in data if key not in PROPOSAL_KEYS]
    if unknown:
        raise RegistryError([f"{source}: unknown member(s) {', '.join(unknown)}; a proposal has "
                             f"{', '.join(PROPOSAL_KEYS)}"])
    proposal = Proposal(source=source)
    for key, value in data.items():
        setattr(proposal, key, value)
    if proposal.lifecycle is None:
        proposal.lifecycle = {}
    return proposal


def read_proposal(path: Path) -> Proposal:
    try:
        data = read_yaml(path, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError([f"{path}: cannot read the proposal: {exc}"]) from exc
    except SourceError as exc:
        raise RegistryError([str(exc)]) from exc
    return proposal_from_data(data, str(path))


def read_schema_file(path: Path) -> Any:
    """The schema of an event's own fields from a JSON or YAML file."""
    try:
        if path.suffix == ".json":
            return read_json(path, str(path))
        return read_yaml(path, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError([f"{path}: cannot read the schema: {exc}"]) from exc
    except SourceError as exc:
        raise RegistryError([str(exc)]) from exc


def schema_from_fields(specs: Sequence[str]) -> dict[str, Any]:
    """A schema of own fields from `--field PATH:TYPE[:required|optional[:DESCRIPTION]]` flags.

    A dotted path makes nested objects (`delta.text:string:required`); an object created on the
    way is required when anything inside it is, unless a flag of its own says otherwise.
    """
    problems: list[str] = []
    root: dict[str, Any] = {"properties": {}}
    explicit: set[tuple[str, ...]] = set()
    for spec in specs:
        path_text, _, rest = spec.partition(":")
        kind, _, rest = rest.partition(":")
        presence, _, description = rest.partition(":")
        path = tuple(path_text.split("."))
        if not path_text or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) for p in path):
            problems.append(f"--field {spec!r}: the path is dotted field names, e.g. delta.text")
            continue
        if kind not in FIELD_TYPES:
            problems.append(f"--field {spec!r}: the type is one of {', '.join(FIELD_TYPES)}")
            continue
        if presence not in ("", "required", "optional"):
            problems.append(f"--field {spec!r}: after the type comes required or optional")
            continue
        node = root
        for depth, part in enumerate(path[:-1]):
            child = node.setdefault("properties", {}).setdefault(part, {"type": "object"})
            if presence == "required" and path[: depth + 1] not in explicit:
                _require(node, part)
            node = child
        leaf = node.setdefault("properties", {}).setdefault(path[-1], {})
        leaf["type"] = kind
        if description:
            leaf["description"] = description
        explicit.add(path)
        if presence == "required":
            _require(node, path[-1])
        elif path[-1] in node.get("required", []):
            node["required"].remove(path[-1])
    if problems:
        raise RegistryError(problems)
    return root


def _require(node: dict[str, Any], name: str) -> None:
    required = node.setdefault("required", [])
    if name not in required:
        required.append(name)


def mappings_from_flags(specs: Sequence[str]) -> dict[str, str]:
    """`--mapping VENDOR=TEXT` flags as the registry's mappings."""
    result: dict[str, str] = {}
    for spec in specs:
        vendor, sep, text = spec.partition("=")
        if not sep or not text.strip():
            raise RegistryError([f"--mapping {spec!r}: give VENDOR=TEXT, VENDOR one of "
                                 f"{', '.join(VENDORS)}"])
        result[vendor.strip()] = text.strip()
    return result
