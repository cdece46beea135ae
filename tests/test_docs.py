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
import textwrap
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from site_build import build_site

from llm_stream_codegen.docs_examples import block_data, event_examples, sse_blocks
from llm_stream_codegen.docs_lifecycle import neighbours
from llm_stream_codegen.docs_links import rule_anchor, slug
from llm_stream_codegen.load import load
from llm_stream_codegen.model import Spec
from llm_stream_codegen.render_docs import render_docs
from llm_stream_codegen.render_registry import PUBLISHED, render_registry

ROOT = Path(__file__).resolve().parent.parent
IANA = "{http://www.iana.org/assignments}"


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load(ROOT)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with `mkdocs build --strict`: the build named by LLM_STREAM_SITE_DIR
    (`nox` builds the site once, in its `docs` session, and hands it over), else a fresh one
    in a temporary folder."""
    return build_site(tmp_path_factory)


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
                 "guides/translate-request/index.html",
                 "guides/request-registration/index.html", "spec/rules/index.html",
                 "registries/stop-reasons/index.html", "registries/error-codes/index.html"):
        assert (built / page).is_file(), page
    assert (built / "search" / "search_index.json").is_file()
    assert not (built / "vocabularies").exists()  # a registry has one page, under registries/


def test_every_schema_is_published_and_linked(spec: Spec, built: Path) -> None:
    for schema in spec.schemas.values():
        if schema.path is not None:
            served = built / schema.path
            assert served.read_bytes() == (ROOT / schema.path).read_bytes(), schema.path
    for event in spec.event_types:
        page = (built / "events" / event.name / "index.html").read_text(encoding="utf-8")
        assert f'href="../../{event.schema_path}"' in page, event.name


def test_rules_index_and_downloads_list_every_rule(spec: Spec, built: Path) -> None:
    page = _parse(built / "spec" / "rules" / "index.html")
    linked = {unquote(urlsplit(href).fragment) for href in page.links}
    assert {rule_anchor(rule) for rule in spec.rules} <= linked
    document = json.loads((built / "spec" / "rules.json").read_text(encoding="utf-8"))
    assert [row["id"] for row in document["rules"]] == list(spec.rules)
    assert [d["id"] for d in document["decisions"]] == [d.id for d in spec.decisions]
    rows = list(csv.DictReader(io.StringIO((built / "spec" / "rules.csv").read_text(),
                                           newline="")))
    assert [row["id"] for row in rows] == list(spec.rules)
    seq2 = next(row for row in rows if row["id"] == "LS-SEQ-2")
    assert (seq2["keyword"], seq2["section"], seq2["checkable"]) == ("MUST", "5.2.1", "yes")


class _Unlinked(HTMLParser):
    """Rule and decision IDs in a page's text that are not inside a link (preformatted blocks,
    headings, the navigation and the search's data aside)."""

    SKIP: ClassVar[set[str]] = {"a", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "script",
                                "style", "title", "nav", "svg", "label"}

    def __init__(self, known: set[str]) -> None:
        super().__init__()
        self.known = known
        self.depth = 0
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0:
            self.found += [m for m in re.findall(r"\b(?:LS|D)-[A-Z0-9-]*[A-Z0-9]\b", data)
                           if m in self.known]


def test_every_rule_and_decision_id_is_a_link(spec: Spec, built: Path) -> None:
    known = set(spec.rules) | {d.id for d in spec.decisions}
    unlinked = {}
    for path in sorted(built.rglob("*.html")):
        parser = _Unlinked(known)
        parser.feed(path.read_text(encoding="utf-8"))
        if parser.found:
            unlinked[str(path.relative_to(built))] = sorted(set(parser.found))
    assert not unlinked


def test_lifecycle_diagrams_are_inline_svg(spec: Spec, built: Path) -> None:
    page = (built / "spec" / "lifecycle" / "index.html").read_text(encoding="utf-8")
    assert "mermaid" not in page and "stateDiagram" not in page
    diagrams = re.findall(r"<svg [^>]*class=\"ls-diagram\".*?</svg>", page, re.S)
    assert len(diagrams) == 2
    for diagram, machine in zip(diagrams, (spec.lifecycle.stream, spec.lifecycle.blocks),
                                strict=True):
        ET.fromstring(diagram)  # well-formed
        names = set(re.findall(r'class="name">([^<]+)<', diagram))
        assert names == set(machine.transitions)
        for moves in machine.transitions.values():
            for place in moves:
                assert re.search(rf">[^<]*\b{re.escape(place)}\b[^<]*</text>", diagram), place


def test_event_types_are_in_lifecycle_order_in_the_navigation(spec: Spec, built: Path) -> None:
    page = (built / "index.html").read_text(encoding="utf-8")
    order = [name for name in re.findall(r'href="events/([^/"]+)/"', page)
             if spec.event_type(name) is not None]
    places = list(spec.lifecycle.places)
    assert order[0] == "stream.start" and order[-1] == "stream.end"
    assert [places.index(spec.event_type(n).lifecycle.place) for n in order] == sorted(
        places.index(spec.event_type(n).lifecycle.place) for n in order)


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
    assert root.find(f".//{IANA}change_controller") is None
    kept_by = yaml.safe_load((ROOT / "registry" / f"{name}.yaml").read_text())["kept_by"]
    note = root.findtext(f"{IANA}note") or ""
    assert ("does not ask IANA" in note) == (kept_by == "project")
    if name == "event-types":
        assert all(r.findtext(f"{IANA}controller") for r in records)
        people = {p.get("id"): p.findtext(f"{IANA}uri") for p in root.iter(f"{IANA}person")}
        assert people == {"Yaroslav_Rosomakho": "mailto:yrosomakho&zscaler.com",
                          "Santosh_Pallagatti": "mailto:santosh.pallagatti&gmail.com"}
        persons = {x.get("data") for x in root.findall(f"{IANA}xref[@type='person']")}
        assert persons == set(people)

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


def test_readme_code_runs() -> None:
    """Every python block of the README runs as pasted, from the project root."""
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert blocks
    for block in blocks:
        result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                                cwd=ROOT, check=False)
        assert result.returncode == 0, result.stderr
        assert "Vienna" in result.stdout  # each block prints the text of its stream


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


def test_event_examples_are_the_wire_bytes_and_their_json(spec: Spec) -> None:
    shown = event_examples(spec, "content.delta")
    assert shown
    page = (ROOT / "generated/docs/events/content.delta.md").read_text()
    for example in shown:
        raw = (ROOT / "spec" / "examples" / example.example.file).read_bytes().decode()
        assert example.text == raw.replace("\r\n", "\n")
        blocks = sse_blocks(example.relevant)
        assert all(b.type == "content.delta" for b in blocks)
        # the wire form and the pretty JSON are the two tabs of the example (indented in them)
        assert textwrap.indent(example.relevant, "    ") in page
        assert textwrap.indent(example.pretty, "    ") in page
        pretty = [json.loads(part) for part in example.pretty.split("\n\n")]
        assert pretty == [block_data(block) for block in blocks]


def test_generated_pages_are_deterministic_and_committed(spec: Spec) -> None:
    first = list(render_docs(spec)) + list(render_registry(spec))
    second = list(render_docs(spec)) + list(render_registry(spec))
    assert first == second
    stale = [a.path for a in first if (ROOT / a.path).read_bytes() != a.content]
    assert not stale, f"run `llm-stream generate`: {stale}"
