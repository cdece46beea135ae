"""`llm-stream registry add` and `deprecate` on throwaway copies of the project.

A registration shows up everywhere it belongs (registry, schema, models, validators, lifecycle
tables, the decoder, the documentation and the registry downloads); each kind of bad registration
is refused with its own message and leaves every file of the copy byte for byte as it was; a
failed or interrupted regeneration puts every file back.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_stream_codegen import registry_add, registry_proposal, registry_regenerate
from llm_stream_codegen.check import check
from llm_stream_codegen.cli import main
from llm_stream_codegen.load import SOURCE_DIRS, load
from llm_stream_codegen.render import renderers

ROOT = Path(__file__).resolve().parent.parent
Registered = tuple[Path, dict[str, str], str, str]
"""The copy, its files' hashes before the registration, and the command's stdout and stderr."""
COPIED = (*SOURCE_DIRS, "generated")
NAME = "audio.delta"

PROPOSAL: dict[str, Any] = {
    "name": NAME,
    "description": "An incremental fragment of generated audio, base64-encoded, with its "
                   "transcript when the model gives one.",
    "reference": "#event-type-registry",
    "status": "provisional",
    "reason": "A test registration.",
    "date": "2026-12-02",
    "change_controller": "The test suite",
    "contact": "tests@example.org",
    "lifecycle": {"place": "block", "block_kind": "audio"},
    "mappings": {"openai-chat": "choices[].delta.audio.data"},
    "schema": {
        "description": "A fragment of generated audio.",
        "required": ["index", "delta"],
        "properties": {
            "index": {"description": "Content block index.", "type": "integer", "minimum": 0},
            "delta": {
                "type": "object",
                "required": ["data"],
                "properties": {
                    "data": {"description": "Base64-encoded audio.", "type": "string"},
                    "transcript": {"type": "string"},
                },
            },
        },
    },
}


def copy_project(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for folder in COPIED:
        shutil.copytree(ROOT / folder, target / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return target


def tree(root: Path) -> dict[str, str]:
    """Every file of the copy by path, with the sha256 of its bytes."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def write_proposal(folder: Path, proposal: dict[str, Any], name: str = "proposal.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(proposal, sort_keys=False, allow_unicode=True))
    return path


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def in_bindings(root: Path, code: str) -> Any:
    """Run `code` in a fresh interpreter that imports the bindings generated under `root`;
    it prints one JSON value, returned here."""
    env = {**os.environ, "PYTHONPATH": str(root / "generated" / "python")}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                            capture_output=True, text=True, check=False, cwd=root)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# -- a registration, end to end -------------------------------------------------------------------


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registered]:
    base = tmp_path_factory.mktemp("registry-add")
    root = copy_project(base / "project")
    before = tree(root)
    proposal = write_proposal(base, PROPOSAL)
    status, out, err = run_cli("registry", "add", "--proposal", str(proposal), "--root", str(root))
    assert status == 0, err
    yield root, before, out, err


def test_the_command_says_what_it_created(registered: Registered) -> None:
    _, _, out, _ = registered
    assert out.startswith(f"registered {NAME}: provisional, place block, block kind audio\n")
    assert f"created   schemas/events/{NAME}.json" in out
    assert "appended  registry/event-types.yaml" in out
    assert "model     AudioDeltaEvent in generated/python/llm_stream/models.py" in out
    assert "validator validate_audio_delta in generated/python/llm_stream/validators.py" in out


def test_only_the_entry_the_schema_and_generated_files_change(
    registered: Registered,
) -> None:
    root, before, _, _ = registered
    after = tree(root)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    source = {p for p in changed if not p.startswith("generated/")}
    assert source == {"registry/event-types.yaml", f"schemas/events/{NAME}.json"}


def test_the_registry_keeps_its_text_and_gains_the_entry(
    registered: Registered,
) -> None:
    root, _, _, _ = registered
    old = (ROOT / "registry/event-types.yaml").read_text()
    new = (root / "registry/event-types.yaml").read_text()
    assert new.startswith(old), "the file's existing text (comments, layout) must stay"
    assert new[len(old):].startswith(f"\n  - name: {NAME}\n")
    entry = yaml.safe_load(new)["entries"][-1]
    assert entry["schema"] == f"schemas/events/{NAME}.json"
    assert entry["lifecycle"] == {"place": "block", "block_kind": "audio"}
    assert entry["mappings"] == PROPOSAL["mappings"]
    event = load(root).event_type(NAME)
    assert event is not None and event.status == "provisional" and event.contact
    assert check(root)[1] == []


def test_the_schema_is_built_from_the_own_fields(
    registered: Registered,
) -> None:
    root, _, _, _ = registered
    schema = json.loads((root / f"schemas/events/{NAME}.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:ietf:params:llm-stream:event:{NAME}:1.0"
    assert schema["allOf"] == [{"$ref": "urn:ietf:params:llm-stream:event-envelope:1.0"}]
    assert schema["properties"]["type"]["const"] == NAME
    assert schema["required"] == ["type", "index", "delta"]
    assert schema["properties"]["delta"] == PROPOSAL["schema"]["properties"]["delta"]


def test_the_bindings_have_it(registered: Registered) -> None:
    root, _, _, _ = registered
    package = root / "generated/python/llm_stream"
    assert "class AudioDeltaEvent(EventEnvelope):" in (package / "models.py").read_text()
    assert "def validate_audio_delta(" in (package / "validators.py").read_text()
    lifecycle = (package / "lifecycle.py").read_text()
    assert f'"{NAME}": "block",' in lifecycle and f'"{NAME}": "audio",' in lifecycle
    assert f'AUDIO_DELTA = "{NAME}"' in (package / "registry.py").read_text()


STREAM = (
    b'event: stream.start\ndata: {"v":"1.0","seq":0,"type":"stream.start","model":"m",'
    b'"created":1}\n\n'
    b'event: audio.delta\ndata: {"v":"1.0","seq":1,"type":"audio.delta","index":0,'
    b'"delta":{"data":"UklGRg==","transcript":"Hello"}}\n\n'
    b'event: audio.delta\ndata: {"v":"1.0","seq":2,"type":"audio.delta","index":0,'
    b'"delta":{"data":"AAAA"}}\n\n'
    b'event: content.stop\ndata: {"v":"1.0","seq":3,"type":"content.stop","index":0,'
    b'"stop_reason":"end_turn"}\n\n'
    b'event: usage\ndata: {"v":"1.0","seq":4,"type":"usage","input_tokens":3,'
    b'"output_tokens":9}\n\n'
    b'event: stream.end\ndata: {"v":"1.0","seq":5,"type":"stream.end"}\n\n'
)


def test_the_fresh_decoder_accepts_a_stream_that_uses_it(
    registered: Registered,
) -> None:
    root, _, _, _ = registered
    bad_field = STREAM.replace(b'"delta":{"data":"AAAA"}', b'"delta":{"bytes":"AAAA"}')
    in_text_block = STREAM.replace(
        b'event: audio.delta\ndata: {"v":"1.0","seq":1,"type":"audio.delta","index":0,'
        b'"delta":{"data":"UklGRg==","transcript":"Hello"}}',
        b'event: content.delta\ndata: {"v":"1.0","seq":1,"type":"content.delta","index":0,'
        b'"role":"assistant","delta":{"text":"Hi"}}')
    found = in_bindings(root, f"""
        import json
        import llm_stream
        from llm_stream import decoder as decoding
        from llm_stream.decoder import Decoder
        from llm_stream.registry import EVENT_TYPE_STATUS

        def decode(body):
            decoder = Decoder()
            events = decoder.feed(body) + decoder.close()
            return [type(e).__name__ for e in events], [d.rule for d in decoder.diagnostics]

        print(json.dumps({{
            "package": llm_stream.__file__,
            "status": EVENT_TYPE_STATUS.get("{NAME}"),
            "quick": decoding._QUICK.get("{NAME}", decoding._never) is not decoding._never,
            "good": decode({STREAM!r}),
            "bad_field": decode({bad_field!r}),
            "in_text_block": decode({in_text_block!r}),
        }}))
    """)
    assert Path(found["package"]).is_relative_to(root)
    assert found["status"] == "provisional"
    assert found["quick"]  # its own quick path, made from its plan
    kinds, rules = found["good"]
    assert rules == []
    assert kinds.count("AudioDeltaEvent") == 2
    assert found["bad_field"][1] == ["LS-ENV-3"]  # the schema's rule: the root default
    assert found["in_text_block"][1] == ["LS-LIFE-4"]


def test_the_typescript_bindings_have_it(registered: Registered) -> None:
    """The TypeScript bindings gain it too; where Node runs (LLM_STREAM_TYPESCRIPT=1, as in
    `nox -s typescript`), their decoder judges the streams above as the Python one does."""
    root, _, _, _ = registered
    source = root / "generated/typescript/src"
    assert "export interface AudioDeltaEvent extends EventEnvelope {" in (
        source / "types.ts").read_text()
    assert "export function validateAudioDelta(" in (source / "validators.ts").read_text()
    lifecycle = (source / "lifecycle.ts").read_text()
    assert f'["{NAME}", "block"],' in lifecycle and f'["{NAME}", "audio"],' in lifecycle
    assert f'AUDIO_DELTA: "{NAME}",' in (source / "registry.ts").read_text()
    if os.environ.get("LLM_STREAM_TYPESCRIPT") != "1":
        return
    from node_package import run_driver

    bodies = [
        STREAM,
        STREAM.replace(b'"delta":{"data":"AAAA"}', b'"delta":{"bytes":"AAAA"}'),
        STREAM.replace(b'event: audio.delta\ndata: {"v":"1.0","seq":1,"type":"audio.delta"',
                       b'event: content.delta\ndata: {"v":"1.0","seq":1,"type":"content.delta"'
                       b',"role":"assistant"').replace(b'"transcript":"Hello"', b'"text":"Hi"'),
    ]
    job = {"decode": [{"name": str(i), "body": base64.b64encode(body).decode(), "options": {},
                       "chunkings": [[0], [7]]} for i, body in enumerate(bodies)]}
    good, bad_field, in_text_block = run_driver(job, source)["decode"]
    assert all(run == {**good[0], "diagnostics": []} for run in good)
    assert [json.loads(e)["type"] for e in good[0]["events"]].count(NAME) == 2
    assert [rule for rule, _, _ in bad_field[0]["diagnostics"]] == ["LS-ENV-3"]
    assert [rule for rule, _, _ in in_text_block[0]["diagnostics"]] == ["LS-LIFE-4"]

def test_the_docs_and_registry_downloads_have_it(
    registered: Registered,
) -> None:
    root, _, _, _ = registered
    names = {render.__name__ for render in renderers()}
    if "render_docs" in names:
        page = (root / f"generated/docs/events/{NAME}.md").read_text()
        assert f"# `{NAME}` event" in page
        assert PROPOSAL["description"] in page
        assert "choices[].delta.audio.data" in page
        assert f"[`{NAME}`](../events/{NAME}.md)" in (
            root / "generated/docs/registries/event-types.md").read_text()
    else:
        assert not (root / f"generated/docs/events/{NAME}.md").exists()
    if "render_registry" in names:
        folder = root / "generated/registry"
        assert f"<value>{NAME}</value>" in (folder / "event-types.xml").read_text()
        assert f"\n{NAME}," in (folder / "event-types.csv").read_text()
        records = json.loads((folder / "event-types.json").read_text())["records"]
        assert any(r["value"] == NAME and r["status"] == "provisional" for r in records)
    else:
        assert not (root / "generated/registry/event-types.xml").exists()


def test_flags_and_fields_make_the_same_kind_of_registration(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    status, out, err = run_cli(
        "registry", "add", "audio.delta", "--description", "Audio.", "--reference",
        "https://example.org/audio", "--status", "provisional", "--reason", "A test.",
        "--change-controller", "Tests", "--place", "block", "--block-kind", "audio",
        "--field", "index:integer:required", "--field", "delta.data:string:required:Audio.",
        "--mapping", "openai-chat=choices[].delta.audio", "--dry-run", "--root", str(root))
    assert status == 0, err
    schema = json.loads(out[out.index("{"):])
    assert schema["required"] == ["type", "index", "delta"]
    assert schema["properties"]["delta"]["required"] == ["data"]
    assert "nothing written (--dry-run)" in out


# -- refusals -------------------------------------------------------------------------------------


def _with(**changes: Any) -> dict[str, Any]:
    proposal = json.loads(json.dumps(PROPOSAL))
    for key, value in changes.items():
        if value is None:
            proposal.pop(key, None)
        else:
            proposal[key] = value
    return proposal


def _schema_with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    proposal = _with()
    change(proposal["schema"])
    return proposal


BAD: dict[str, tuple[dict[str, Any], str]] = {
    "name with capitals": (_with(name="Audio.Delta"),
                           r"event type name 'Audio\.Delta' is not valid"),
    "name of one segment": (_with(name="audio"), r"event type name 'audio' is not valid"),
    "name with an empty segment": (_with(name="audio..delta"), r"'audio\.\.delta' is not valid"),
    "name taken": (_with(name="tool.call"),
                   r"event type 'tool\.call' is already registered \(registry/event-types\.yaml:"
                   r"\d+, status permanent\)"),
    "name reserved": (_with(name="vendor.trace"),
                      r"event type name 'vendor\.trace' is reserved: the name space vendor\.\*"),
    "name reserved exactly": (_with(name="stream.ping"), r"'stream\.ping' is reserved"),
    "schema not 2020-12": (
        _schema_with(lambda s: s["properties"]["index"].update(type=5)),
        r"the schema is not valid JSON Schema 2020-12 at /properties/index/type"),
    "schema ref does not resolve": (
        _schema_with(lambda s: s["properties"]["delta"].update(
            {"$ref": "urn:ietf:params:llm-stream:nope:1.0"})),
        r"\$ref 'urn:ietf:params:llm-stream:nope:1\.0' at /properties/delta does not resolve"),
    "schema closed to unknown fields": (
        _schema_with(lambda s: s.update(additionalProperties=False)),
        r"sets additionalProperties false"),
    "schema keyword the validators cannot compile": (
        _schema_with(lambda s: s.update(unevaluatedProperties={"type": "string"})),
        r"the validator compiler cannot compile the schema"),
    "schema names an unknown rule": (
        _schema_with(lambda s: s.update({"x-rule": "LS-NOPE-1"})),
        r"x-rule 'LS-NOPE-1' at / names no rule"),
    "field named after a model method": (
        _schema_with(lambda s: s["properties"].update(model_dump={"type": "string"})),
        r"field 'model_dump' \(/properties/model_dump\) starts with _ or model_.*D-FIELD-NAMES"),
    "nested field named after a BaseModel attribute": (
        _schema_with(lambda s: s["properties"]["delta"]["properties"].update(
            json={"type": "string"})),
        r"field 'json' \(/properties/delta/properties/json\) is an attribute of pydantic's "
        r"BaseModel"),
    "field named by a keyword": (
        _schema_with(lambda s: s["properties"].update({"class": {"type": "string"}})),
        r"field 'class' \(/properties/class\) is a Python keyword"),
    "bounds that cross": (
        _schema_with(lambda s: s["properties"]["index"].update(minimum=5, maximum=1)),
        r"no event satisfies the schema at /properties/index: minimum 5 is above maximum 1"),
    "lengths that cross": (
        _schema_with(lambda s: s["properties"]["delta"]["properties"]["data"].update(
            minLength=3, maxLength=1)),
        r"at /properties/delta/properties/data: minLength 3 is above maxLength 1"),
    "const outside its type": (
        _schema_with(lambda s: s["properties"]["delta"]["properties"]["data"].update(const=4)),
        r"const 4 is not of the schema's type 'string'"),
    "bad regex": (
        _schema_with(lambda s: s["properties"]["delta"]["properties"]["data"].update(
            pattern="(")),
        r"at /properties/delta/properties/data/pattern: '\(' is not a 'regex'"),
    "reference missing": (_with(reference=None), r"a specification reference is required"),
    "reference to nothing": (_with(reference="#nowhere"), r"'#nowhere' names no section"),
    "type does not match": (
        _schema_with(lambda s: s["properties"].update(type={"const": "audio.chunk"})),
        r"the schema sets the event's type to 'audio\.chunk', but the event type is "
        r"'audio\.delta'"),
    "unknown lifecycle place": (
        _with(lifecycle={"place": "middle"}),
        r"lifecycle place 'middle' is not one the decoder understands: one of first, block"),
    "block place without block kind": (
        _with(lifecycle={"place": "block"}), r"lifecycle place 'block' needs a block_kind"),
    "place held by stream.start": (
        _with(lifecycle={"place": "first"}), r"holds exactly one event a stream"),
    "provisional without reason": (_with(reason=None), r"needs a reason"),
    "unknown vendor": (_with(mappings={"mistral": "x"}), r"mapping vendor 'mistral' is unknown"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_each_bad_registration_is_refused_and_nothing_changes(kind: str, tmp_path: Path) -> None:
    proposal, expected = BAD[kind]
    root = copy_project(tmp_path / "project")
    path = write_proposal(tmp_path, proposal)
    before = tree(root)
    status, out, err = run_cli("registry", "add", "--proposal", str(path), "--root", str(root))
    assert status == 1
    assert out == ""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, err
    assert re.search(expected, errors[0]), err
    assert errors[0].startswith(f"error: {path}: ")
    assert err.endswith("1 problem(s): the registration is refused; nothing was written.\n")
    assert tree(root) == before


def test_every_problem_gets_its_own_message(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    proposal = _with(name="tool.call", reference=None, lifecycle={"place": "middle"},
                     change_controller=None)
    before = tree(root)
    status, _, err = run_cli("registry", "add", "--proposal",
                             str(write_proposal(tmp_path, proposal)), "--root", str(root))
    assert status == 1
    assert len([line for line in err.splitlines() if line.startswith("error: ")]) == 4
    assert "4 problem(s)" in err
    assert tree(root) == before


def test_a_failed_regeneration_restores_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = copy_project(tmp_path / "project")
    before = tree(root)

    def failing_generate(target: Path, **_: Any) -> int:
        (target / "generated/python/llm_stream/models.py").write_text("broken\n")
        (target / "generated/stray.txt").write_text("half-written\n")
        return 1

    monkeypatch.setattr(registry_regenerate, "generate", failing_generate)
    err = io.StringIO()
    status = registry_add.register(root, registry_proposal.proposal_from_data(PROPOSAL, "p.yaml"),
                                   out=io.StringIO(), err=err)
    assert status == 1
    assert "regeneration failed" in err.getvalue()
    assert tree(root) == before


def test_an_interrupted_registration_restores_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = copy_project(tmp_path / "project")
    before = tree(root)

    def interrupted(target: Path, **_: Any) -> int:
        (target / "generated/python/llm_stream/lifecycle.py").write_text("half\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(registry_regenerate, "generate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        registry_add.register(root, registry_proposal.proposal_from_data(PROPOSAL, "p.yaml"),
                              out=io.StringIO(), err=io.StringIO())
    assert tree(root) == before


def test_reserved_names_are_listed(tmp_path: Path) -> None:
    status, out, _ = run_cli("registry", "list", "--reserved")
    assert status == 0
    assert "vendor.*" in out and "message" in out and "stream.start" in out


def test_list_shows_every_event_type() -> None:
    status, out, _ = run_cli("registry", "list", "--root", str(ROOT))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "PLACE", "REFERENCE"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["tool.call"][1:] == ["permanent", "block", "(tool-call)", "#tool-call"]
    assert rows["reasoning.delta"][1] == "provisional"
    assert len(rows) == len(load(ROOT).event_types)


# -- deprecation ----------------------------------------------------------------------------------


def test_deprecate_sets_status_and_reason_and_regenerates(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    old = (root / "registry/event-types.yaml").read_text().splitlines()
    start = old.index("  - name: reasoning.signature")
    status, out, err = run_cli("registry", "deprecate", "reasoning.signature", "--reason",
                               "Use reasoning.v2 instead.", "--root", str(root))
    assert status == 0, err
    assert out.startswith("deprecated reasoning.signature: Use reasoning.v2 instead.\n")
    new = (root / "registry/event-types.yaml").read_text().splitlines()
    changes = [line for line in difflib.ndiff(old, new) if line[:2] in ("- ", "+ ")]
    assert changes == ["-     status: provisional", "+     status: deprecated",
                       "+     deprecated_reason: Use reasoning.v2 instead."]
    status_line = new.index("    status: deprecated")
    assert new[:start] == old[:start] and start < status_line < start + 10
    event = load(root).event_type("reasoning.signature")
    assert event is not None and event.status == "deprecated"
    assert event.deprecated_reason == "Use reasoning.v2 instead."
    assert '"reasoning.signature": "deprecated",' in (
        root / "generated/python/llm_stream/registry.py").read_text()


@pytest.mark.parametrize(("name", "reason", "expected"), [
    ("usage.v9", "Gone.", r"no event type 'usage\.v9' is registered"),
    ("reasoning.delta", "  ", r"a deprecation needs a reason"),
    ("usage", "Gone.", r"'usage' is controlled by the IETF .*D-IETF-CONTROL"),
    ("stream.end", "Gone.", r"'stream\.end' is controlled by the IETF"),
])
def test_a_bad_deprecation_changes_nothing(
    name: str, reason: str, expected: str, tmp_path: Path,
) -> None:
    root = copy_project(tmp_path / "project")
    before = tree(root)
    status, _, err = run_cli("registry", "deprecate", name, "--reason", reason,
                             "--root", str(root))
    assert status == 1
    assert re.search(expected, err), err
    assert tree(root) == before


def test_deprecating_twice_is_refused(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    text = (root / "registry/event-types.yaml").read_text()
    (root / "registry/event-types.yaml").write_text(text.replace(
        "    status: provisional\n", "    status: deprecated\n    deprecated_reason: Old.\n", 1))
    before = tree(root)
    status, _, err = run_cli("registry", "deprecate", "reasoning.delta", "--reason", "Again.",
                             "--root", str(root))
    assert status == 1
    assert "is already deprecated: Old." in err
    assert tree(root) == before
