"""The built site in a real browser: headless Chromium, driven by Playwright, over loopback.

Skipped unless LLM_STREAM_BROWSER=1 (the `docs_browser` nox session sets it), because it needs
Debian's chromium at /usr/bin/chromium (or CHROMIUM=/path) and takes a few seconds. Screenshots
of the home page and of an event page go to artifacts/.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    os.environ.get("LLM_STREAM_BROWSER") != "1",
    reason="browser test: set LLM_STREAM_BROWSER=1 (nox -s docs_browser)",
)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site, built into a temporary folder and served on 127.0.0.1 from a thread."""
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
         "-f", str(ROOT / "site" / "mkdocs.yml"), "-d", str(out)],
        check=True, cwd=ROOT,
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright import sync_api as playwright_api

    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no chromium at {CHROMIUM}: install Debian's chromium package")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def test_home_page(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/")
    assert page.title().startswith("LLM-Stream")
    assert page.locator("nav.md-nav").first.is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)


def test_event_page_shows_its_field_table(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/events/content.delta/")
    assert page.locator("h1").first.inner_text().startswith("content.delta")
    table = page.locator("table", has=page.locator("th", has_text="Required")).first
    assert table.is_visible()
    headers = table.locator("th").all_inner_texts()
    assert headers[:4] == ["Field", "Type", "Required", "Description"]
    fields = table.locator("tbody tr td:first-child").all_inner_texts()
    assert fields[:3] == ["v", "seq", "type"]
    assert "delta.text" in fields
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "event-content.delta.png"), full_page=True)


def test_rule_anchor_is_reachable(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/spec/#ls-seq-2")
    rule = page.locator("#ls-seq-2")
    assert rule.is_visible()
    assert "LS-SEQ-2" in rule.inner_text()


def test_search_finds_content_delta(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/")
    page.wait_for_load_state("networkidle")  # the search index is loaded by a web worker
    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially("content.delta", delay=20)
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=15000)
    texts = " ".join(results.all_inner_texts())
    assert "content.delta" in texts
    page.locator(".md-search-result__link", has_text="content.delta").first.click()
    page.wait_for_url("**/events/content.delta/**", timeout=15000)


def test_dark_mode_toggle(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/")
    schemes = set()
    for _ in range(3):
        schemes.add(page.locator("body").get_attribute("data-md-color-scheme"))
        page.locator("form[data-md-component='palette'] label:visible").first.click()
    assert {"default", "slate"} <= schemes


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_mapping_pages_hide_no_column_behind_sideways_scrolling(
        site_url: str, page: Any, fmt: str) -> None:
    page.goto(f"{site_url}/mappings/{fmt}/")
    assert page.locator("h2#stop-reasons").count() == 1
    tables = page.locator("article table")
    assert tables.count() >= 5
    for n in range(tables.count()):
        table = tables.nth(n)
        widths = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
        assert widths[0] <= widths[1], f"table {n} of {fmt} is wider than the page: {widths}"
    columns = page.locator("div.ls-side-by-side").first.evaluate(
        "d => getComputedStyle(d).gridTemplateColumns.split(' ').length")
    assert columns == 2
    codes = page.locator("div.ls-side-by-side pre code")
    for n in range(codes.count()):
        overflow = codes.nth(n).evaluate("c => c.scrollWidth - c.clientWidth")
        assert overflow <= 1, f"worked example {n} of {fmt} scrolls sideways"
