"""mkdocs hooks: put what the generator wrote into the build, without copying it anywhere.

- Every page under generated/docs joins the hand-written pages of site/docs, at the same relative
  path (generated/docs/events/usage.md is served as events/usage/). A generated page and a
  hand-written page may not share a path.
- Every file under generated/registry (the registries as XML, CSV and JSON) is served under
  registries/, beside the registry pages that link to it.
- Every public module of the bindings (generated/python/llm_stream) gets an API reference page,
  api/<module>.md, rendered by mkdocstrings from its docstrings.
- A nav entry whose value ends in "/" names a folder: it becomes the folder's index.md followed by
  its other pages, sorted by path, so that a newly registered event type or a new module appears
  in the navigation without an edit here.

`mkdocs serve` also watches generated/, so `llm-stream generate` refreshes a running preview.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
GENERATED_DOCS = ROOT / "generated" / "docs"
GENERATED_REGISTRY = ROOT / "generated" / "registry"
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


def _folder_pages(docs_dir: Path, folder: str) -> list[str]:
    found: set[str] = set()
    for base in (docs_dir, GENERATED_DOCS):
        found |= {
            path.relative_to(base).as_posix() for path in (base / folder).glob("*.md")
        }
    if folder.rstrip("/") == API_DIR:
        found |= {f"{API_DIR}/{module}.md" for module in api_modules()}
    index = f"{folder.rstrip('/')}/index.md"
    return ([index] if index in found else []) + sorted(found - {index})


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
    for module in api_modules():
        uri = f"{API_DIR}/{module}.md"
        add(File.generated(config, uri, content=api_page(module)), PACKAGE / f"{module}.py")
    return files


def on_serve(server: LiveReloadServer, config: MkDocsConfig, builder: Any) -> LiveReloadServer:
    for folder in (GENERATED_DOCS, GENERATED_REGISTRY, PACKAGE):
        server.watch(str(folder))
    return server
