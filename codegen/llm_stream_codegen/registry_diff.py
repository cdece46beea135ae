"""`llm-stream registry diff`: what changed in the event type registry between two versions.

Each side is a folder holding the spec source or a git ref (read with `git archive`), loaded into
the resolved model (`load.load`). The report lists the event types added, removed and deprecated,
and compares the schema and the lifecycle of every event type on both sides. Each schema change is
classified: **breaking** when an event the old schema accepted may be refused by the new one, or a
field consumers rely on goes (a new required field, a removed field, a narrowed type, an added
enum/const/pattern/bound, a removed enum value), else **compatible**. Schemas are compared after
inlining every `$ref` (so the envelope and the value registries count) and folding `allOf`; a
change the comparison does not analyse (`anyOf`, `if`, ...) is reported as breaking, to be safe.

With `--fail-on-breaking` the command fails on a breaking change to an event type that was
permanent, or the removal of one, unless the spec's `version` (spec/llm-stream.yaml) was raised.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .load import SOURCE_DIRS, load
from .model import EventLifecycle, EventType, Fragments, Spec
from .schema_walk import resolve_ref, split_ref
from .sources import SourceError

BREAKING = "breaking"
COMPATIBLE = "compatible"
ANNOTATIONS = frozenset({
    "title", "description", "examples", "default", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$anchor", "$defs", "definitions", "format",
    "contentEncoding", "contentMediaType", "contentSchema",
})
_NOT_SCHEMAS = frozenset({"enum", "const", "required", "examples", "default"})
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_HANDLED = frozenset({
    "type", "const", "enum", "pattern", "multipleOf", "uniqueItems", "required", "properties",
    "additionalProperties", "items", "allOf", *UPPER_BOUNDS, *LOWER_BOUNDS,
})


@dataclass(frozen=True)
class Change:
    event: str
    status: str
    """The event type's status on the old side."""
    kind: str
    """BREAKING or COMPATIBLE."""
    where: str
    """A JSON pointer into the event schema, or "lifecycle"."""
    message: str

    def __str__(self) -> str:
        return f"{self.event} ({self.status}): {self.kind}: {self.where}: {self.message}"


@dataclass
class RegistryDiff:
    old_label: str
    new_label: str
    old_version: str
    new_version: str
    added: list[EventType] = field(default_factory=list)
    removed: list[EventType] = field(default_factory=list)
    deprecated: list[EventType] = field(default_factory=list)
    status_changes: list[tuple[str, str, str]] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.kind == BREAKING]

    @property
    def breaking_permanent(self) -> list[Change]:
        """Breaking changes to permanent event types, removals of permanent ones included."""
        removed = [Change(e.name, e.status, BREAKING, "registry", "removed") for e in self.removed
                   if e.status == "permanent"]
        return removed + [c for c in self.breaking if c.status == "permanent"]

    @property
    def version_raised(self) -> bool:
        return _version(self.new_version) > _version(self.old_version)


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return ()


# -- the two sides --------------------------------------------------------------------------------


class DiffError(Exception):
    """A side that cannot be read (not a folder, not a git ref, not a loadable source)."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def resolve_commit(root: Path, ref: str) -> str | None:
    result = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return result.stdout.decode().strip() if result.returncode == 0 else None


@contextmanager
def source_tree(side: str, root: Path) -> Iterator[Path]:
    """The folder of one side: `side` itself when it is a folder, else the tree of the git ref
    `side` (of the repository at `root`) unpacked into a temporary folder."""
    folder = Path(side)
    if folder.is_dir():
        yield folder
        return
    commit = resolve_commit(root, side)
    if commit is None:
        raise DiffError(f"{side!r} is neither a folder nor a git ref of {root}")
    with tempfile.TemporaryDirectory(prefix="llm-stream-diff-") as scratch:
        present = _git(root, "ls-tree", "--name-only", commit, "--", *SOURCE_DIRS)
        folders = present.stdout.decode().split() or list(SOURCE_DIRS)
        archive = _git(root, "archive", "--format=tar", commit, "--", *folders)
        if archive.returncode != 0:
            raise DiffError(f"git archive {side}: {archive.stderr.decode().strip()}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(scratch, filter="data")
        yield Path(scratch)


def load_side(folder: Path, label: str) -> Spec:
    try:
        return load(folder)
    except (SourceError, OSError, KeyError, TypeError) as exc:
        raise DiffError(f"{label}: cannot load the spec source: {exc}") from exc


# -- schemas --------------------------------------------------------------------------------------


def inline(node: Any, base_id: str, spec: Spec, stack: tuple[str, ...] = ()) -> Any:
    """`node` with every `$ref` replaced by (an `allOf` with) the schema it points to; a ref
    met again inside itself stays a ref, compared by its target."""
    if isinstance(node, list):
        return [inline(item, base_id, spec, stack) for item in node]
    if not isinstance(node, Mapping):
        return node
    out = {key: value if key in _NOT_SCHEMAS or key.startswith("x-")
           else inline(value, base_id, spec, stack)
           for key, value in node.items() if key != "$ref"}
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return out
    doc_id, fragment = split_ref(base_id, ref)
    target_key = f"{doc_id}#{fragment}"
    target = resolve_ref(spec.schemas, base_id, ref)
    if target is None or target_key in stack:
        resolved: Any = {"$ref": target_key}
    else:
        resolved = inline(target, doc_id, spec, (*stack, target_key))
    return {"allOf": [resolved, out]} if out else resolved


def _types(node: Mapping[str, Any]) -> set[str] | None:
    value = node.get("type")
    if value is None:
        return None
    return {value} if isinstance(value, str) else set(value)


def flatten(node: Any) -> dict[str, Any]:
    """One node's constraints with its `allOf` members folded in (properties merged by name,
    required joined, types and enums intersected, the tighter bound kept)."""
    if not isinstance(node, Mapping):
        return {} if node is True or node is None else {"not": {}}
    out = {k: v for k, v in node.items() if k != "allOf"}
    for member in node.get("allOf") or ():
        _merge(out, flatten(member))
    return out


def _merge(out: dict[str, Any], other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if key not in out:
            out[key] = value
        elif key == "properties":
            merged = dict(out[key])
            for name, schema in value.items():
                merged[name] = {"allOf": [merged[name], schema]} if name in merged else schema
            out[key] = merged
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type":
            a, b = _types(out) or set(), _types({"type": value}) or set()
            out[key] = sorted(a & b)
        elif key == "enum":
            out[key] = [v for v in out[key] if v in value]
        elif key in UPPER_BOUNDS:
            out[key] = min(out[key], value)
        elif key in LOWER_BOUNDS:
            out[key] = max(out[key], value)


def _covers(types: set[str], kind: str) -> bool:
    return kind in types or (kind == "integer" and "number" in types)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def compare_schemas(old: Any, new: Any, pointer: str = "") -> Iterator[tuple[str, str, str]]:
    """(kind, pointer, message) for each difference between two inlined schemas."""
    a, b = flatten(old), flatten(new)
    where = pointer or "/"
    old_types, new_types = _types(a), _types(b)
    if old_types != new_types:
        if new_types is not None and (
            old_types is None or any(not _covers(new_types, t) for t in old_types)
        ):
            was = "any type" if old_types is None else "/".join(sorted(old_types))
            yield BREAKING, where, f"type narrowed from {was} to {'/'.join(sorted(new_types))}"
        else:
            now = "any type" if new_types is None else "/".join(sorted(new_types))
            was = "/".join(sorted(old_types or ()))
            yield COMPATIBLE, where, f"type widened from {was} to {now}"
    for key in ("const", "pattern", "multipleOf"):
        if key in b and (key not in a or a[key] != b[key]):
            verb = "added" if key not in a else "changed"
            yield BREAKING, where, f"{verb} {key} {_text(b[key])}"
        elif key in a and key not in b:
            yield COMPATIBLE, where, f"removed {key} {_text(a[key])}"
    if "enum" in b and "enum" not in a:
        yield BREAKING, where, f"added enum {_text(b['enum'])}"
    elif "enum" in a and "enum" not in b:
        yield COMPATIBLE, where, "removed enum"
    elif "enum" in a:
        gone = [v for v in a["enum"] if v not in b["enum"]]
        new_values = [v for v in b["enum"] if v not in a["enum"]]
        if gone:
            yield BREAKING, where, f"removed enum value(s) {_text(gone)}"
        if new_values:
            yield COMPATIBLE, where, f"added enum value(s) {_text(new_values)}"
    for key in UPPER_BOUNDS:
        yield from _bound(a, b, key, where, tighter=lambda x, y: y < x)
    for key in LOWER_BOUNDS:
        yield from _bound(a, b, key, where, tighter=lambda x, y: y > x)
    if b.get("uniqueItems") is True and a.get("uniqueItems") is not True:
        yield BREAKING, where, "added uniqueItems"
    old_required, new_required = list(a.get("required", [])), list(b.get("required", []))
    for name in new_required:
        if name not in old_required:
            yield BREAKING, where, f"new required field {name!r}"
    for name in old_required:
        if name not in new_required:
            yield COMPATIBLE, where, f"field {name!r} no longer required"
    old_props, new_props = a.get("properties") or {}, b.get("properties") or {}
    for name in old_props:
        if name not in new_props:
            yield BREAKING, where, f"removed field {name!r}"
    for name in new_props:
        if name not in old_props and name not in new_required:
            yield COMPATIBLE, where, f"added optional field {name!r}"
    for name in old_props:
        if name in new_props:
            yield from compare_schemas(old_props[name], new_props[name],
                                       f"{pointer}/properties/{name}")
    old_extra, new_extra = a.get("additionalProperties", True), b.get("additionalProperties", True)
    if old_extra is not False and new_extra is False:
        yield BREAKING, where, "additionalProperties made false"
    elif old_extra is False and new_extra is not False:
        yield COMPATIBLE, where, "additionalProperties no longer false"
    elif isinstance(old_extra, Mapping) or isinstance(new_extra, Mapping):
        yield from compare_schemas(old_extra, new_extra, f"{pointer}/additionalProperties")
    if "items" in a or "items" in b:
        if "items" not in a:
            yield BREAKING, where, "added items"
        elif "items" not in b:
            yield COMPATIBLE, where, "removed items"
        else:
            yield from compare_schemas(a["items"], b["items"], f"{pointer}/items")
    for key in sorted(set(a) | set(b)):
        if key in _HANDLED or key in ANNOTATIONS or key.startswith("x-"):
            continue
        if _text(a.get(key)) != _text(b.get(key)):
            yield BREAKING, where, f"changed {key} (not analysed, so counted as breaking)"


def _bound(
    a: Mapping[str, Any], b: Mapping[str, Any], key: str, where: str, *, tighter: Any,
) -> Iterator[tuple[str, str, str]]:
    if key in b and key not in a:
        yield BREAKING, where, f"added {key} {_text(b[key])}"
    elif key in a and key not in b:
        yield COMPATIBLE, where, f"removed {key} {_text(a[key])}"
    elif key in a and a[key] != b[key]:
        kind = BREAKING if tighter(a[key], b[key]) else COMPATIBLE
        yield kind, where, f"{key} changed from {_text(a[key])} to {_text(b[key])}"


def _event_schema(spec: Spec, event: EventType) -> Any:
    doc = spec.schemas.get(event.schema_id)
    return inline(doc.document, event.schema_id, spec) if doc is not None else {}


def compare_lifecycles(old: EventLifecycle, new: EventLifecycle) -> Iterator[tuple[str, str]]:
    """(kind, message) for each difference of place, block kind, per_block, closes_with,
    completes_block and fragment_of; a new constraint is breaking, a dropped one is not."""
    if old.place != new.place:
        yield BREAKING, f"place changed from {old.place} to {new.place}"
    if old.block_kind != new.block_kind and old.place == new.place:
        yield BREAKING, f"block_kind changed from {old.block_kind} to {new.block_kind}"
    if old.per_block != new.per_block:
        tighter = new.per_block is not None and (old.per_block is None
                                                 or new.per_block < old.per_block)
        yield (BREAKING if tighter else COMPATIBLE,
               f"per_block changed from {old.per_block} to {new.per_block}")
    if old.closes_with != new.closes_with:
        yield (BREAKING if new.closes_with is not None else COMPATIBLE,
               f"closes_with changed from {old.closes_with} to {new.closes_with}")
    if old.completes_block != new.completes_block:
        yield (BREAKING if new.completes_block is not None else COMPATIBLE,
               f"completes_block changed from {old.completes_block} to {new.completes_block}")
    if old.fragment_of != new.fragment_of:
        yield (BREAKING if new.fragment_of is not None else COMPATIBLE,
               f"fragment_of changed from {_fragments_text(old.fragment_of)} to "
               f"{_fragments_text(new.fragment_of)}")


def _fragments_text(fragments: Fragments | None) -> str:
    if fragments is None:
        return "None"
    return f"{fragments.event}.{fragments.field}"


def diff_specs(old: Spec, new: Spec, old_label: str, new_label: str) -> RegistryDiff:
    result = RegistryDiff(old_label, new_label, old.meta.version, new.meta.version)
    old_events = {e.name: e for e in old.event_types}
    new_events = {e.name: e for e in new.event_types}
    result.added = [e for name, e in new_events.items() if name not in old_events]
    result.removed = [e for name, e in old_events.items() if name not in new_events]
    for name, before in old_events.items():
        after = new_events.get(name)
        if after is None:
            continue
        if before.status != after.status:
            result.status_changes.append((name, before.status, after.status))
            if after.status == "deprecated":
                result.deprecated.append(after)
        for kind, where, message in compare_schemas(_event_schema(old, before),
                                                    _event_schema(new, after)):
            result.changes.append(Change(name, before.status, kind, where, message))
        for kind, message in compare_lifecycles(before.lifecycle, after.lifecycle):
            result.changes.append(Change(name, before.status, kind, "lifecycle", message))
        old_checks = {(c.check, c.field) for c in before.checks}
        new_checks = {(c.check, c.field): c.rule for c in after.checks}
        for check, field_name in sorted(set(new_checks) - old_checks):
            rule = new.rules.get(new_checks[check, field_name])
            if rule is not None and rule.severity == "warning":
                # a check that only warns leaves every conforming stream conforming
                kind, note = COMPATIBLE, f" (its breach is a warning, {rule.id})"
            else:
                kind, note = BREAKING, ""
            result.changes.append(Change(name, before.status, kind, "checks",
                                         f"added check {check} of {field_name}{note}"))
        for check, field_name in sorted(old_checks - set(new_checks)):
            result.changes.append(Change(name, before.status, COMPATIBLE, "checks",
                                         f"removed check {check} of {field_name}"))
    return result


def diff(old: str, new: str, root: Path) -> RegistryDiff:
    """Compare two sides, each a folder or a git ref of the repository at `root`."""
    with ExitStack() as stack:
        old_folder = stack.enter_context(source_tree(old, root))
        new_folder = stack.enter_context(source_tree(new, root))
        return diff_specs(load_side(old_folder, old), load_side(new_folder, new), old, new)


# -- the base to compare with ---------------------------------------------------------------------


def default_base(root: Path) -> tuple[str | None, str]:
    """The commit `--against auto` compares with, and why: the merge base with the upstream
    branch when the branch has commits of its own, else the previous commit; None when there is
    neither (a fresh single-commit or shallow clone)."""
    head = resolve_commit(root, "HEAD")
    if head is None:
        return None, "no git commit to compare with"
    upstream = _git(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    if upstream.returncode == 0:
        name = upstream.stdout.decode().strip()
        base = _git(root, "merge-base", "HEAD", name)
        commit = base.stdout.decode().strip()
        if base.returncode == 0 and commit and commit != head:
            return commit, f"the merge base with {name}"
    previous = resolve_commit(root, "HEAD~1")
    if previous is not None:
        return previous, "the previous commit (HEAD~1)"
    return None, "HEAD has no parent commit here (a single-commit or shallow clone)"


# -- report ---------------------------------------------------------------------------------------


def report(result: RegistryDiff, out: TextIO) -> None:
    out.write(f"registry diff {result.old_label} -> {result.new_label} "
              f"(spec version {result.old_version} -> {result.new_version})\n")

    def names(events: Sequence[EventType]) -> str:
        return ", ".join(f"{e.name} ({e.status})" for e in events) or "none"

    out.write(f"added: {names(result.added)}\n")
    out.write(f"removed: {names(result.removed)}\n")
    out.write(f"deprecated: {names(result.deprecated)}\n")
    for name, before, after in result.status_changes:
        if after != "deprecated":
            out.write(f"status: {name} {before} -> {after}\n")
    if not result.changes:
        out.write("schema and lifecycle changes: none\n")
        return
    out.write("schema and lifecycle changes:\n")
    for change in result.changes:
        out.write(f"  {change}\n")


def run(
    old: str | None, new: str | None, *, against: str | None, root: Path,
    fail_on_breaking: bool, out: TextIO | None = None, err: TextIO | None = None,
) -> int:
    """The command: 0 (1 with fail_on_breaking and a breaking change to a permanent event type
    while the spec version stayed), 2 when a side cannot be read or the arguments are wrong."""
    out, err = out or sys.stdout, err or sys.stderr
    if against is not None:
        if old is not None or new is not None:
            err.write("error: give either OLD NEW or --against REF, not both\n")
            return 2
        if against == "auto":
            base, why = default_base(root)
            if base is None:
                out.write(f"registry diff: skipped, {why}: nothing to compare with.\n")
                return 0
            out.write(f"registry diff: comparing with {why}, {base[:12]}\n")
            against = base[:12]
        old, new = against, str(root)
    if old is None or new is None:
        err.write("error: give OLD and NEW (folders or git refs), or --against REF\n")
        return 2
    try:
        result = diff(old, new, root)
    except DiffError as exc:
        err.write(f"error: {exc}\n")
        return 2
    report(result, out)
    breaking = result.breaking_permanent
    if not breaking:
        out.write("verdict: no breaking change to a permanent event type.\n")
        return 0
    if result.version_raised:
        out.write(f"verdict: {len(breaking)} breaking change(s) to permanent event types, "
                  f"allowed: the spec version was raised ({result.old_version} -> "
                  f"{result.new_version}).\n")
        return 0
    message = (f"verdict: {len(breaking)} breaking change(s) to permanent event types, and the "
               f"spec version stayed {result.new_version}; raise `version` in "
               "spec/llm-stream.yaml or make the change compatible.\n")
    if fail_on_breaking:
        err.write(message)
        return 1
    out.write(message)
    return 0
