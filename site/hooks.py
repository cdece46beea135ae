"""mkdocs hooks: put what the generator wrote into the build, without copying it anywhere.

- Every page under generated/docs joins the hand-written pages of site/docs, at the same relative
  path (generated/docs/events/usage.md is served as events/usage/). A generated page and a
  hand-written page may not share a path.
- Every file under generated/registry (the registries as XML, CSV and JSON) is served under
  registries/, beside the registry pages that link to it.
- Every public module of the bindings (generated/python/llm_stream) gets an API reference page,
  api/<module>.md, rendered by mkdocstrings from its docstrings.
- Every JSON Schema under schemas/ is served at the same path (schemas/events/usage.json), so the
  schema row of an event page links to a file that resolves.
- A nav entry whose value ends in "/" names a folder: it becomes the folder's index.md followed by
  its other pages, in the order of their `nav_order` front matter (event types in the order a
  stream meets them) and then by path, so that a newly registered event type or a new module
  appears in the navigation without an edit here.
- Every rule ID (`LS-...`) and decision ID (`D-...`) of the spec source that a page mentions, in
  text or inline code, is a link to its anchor, on hand-written and generated pages alike.

`mkdocs serve` also watches generated/, so `llm-stream generate` refreshes a running preview.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
GENERATED_DOCS = ROOT / "generated" / "docs"
GENERATED_REGISTRY = ROOT / "generated" / "registry"
SCHEMAS = ROOT / "schemas"
RULES_JSON = GENERATED_DOCS / "spec" / "rules.json"
PACKAGE = ROOT / "generated" / "python" / "llm_stream"
REGISTRY_URL_DIR = "registries"
API_DIR = "api"


def api_modules() -> list[str]:
    """The public modules of the bindings package, by name."""
    return sorted(
        path.stem for path in PACKAGE.glob("*.py") if not path.stem.startswith("_")
    )


def api_page(module: str) -> str:
    return (
        f"# llm_stream.{module}\n\n"
        f"::: llm_stream.{module}\n"
        "    options:\n"
        "      show_root_heading: false\n"
        "      heading_level: 2\n"
    )


_NAV_ORDER = re.compile(r"^nav_order:\s*(\d+)\s*$", re.MULTILINE)


def _nav_order(path: Path) -> int | None:
    """A page's `nav_order` front matter, if it has one."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return None
    front = text[4:text.find("\n---", 4)]
    match = _NAV_ORDER.search(front)
    return int(match.group(1)) if match else None


def _folder_pages(docs_dir: Path, folder: str) -> list[str]:
    found: dict[str, int | None] = {}
    for base in (docs_dir, GENERATED_DOCS):
        for path in (base / folder).glob("*.md"):
            found[path.relative_to(base).as_posix()] = _nav_order(path)
    if folder.rstrip("/") == API_DIR:
        found.update({f"{API_DIR}/{module}.md": None for module in api_modules()})
    index = f"{folder.rstrip('/')}/index.md"
    others = sorted(set(found) - {index},
                    key=lambda uri: (found[uri] is None, found[uri] or 0, uri))
    return ([index] if index in found else []) + others


def _expand(entry: Any, docs_dir: Path) -> Any:
    if isinstance(entry, list):
        return [_expand(item, docs_dir) for item in entry]
    if isinstance(entry, dict):
        return {title: _expand(value, docs_dir) for title, value in entry.items()}
    if isinstance(entry, str) and entry.endswith("/"):
        pages = _folder_pages(docs_dir, entry)
        if not pages:
            raise PluginError(f"nav folder {entry!r} has no pages")
        return pages
    return entry


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if not GENERATED_DOCS.is_dir():
        raise PluginError(f"{GENERATED_DOCS} is missing: run `llm-stream generate` first")
    if config.nav is not None:
        config.nav = _expand(config.nav, Path(config.docs_dir))
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    def add(file: File, origin: Path) -> None:
        if files.get_file_from_path(file.src_uri) is not None:
            raise PluginError(f"{origin} would replace the hand-written site/docs/{file.src_uri}")
        files.append(file)

    for path in sorted(p for p in GENERATED_DOCS.rglob("*") if p.is_file()):
        uri = path.relative_to(GENERATED_DOCS).as_posix()
        add(File.generated(config, uri, abs_src_path=str(path)), path)
    for path in sorted(p for p in GENERATED_REGISTRY.glob("*") if p.is_file()):
        uri = f"{REGISTRY_URL_DIR}/{path.name}"
        add(File.generated(config, uri, abs_src_path=str(path)), path)
    for path in sorted(SCHEMAS.rglob("*.json")):
        uri = f"schemas/{path.relative_to(SCHEMAS).as_posix()}"
        add(File.generated(config, uri, abs_src_path=str(path)), path)
    for module in api_modules():
        uri = f"{API_DIR}/{module}.md"
        add(File.generated(config, uri, content=api_page(module)), PACKAGE / f"{module}.py")
    return files


def _identifiers() -> dict[str, str]:
    """Every rule and decision ID, with the site path of its anchor."""
    index = json.loads(RULES_JSON.read_text(encoding="utf-8"))
    found = {rule["id"]: f"spec/#{rule['id'].lower()}" for rule in index["rules"]}
    found.update({d["id"]: f"spec/decisions/#decision-{d['id'].lower()}"
                  for d in index["decisions"]})
    return found


_ID = re.compile(r"\b(?:LS|D)-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
# Text between tags, and inline code, outside links, preformatted blocks and headings.
_SKIP = re.compile(r"<(a|pre|h[1-6]|script|style|title|svg)\b.*?</\1>|<[^>]+>", re.DOTALL)


def link_identifiers(html: str, page_url: str, known: dict[str, str]) -> str:
    """The page's HTML with every known rule and decision ID, in text or inline code, as a link
    relative to the page's URL."""
    depth = page_url.count("/")
    up = "../" * depth

    def replace_ids(text: str) -> str:
        return _ID.sub(
            lambda m: (f'<a href="{up}{known[m.group(0)]}">{m.group(0)}</a>'
                       if m.group(0) in known else m.group(0)), text)

    out, last = [], 0
    for match in _SKIP.finditer(html):
        out += [replace_ids(html[last:match.start()]), match.group(0)]
        last = match.end()
    out.append(replace_ids(html[last:]))
    return "".join(out)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return link_identifiers(html, page.url, _identifiers())


def on_serve(server: LiveReloadServer, config: MkDocsConfig, builder: Any) -> LiveReloadServer:
    for folder in (GENERATED_DOCS, GENERATED_REGISTRY, PACKAGE):
        server.watch(str(folder))
    return server
