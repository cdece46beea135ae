"""`llm-stream registry diff`: two folders or two git refs, changes classified as compatible or
breaking, and the verdict `nox -s verify` relies on."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from llm_stream_codegen.cli import main
from llm_stream_codegen.registry_diff import BREAKING, COMPATIBLE, RegistryDiff, diff, run

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ("spec", "schemas", "registry")


def copy_source(target: Path) -> Path:
    for folder in SOURCE:
        shutil.copytree(ROOT / folder, target / folder)
    return target


def edit_schema(root: Path, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = root / "schemas/events" / f"{name}.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2) + "\n")


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def kinds(result: RegistryDiff, event: str) -> dict[str, str]:
    """message -> kind of the changes to one event type."""
    return {f"{c.where}: {c.message}": c.kind for c in result.changes if c.event == event}


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    return copy_source(tmp_path / "old"), copy_source(tmp_path / "new")


def _compatible(new: Path) -> None:
    edit_schema(new, "tool.call", lambda d: d["properties"].update(
        note={"description": "A vendor note.", "type": "string"}))
    edit_schema(new, "usage", lambda d: d["properties"]["cached_input_tokens"].pop("minimum"))
    edit_schema(new, "content.delta", lambda d: d["properties"]["index"].update(
        description="Another description."))
    replace(new / "registry/stop-reasons.yaml", "entries:\n", "entries:\n"
            "  - value: refusal\n    description: The model refused.\n    reference: "
            "\"#content-stop\"\n    status: provisional\n    date: 2026-12-02\n"
            "    reason: A test.\n")


def _breaking(new: Path) -> None:
    edit_schema(new, "usage", lambda d: (d["required"].append("total_tokens"),
                                         d["properties"].update(total_tokens={"type": "integer"})))
    edit_schema(new, "stream.end", lambda d: d["properties"].pop("request_id"))
    edit_schema(new, "stream.start", lambda d: d["properties"]["request_id"].update(
        pattern="^[0-9a-f-]+$"))
    edit_schema(new, "content.stop", lambda d: d["properties"]["index"].update(maximum=1000))
    replace(new / "registry/error-codes.yaml", "  - value: overloaded\n",
            "  - value: x_overloaded\n")


def test_identical_sides_have_no_changes(sides: tuple[Path, Path]) -> None:
    old, new = sides
    result = diff(str(old), str(new), ROOT)
    assert (result.added, result.removed, result.deprecated, result.changes) == ([], [], [], [])


def test_compatible_changes(sides: tuple[Path, Path]) -> None:
    old, new = sides
    _compatible(new)
    result = diff(str(old), str(new), ROOT)
    assert kinds(result, "tool.call") == {"/: added optional field 'note'": COMPATIBLE}
    assert kinds(result, "usage") == {
        "/properties/cached_input_tokens: removed minimum 0": COMPATIBLE}
    assert kinds(result, "content.stop") == {
        '/properties/stop_reason: added enum value(s) ["refusal"]': COMPATIBLE}
    assert "content.delta" not in {c.event for c in result.changes}, "descriptions do not count"
    assert result.breaking == []
    assert run(str(old), str(new), against=None, root=ROOT, fail_on_breaking=True,
               out=io.StringIO(), err=io.StringIO()) == 0


def test_breaking_changes(sides: tuple[Path, Path]) -> None:
    old, new = sides
    _breaking(new)
    result = diff(str(old), str(new), ROOT)
    assert kinds(result, "usage") == {
        "/: new required field 'total_tokens'": BREAKING,
    }
    assert kinds(result, "stream.end") == {"/: removed field 'request_id'": BREAKING}
    assert kinds(result, "stream.start") == {
        '/properties/request_id: added pattern "^[0-9a-f-]+$"': BREAKING}
    assert kinds(result, "content.stop") == {"/properties/index: added maximum 1000": BREAKING}
    assert kinds(result, "error") == {
        '/properties/code: removed enum value(s) ["overloaded"]': BREAKING,
        '/properties/code: added enum value(s) ["x_overloaded"]': COMPATIBLE,
    }
    assert len(result.breaking_permanent) == 5


def test_a_narrowed_type_list_is_breaking_and_a_widened_one_compatible(
    sides: tuple[Path, Path],
) -> None:
    old, new = sides
    edit_schema(old, "stream.end", lambda d: d["properties"]["request_id"].update(
        type=["string", "null"]))
    edit_schema(new, "stream.start", lambda d: d["properties"]["created"].update(type="number"))
    result = diff(str(old), str(new), ROOT)
    assert kinds(result, "stream.end") == {
        "/properties/request_id: type narrowed from null/string to string": BREAKING}
    assert kinds(result, "stream.start") == {
        "/properties/created: type widened from integer to number": COMPATIBLE}
    back = diff(str(new), str(old), ROOT)
    assert kinds(back, "stream.start") == {
        "/properties/created: type narrowed from number to integer": BREAKING}


def test_added_removed_deprecated_and_lifecycle(sides: tuple[Path, Path]) -> None:
    old, new = sides
    events = new / "registry/event-types.yaml"
    text = events.read_text()
    start = text.index("  - name: tool.call.delta\n")
    events.write_text(text[:start].rstrip("\n") + "\n")
    (new / "schemas/events/tool.call.delta.json").unlink()
    replace(events, "    status: permanent\n    date: 2026-07-18\n    change_controller: IETF\n"
            "    lifecycle:\n      place: any\n",
            "    status: deprecated\n    deprecated_reason: Counted elsewhere.\n"
            "    date: 2026-07-18\n    change_controller: IETF\n    lifecycle:\n      place: any\n")
    replace(events, "      block_kind: reasoning\n      per_block: 1\n",
            "      block_kind: reasoning\n")
    result = diff(str(old), str(new), ROOT)
    assert [e.name for e in result.removed] == ["tool.call.delta"]
    assert [e.name for e in result.deprecated] == ["usage"]
    assert kinds(result, "reasoning.signature") == {
        "lifecycle: per_block changed from 1 to None": COMPATIBLE}
    assert result.breaking_permanent == [], "removing a provisional type is allowed"
    added = diff(str(new), str(old), ROOT)
    assert [e.name for e in added.added] == ["tool.call.delta"]
    assert kinds(added, "reasoning.signature") == {
        "lifecycle: per_block changed from None to 1": BREAKING}


def test_an_added_check_is_breaking_unless_it_only_warns(sides: tuple[Path, Path]) -> None:
    old, new = sides
    events_file = "registry/event-types.yaml"
    check = ("    checks:\n"
             "      - {check: echoes-request-metadata, field: request_id, rule: LS-META-2}\n")
    replace(old / events_file, check, "")  # the first: stream.start's
    replace(new / events_file, "      - {check: unique, field: id, rule: LS-CALL-3}\n", "")
    result = diff(str(old), str(new), ROOT)
    assert kinds(result, "stream.start") == {
        "checks: added check echoes-request-metadata of request_id (its breach is a warning, "
        "LS-META-2)": COMPATIBLE}
    assert kinds(result, "tool.call") == {"checks: removed check unique of id": COMPATIBLE}
    back = diff(str(new), str(old), ROOT)
    assert kinds(back, "tool.call") == {"checks: added check unique of id": BREAKING}


def test_fail_on_breaking_unless_the_version_is_raised(sides: tuple[Path, Path]) -> None:
    old, new = sides
    _breaking(new)
    status, out, err = cli("registry", "diff", str(old), str(new), "--fail-on-breaking")
    assert status == 1
    assert "usage (permanent): breaking: /: new required field 'total_tokens'" in out
    assert "5 breaking change(s) to permanent event types" in err
    assert cli("registry", "diff", str(old), str(new))[0] == 0, "reported, not failed"
    replace(new / "spec/llm-stream.yaml", 'version: "1.0"', 'version: "1.1"')
    status, out, _ = cli("registry", "diff", str(old), str(new), "--fail-on-breaking")
    assert status == 0
    assert "allowed: the spec version was raised (1.0 -> 1.1)" in out


def test_breaking_changes_to_provisional_types_do_not_fail(sides: tuple[Path, Path]) -> None:
    old, new = sides
    edit_schema(new, "tool.call.delta", lambda d: d["required"].append("id"))
    status, out, _ = cli("registry", "diff", str(old), str(new), "--fail-on-breaking")
    assert status == 0
    assert "tool.call.delta (provisional): breaking: /: new required field 'id'" in out


def test_an_unreadable_side_is_a_usage_error(tmp_path: Path) -> None:
    status, _, err = cli("registry", "diff", str(tmp_path / "nope"), str(ROOT),
                         "--root", str(tmp_path))
    assert status == 2
    assert "is neither a folder nor a git ref" in err


# -- git refs and --against -----------------------------------------------------------------------


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org",
                    *args], check=True, capture_output=True)


def test_git_refs_and_against(tmp_path: Path) -> None:
    repo = copy_source(tmp_path / "repo")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    status, out, _ = cli("registry", "diff", "--against", "auto", "--fail-on-breaking",
                         "--root", str(repo))
    assert status == 0
    assert "skipped, HEAD has no parent commit here" in out

    _breaking(repo)
    git(repo, "commit", "-q", "-am", "two")
    status, out, err = cli("registry", "diff", "HEAD~1", "HEAD", "--fail-on-breaking",
                           "--root", str(repo))
    assert status == 1, out + err
    assert "stream.end (permanent): breaking: /: removed field 'request_id'" in out
    status, out, _ = cli("registry", "diff", "--against", "auto", "--fail-on-breaking",
                         "--root", str(repo))
    assert status == 1
    assert "comparing with the previous commit (HEAD~1)" in out
    replace(repo / "spec/llm-stream.yaml", 'version: "1.0"', 'version: "2.0"')
    status, out, _ = cli("registry", "diff", "--against", "HEAD~1", "--fail-on-breaking",
                         "--root", str(repo))
    assert status == 0, "the working tree raised the version"
