"""`llm-stream registry deprecate`: an event type's status becomes deprecated, with the reason.

The entry is edited in place as text (`registry_yaml.deprecated_text`), read back and compared
with the intended entry, checked on a scratch copy of the source, then written and everything
regenerated as one transaction (`registry_write`). Entries under the IETF's change control are
refused (D-IETF-CONTROL).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from .registry_checks import has_text
from .registry_prepare import current_spec, scratch_check
from .registry_proposal import RegistryError, refused
from .registry_write import apply, report_generated
from .registry_yaml import EVENTS_FILE, deprecated_text, plain
from .sources import parse_yaml

IETF = "IETF"


def _refuse_unless_deprecatable(entries: list[Any], name: str) -> None:
    """A registered entry, not already deprecated, not under the IETF's change control."""
    entry = next((e for e in entries if e.get("name") == name), None)
    if entry is None:
        raise RegistryError([f"no event type {name!r} is registered in {EVENTS_FILE}"])
    if entry.get("change_controller") == IETF:
        raise RegistryError([f"event type {name!r} is controlled by the IETF (change_controller "
                             "IETF): deprecating it takes a document of the IETF that updates "
                             "the standard, not a registration command (D-IETF-CONTROL)"])
    if entry.get("status") == "deprecated":
        raise RegistryError([f"event type {name!r} is already deprecated: "
                             f"{entry.get('deprecated_reason', '(no reason given)')}"])


def deprecate(
    root: Path, name: str, reason: str, *, out: TextIO | None = None, err: TextIO | None = None,
) -> int:
    """`llm-stream registry deprecate`: status deprecated with deprecated_reason; 0 or 1."""
    out, err = out or sys.stdout, err or sys.stderr
    source = f"registry deprecate {name}"
    try:
        if not has_text(reason):
            raise RegistryError(["a deprecation needs a reason (--reason): why, and what to use "
                                 "instead"])
        current_spec(root)
        reason = " ".join(reason.split())
        old_text = (root / EVENTS_FILE).read_text(encoding="utf-8")
        old = parse_yaml(old_text, EVENTS_FILE)
        _refuse_unless_deprecatable(old.get("entries") or [], name)
        new_text = deprecated_text(old_text, old, name, reason)
        wanted = plain(old.get("entries"))
        for entry in wanted:
            if entry["name"] == name:
                entry["status"] = "deprecated"
                entry["deprecated_reason"] = reason
        if plain(parse_yaml(new_text, EVENTS_FILE).get("entries")) != wanted:
            raise RegistryError([f"editing {EVENTS_FILE} as text does not give the intended "
                                 "entry; edit it by hand"])
        checked = scratch_check(root, {EVENTS_FILE: new_text}, None)
        changed = apply(root, {EVENTS_FILE: new_text}, checked, err)
    except RegistryError as exc:
        return refused(exc, source, "deprecation", err)
    out.write(f"deprecated {name}: {reason}\n")
    out.write(f"  changed   {EVENTS_FILE} (status deprecated, deprecated_reason)\n")
    report_generated(changed, {EVENTS_FILE: ""}, out)
    return 0
