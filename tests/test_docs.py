"""The documentation site: it builds in strict mode, every spec entity has its page or anchor, no
internal link is broken, the registry downloads agree with the YAML source, the guides' code
runs, and the generated pages are derived (not restated) and deterministic."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from llm_stream_codegen.load import load
from llm_stream_codegen.model import Spec
from llm_stream_codegen.render_docs import (
    event_examples,
    neighbours,
    render_docs,
    rule_anchor,
    slug,
    sse_blocks,
)
from llm_stream_codegen.render_registry import PUBLISHED, render_registry

ROOT = Path(__file__).resolve().parent.parent
IANA = "{http://www.iana.org/assignments}"


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load(ROOT)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with `mkdocs build --strict` into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
         "-f", str(ROOT / "site" / "mkdocs.yml"), "-d", str(out)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return out


class _Page(HTMLParser):
    """The ids and the link targets of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key) and (key == "id" or tag == "a"):
                self.ids.add(str(values[key]))
        if tag in ("a", "link") and values.get("href"):
            self.links.append(str(values["href"]))
        if tag in ("script", "img") and values.get("src"):
            self.links.append(str(values["src"]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def html(built: Path) -> dict[Path, _Page]:
    return {path: _parse(path) for path in sorted(built.rglob("*.html"))}


def test_build_is_strict_and_complete(built: Path) -> None:
    for page in ("index.html", "spec/index.html", "spec/decisions/index.html",
                 "spec/lifecycle/index.html", "spec/request/index.html",
                 "spec/media-types/index.html", "events/index.html", "registries/index.html",
                 "mappings/index.html", "changelog/index.html", "api/index.html",
                 "guides/client/index.html", "guides/server/index.html",
                 "guides/check/index.html", "guides/register/index.html",
                 "guides/typescript/index.html",
                 "vocabularies/stop-reasons/index.html", "vocabularies/error-codes/index.html"):
        assert (built / page).is_file(), page
    assert (built / "search" / "search_index.json").is_file()


def test_every_event_type_has_its_page(spec: Spec, html: dict[Path, _Page], built: Path) -> None:
    for event in spec.event_types:
        page = built / "events" / event.name / "index.html"
        assert page in html, event.name
        text = page.read_text(encoding="utf-8")
        assert "<table>" in text and "delta.text" in text if event.name == "content.delta" else True


def test_every_rule_and_decision_has_its_anchor(spec: Spec, html: dict[Path, _Page],
                                               built: Path) -> None:
    ids = html[built / "spec" / "index.html"].ids
    missing = [rule for rule in spec.rules if rule_anchor(rule) not in ids]
    assert not missing
    assert {s.anchor for s in spec.sections} <= ids
    decisions = html[built / "spec" / "decisions" / "index.html"].ids
    assert {"decision-" + d.id.lower() for d in spec.decisions} <= decisions


def test_every_media_type_has_its_anchor(spec: Spec, html: dict[Path, _Page], built: Path) -> None:
    ids = html[built / "spec" / "media-types" / "index.html"].ids
    assert {slug(media.name) for media in spec.media_types} <= ids


def test_every_registry_has_its_page_and_downloads(built: Path) -> None:
    for name in PUBLISHED:
        assert (built / "registries" / name / "index.html").is_file()
        for fmt in ("xml", "csv", "json"):
            served = built / "registries" / f"{name}.{fmt}"
            source = ROOT / "generated" / "registry" / served.name
            assert served.read_bytes() == source.read_bytes()


def test_every_module_of_the_bindings_has_an_api_page(built: Path) -> None:
    modules = [p.stem for p in (ROOT / "generated/python/llm_stream").glob("*.py")
               if not p.stem.startswith("_")]
    for module in modules:
        page = built / "api" / module / "index.html"
        assert page.is_file(), module
        assert f"llm_stream.{module}" in page.read_text(encoding="utf-8")


def test_no_internal_link_is_broken(built: Path, html: dict[Path, _Page]) -> None:
    broken = []
    for path, page in html.items():
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            if not parts.path:
                target = path
            elif parts.path.startswith("/"):  # the 404 page links from the site's root
                target = (built / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{path.relative_to(built)}: {href}")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html" and fragment not in html[target].ids:
                broken.append(f"{path.relative_to(built)}: {href} (no such anchor)")
    assert not broken, "\n".join(broken)


def _yaml_entries(name: str) -> list[str]:
    data = yaml.safe_load((ROOT / "registry" / f"{name}.yaml").read_text())
    key = "name" if name in ("event-types", "media-types") else "value"
    return [str(entry[key]) for entry in data["entries"]]


@pytest.mark.parametrize("name", PUBLISHED)
def test_registry_downloads_list_the_yaml_entries(name: str) -> None:
    expected = _yaml_entries(name)
    folder = ROOT / "generated" / "registry"

    root = ET.fromstring((folder / f"{name}.xml").read_bytes())
    assert root.tag == f"{IANA}registry" and root.get("id") == name
    assert root.findtext(f"{IANA}title")
    records = root.findall(f"{IANA}record")
    assert [r.findtext(f"{IANA}value") for r in records] == expected
    assert all(r.get("date") and r.find(f"{IANA}xref") is not None for r in records)

    rows = list(csv.reader(io.StringIO((folder / f"{name}.csv").read_text(), newline="")))
    assert rows[0][1:5] == ["Description", "Reference", "Status", "Date"]
    assert [row[0] for row in rows[1:]] == expected

    document = json.loads((folder / f"{name}.json").read_text())
    assert document["id"] == name
    assert [record["value"] for record in document["records"]] == expected

    data = yaml.safe_load((ROOT / "registry" / f"{name}.yaml").read_text())
    for record, entry in zip(document["records"], data["entries"], strict=True):
        assert record["status"] == entry["status"]
        assert record["date"] == str(entry["date"])


def test_guides_code_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block of a guide runs, the blocks of a page in order in one namespace."""
    monkeypatch.chdir(ROOT)
    for guide in sorted((ROOT / "site" / "docs" / "guides").glob("*.md")):
        blocks = re.findall(r"^```python\n(.*?)^```", guide.read_text(), re.S | re.M)
        namespace: dict[str, object] = {"__name__": f"guide_{guide.stem}"}
        for number, block in enumerate(blocks, start=1):
            code = compile(block, f"{guide.name} block {number}", "exec", dont_inherit=True)
            exec(code, namespace)  # the guide's own code, on purpose


def _console_sessions(text: str) -> list[tuple[str, list[str]]]:
    """(command, output lines) of every `$ llm-stream check` in the console blocks of a page."""
    sessions: list[tuple[str, list[str]]] = []
    for block in re.findall(r"^( *)```console\n(.*?)^\1```", text, re.S | re.M):
        indent, body = block
        current: tuple[str, list[str]] | None = None
        for line in body.splitlines():
            line = line.removeprefix(indent)
            if line.startswith("$ "):
                current = (line[2:], [])
                if line.startswith("$ llm-stream check") and "|" not in line:
                    sessions.append(current)
            elif current is not None:
                current[1].append(line)
    return sessions


def test_check_guide_shows_the_real_output() -> None:
    command = Path(sys.executable).with_name("llm-stream")
    sessions = _console_sessions((ROOT / "site/docs/guides/check.md").read_text())
    assert len(sessions) >= 4
    for line, expected in sessions:
        arguments = shlex.split(line)[1:]
        result = subprocess.run([str(command), *arguments], capture_output=True, text=True,
                                cwd=ROOT, check=False)
        assert result.stdout.splitlines() == expected, line
        assert result.returncode in (0, 1), result.stderr


def test_lifecycle_neighbours_are_derived_from_the_tables(spec: Spec) -> None:
    start = spec.event_type("stream.start")
    end = spec.event_type("stream.end")
    error = spec.event_type("error")
    assert start is not None and end is not None and error is not None
    assert neighbours(spec, start).preceded_by == ()
    assert neighbours(spec, end).followed_by == ()
    assert set(neighbours(spec, error).followed_by) == {
        e.name for e in spec.event_types if e.lifecycle.place in ("any", "last")
    }
    assert "error" not in neighbours(spec, error).followed_by


def test_event_examples_are_the_wire_bytes(spec: Spec) -> None:
    shown = event_examples(spec, "content.delta")
    assert shown
    page = (ROOT / "generated/docs/events/content.delta.md").read_text()
    for example in shown:
        raw = (ROOT / "spec" / "examples" / example.example.file).read_bytes().decode()
        assert example.text == raw.replace("\r\n", "\n")
        assert all(b.type == "content.delta" for b in sse_blocks(example.relevant))
        assert example.relevant in page


def test_generated_pages_are_deterministic_and_committed(spec: Spec) -> None:
    first = list(render_docs(spec)) + list(render_registry(spec))
    second = list(render_docs(spec)) + list(render_registry(spec))
    assert first == second
    stale = [a.path for a in first if (ROOT / a.path).read_bytes() != a.content]
    assert not stale, f"run `llm-stream generate`: {stale}"
