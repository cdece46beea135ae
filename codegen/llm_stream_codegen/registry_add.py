"""`llm-stream registry add`: register a new event type in one step, or refuse it whole.

The proposal is judged whole first (`registry_prepare.prepare`: every check of
`registry_checks`, then the full spec check on a scratch copy of the source with the new entry
and schema in it), so that a registration is refused with every file as it was and each problem
as one message. Only then are the schema written and the entry appended to
registry/event-types.yaml, and everything regenerated, as one transaction (`registry_write`).
The report names what was written and where the generated model, validator and constants went.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from .output import GENERATED
from .registry_checks import probe_event
from .registry_prepare import prepare
from .registry_proposal import Proposal, RegistryError, refused
from .registry_write import apply, report_generated
from .registry_yaml import EVENTS_FILE, entry_text


def register(
    root: Path, proposal: Proposal, *, dry_run: bool = False,
    out: TextIO | None = None, err: TextIO | None = None,
) -> int:
    """`llm-stream registry add`: 0 registered (or, with dry_run, would be), 1 refused."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        registration = prepare(root, proposal)
    except RegistryError as exc:
        return refused(exc, proposal.source, "registration", err)
    entry = registration.entry
    if dry_run:
        out.write(f"{registration.name} can be registered ({entry['status']}, "
                  f"{_describe_place(entry)}); nothing written (--dry-run).\n\n")
        out.write(f"{EVENTS_FILE}, appended at line {registration.entry_line}:\n\n")
        out.write(entry_text(entry) + "\n")
        out.write(f"{registration.schema_path}:\n\n{registration.schema_text}")
        return 0
    writes = {registration.schema_path: registration.schema_text,
              EVENTS_FILE: registration.registry_text}
    try:
        changed = apply(root, writes, registration.checked, err)
    except RegistryError as exc:
        return refused(exc, proposal.source, "registration", err, written=True)
    out.write(f"registered {registration.name}: {entry['status']}, {_describe_place(entry)}\n")
    out.write(f"  created   {registration.schema_path}\n")
    out.write(f"  appended  {EVENTS_FILE} (the entry starts at line {registration.entry_line})\n")
    report_generated(changed, writes, out)
    probe = probe_event(registration.name)
    for what, path, needle in (
        ("model", "models.py", f"class {probe.class_name}("),
        ("validator", "validators.py", f"def validate_{probe.identifier}("),
        ("constant", "registry.py", f"{probe.identifier.upper()} = "),
        ("lifecycle", "lifecycle.py", f"{json.dumps(registration.name)}: "),
    ):
        full = root / GENERATED / "python" / "llm_stream" / path
        if needle in _read(full):
            shown = needle.removeprefix("class ").removeprefix("def ").rstrip("(: =")
            out.write(f"  {what:<9} {shown} in {full.relative_to(root).as_posix()}\n")
    folder = root / GENERATED / "registry"
    downloads = [f"event-types.{fmt}" for fmt in ("xml", "csv", "json")
                 if registration.name in _read(folder / f"event-types.{fmt}")]
    if downloads:
        out.write(f"  registry  {registration.name} in generated/registry/"
                  f"{{{','.join(downloads)}}}\n")
    out.write("checked: the spec source is consistent; every example is judged as tagged.\n")
    return 0


def _describe_place(entry: Mapping[str, Any]) -> str:
    life = entry["lifecycle"]
    text = f"place {life['place']}"
    if "block_kind" in life:
        text += f", block kind {life['block_kind']}"
    if "per_block" in life:
        text += f", at most {life['per_block']} a block"
    if "closes_with" in life:
        text += f", its block closes with {life['closes_with']}"
    if "completes_block" in life:
        text += ", completes its block"
    if "fragment_of" in life:
        text += f", fragments of {life['fragment_of'].get('event')}"
    return text


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""
