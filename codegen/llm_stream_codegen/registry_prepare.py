"""Judge a proposal whole before anything is written, and build what it would write.

Every check of `registry_checks` runs and every problem is reported; then the command builds the
entry and the event schema (`$schema`, `$id`, `allOf` the envelope, `type` fixed to the name),
puts them into a scratch copy of the source and runs the full spec check there (`check.check`),
so that a registration the check would refuse is refused here, with every file as it was.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from .check import check, schema_store
from .load import SOURCE_DIRS
from .model import ENVELOPE_ID, VENDORS, Spec
from .registry_checks import (
    DRAFT_2020_12,
    LIFECYCLE_KEYS,
    built_schema_problems,
    event_schema_id,
    event_schema_path,
    proposal_problems,
)
from .registry_proposal import Proposal, RegistryError
from .registry_yaml import EVENTS_FILE, appended, plain
from .sources import parse_yaml


@dataclass(frozen=True)
class Registration:
    """A registration judged sound: what will be written, and where."""

    name: str
    entry: dict[str, Any]
    schema: dict[str, Any]
    schema_path: str
    registry_text: str
    schema_text: str
    entry_line: int
    """The line of registry/event-types.yaml the new entry starts on."""
    checked: Spec
    """The source with the registration in, as the scratch check loaded it: the files written
    are those files, so regeneration renders it without reading them again."""


def build_schema(name: str, description: str, own: Mapping[str, Any] | None) -> dict[str, Any]:
    """The event schema file: the own fields, composed with the envelope, `type` fixed."""
    rest = dict(own or {})
    for key in ("$schema", "$id", "title", "type"):
        rest.pop(key, None)
    document: dict[str, Any] = {
        "$schema": DRAFT_2020_12,
        "$id": event_schema_id(name),
        "title": name,
        "description": rest.pop("description", description),
    }
    for key in ("x-section", "x-rule", "x-decision"):
        if key in rest:
            document[key] = rest.pop(key)
    extra = [m for m in rest.pop("allOf", None) or [] if m != {"$ref": ENVELOPE_ID}]
    document["allOf"] = [{"$ref": ENVELOPE_ID}, *extra]
    document["type"] = "object"
    required = [r for r in rest.pop("required", None) or [] if r != "type"]
    document["required"] = ["type", *required]
    properties = dict(rest.pop("properties", None) or {})
    properties.pop("type", None)
    document["properties"] = {
        "type": {"description": json.dumps(name), "const": name, "x-rule": "LS-ENV-3"},
        **properties,
    }
    document.update(rest)
    return document


def build_entry(proposal: Proposal, name: str) -> dict[str, Any]:
    """The registry entry, members in the order of registry/event-types.yaml."""
    entry: dict[str, Any] = {
        "name": name,
        "description": " ".join(str(proposal.description).split()),
        "schema": event_schema_path(name),
        "reference": proposal.reference.strip(),
        "status": proposal.status,
        "date": str(proposal.date or date.today().isoformat()),
        "change_controller": proposal.change_controller.strip(),
    }
    for key in ("contact", "reason"):
        value = getattr(proposal, key)
        if value is not None:
            entry[key] = " ".join(str(value).split())
    life = proposal.lifecycle
    entry["lifecycle"] = {key: life[key] for key in LIFECYCLE_KEYS if key in life}
    if proposal.checks:
        entry["checks"] = [dict(check) for check in proposal.checks]
    if proposal.mappings:
        entry["mappings"] = {v: str(proposal.mappings[v]) for v in VENDORS
                             if v in proposal.mappings}
    return entry


@contextlib.contextmanager
def _scratch_copy(root: Path, files: Mapping[str, str]) -> Iterator[Path]:
    """A copy of the spec source with `files` (path -> text) put in, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="llm-stream-registry-") as folder:
        scratch = Path(folder)
        for source in SOURCE_DIRS:
            shutil.copytree(root / source, scratch / source)
        for path, text in files.items():
            (scratch / path).parent.mkdir(parents=True, exist_ok=True)
            (scratch / path).write_text(text, encoding="utf-8")
        yield scratch


def scratch_check(root: Path, files: Mapping[str, str], name: str | None) -> Spec:
    """The full spec check on the source with `files` put in, which compiles the new event's
    validator too; the source as checked, which regeneration renders, or RegistryError."""
    with _scratch_copy(root, files) as scratch:
        spec, errors = check(scratch)
        problems = [f"the spec check refuses it: {error}" for error in errors]
        if spec is not None and not errors and name is not None:
            problems += _compile_problems(spec, name)
    if spec is None or problems:
        raise RegistryError(problems)
    return spec


def _compile_problems(spec: Spec, name: str) -> list[str]:
    from .render_validators import validator_roots
    from .validator_compiler import compile_validators

    event = spec.event_type(name)
    roots = [r for r in validator_roots(spec) if event is not None and r.name == event.identifier]
    try:
        compile_validators(schema_store(spec), roots)
    except Exception as exc:  # the compiler's own error names the node
        return [f"the validator compiler cannot compile the schema: {exc}"]
    return []


def current_spec(root: Path) -> Spec:
    spec, errors = check(root)
    if spec is None or errors:
        raise RegistryError(["the spec source has errors before any change; fix them first:",
                             *(f"  {error}" for error in errors)])
    return spec


def prepare(root: Path, proposal: Proposal) -> Registration:
    """Judge a proposal whole; the registration to write, or RegistryError with every problem."""
    spec = current_spec(root)
    name = proposal.name
    problems = proposal_problems(proposal, spec, root)
    if problems:
        raise RegistryError(problems)
    own = proposal.schema if isinstance(proposal.schema, Mapping) else None
    document = build_schema(name, " ".join(str(proposal.description).split()), own)
    problems = built_schema_problems(document, spec)
    if problems:
        raise RegistryError(problems)
    entry = build_entry(proposal, name)
    old_text = (root / EVENTS_FILE).read_text(encoding="utf-8")
    new_text, line = appended(old_text, entry)
    old_entries = plain(parse_yaml(old_text, EVENTS_FILE).get("entries"))
    new_entries = plain(parse_yaml(new_text, EVENTS_FILE).get("entries"))
    if new_entries != [*old_entries, entry]:
        raise RegistryError([f"appending the entry to {EVENTS_FILE} does not give the entry back "
                             "(the file must end with its entries list)"])
    schema_text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    path = event_schema_path(name)
    checked = scratch_check(root, {EVENTS_FILE: new_text, path: schema_text}, name)
    return Registration(name, entry, document, path, new_text, schema_text, line, checked)
