"""The cache of datamodel-code-generator's output: a hit is byte for byte what a run gives, the
key covers every input, and a cache that cannot be trusted or written is passed by."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_stream_codegen import render_models
from llm_stream_codegen.load import load
from llm_stream_codegen.model_bundle import bundle
from llm_stream_codegen.output_cache import cache_dir, cache_key, cached

ROOT = Path(__file__).resolve().parent.parent


def never() -> str:
    raise AssertionError("made again, though it was cached")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LLM_STREAM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_hit_gives_what_was_made_and_makes_nothing(folder: Path) -> None:
    key = cache_key("kind", {"a": 1}, ["pydantic"])
    assert cached(key, lambda: "made\n") == "made\n"
    assert cached(key, never) == "made\n"
    assert [p.name for p in folder.iterdir()] == [f"{key}.txt"]
    assert folder.stat().st_mode & 0o777 == 0o700


def test_the_key_covers_inputs_kind_and_package_versions() -> None:
    key = cache_key("kind", {"a": 1}, ["pydantic"])
    assert key == cache_key("kind", {"a": 1}, ["pydantic"])
    assert len({key, cache_key("kind", {"a": 2}, ["pydantic"]),
                cache_key("other", {"a": 1}, ["pydantic"]),
                cache_key("kind", {"a": 1}, ["pydantic", "no-such-package-here"])}) == 4


def test_an_empty_setting_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_STREAM_CACHE_DIR", "")
    assert cache_dir() is None
    made = []
    for _ in range(2):
        cached("k", lambda: made.append(1) or "x")
    assert made == [1, 1]


def test_a_folder_others_may_write_to_is_not_trusted(folder: Path) -> None:
    folder.mkdir()
    os.chmod(folder, 0o777)
    (folder / "k.txt").write_text("planted")
    assert cached("k", lambda: "made") == "made"
    assert (folder / "k.txt").read_text() == "planted"


def test_a_folder_that_cannot_be_made_is_passed_by(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("LLM_STREAM_CACHE_DIR", str(tmp_path / "file" / "cache"))
    assert cached("k", lambda: "made") == "made"


def test_the_models_from_the_cache_are_what_the_generator_writes(folder: Path) -> None:
    schema = bundle(load(ROOT))
    made = render_models.run_generator(schema)  # a miss: the generator runs, the entry is kept
    assert len(list(folder.iterdir())) == 1
    assert render_models.run_generator(schema) == made == render_models._run_generator(schema)


def test_templates_render_alike_from_their_compiled_cache(folder: Path) -> None:
    from llm_stream_codegen.rendering import new_environment

    name = "python/__init__.py.j2"
    spec = load(ROOT)
    cold = new_environment()
    assert cold.bytecode_cache is not None
    first = cold.get_template(name).render(spec=spec)
    assert any((folder / "jinja").iterdir())
    assert new_environment().get_template(name).render(spec=spec) == first


def test_no_compiled_cache_when_the_cache_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_stream_codegen.rendering import new_environment

    monkeypatch.setenv("LLM_STREAM_CACHE_DIR", "")
    assert new_environment().bytecode_cache is None


def test_a_well_formed_source_is_not_judged_again_until_it_changes(
    folder: Path, source_copy: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stage one's verdict is remembered under the hash of the files: the same source is not
    judged again, and a source broken after a clean check is refused at its file and line."""
    from llm_stream_codegen import check_files
    from llm_stream_codegen.check import check

    assert check(source_copy)[1] == []
    assert len(list(folder.glob("*.ok"))) == 1

    def judged(*_: object) -> None:
        raise AssertionError("judged again, though the verdict was remembered")

    monkeypatch.setattr(check_files, "_against", judged)
    spec, errors = check(source_copy)
    assert spec is not None and errors == []
    monkeypatch.undo()
    monkeypatch.setenv("LLM_STREAM_CACHE_DIR", str(folder))
    roles = source_copy / "registry" / "roles.yaml"
    roles.write_text(roles.read_text().replace("status: permanent", "status: sometimes", 1))
    spec, errors = check(source_copy)
    assert spec is None
    assert [e.path for e in errors] == ["registry/roles.yaml"] and errors[0].line > 1
