"""The built site in a real browser: headless Chromium, driven by Playwright, over loopback.

Skipped unless LLM_STREAM_BROWSER=1 (the `docs_browser` nox session sets it), because it needs
Debian's chromium at /usr/bin/chromium (or CHROMIUM=/path; `.ci/run` looks in the same place) and
takes a few seconds. The site is the build LLM_STREAM_SITE_DIR names (nox's `docs` session), or a
fresh one. Every request that leaves loopback is blocked and recorded, and a page that makes one
fails its test: the site must work offline. Screenshots go to artifacts/.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from site_build import build_site

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
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory)


@pytest.fixture(scope="module")
def site_url(site_dir: Path) -> Iterator[str]:
    """The site, served on 127.0.0.1 from a thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_Quiet, directory=str(site_dir)))
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


def _offline_context(browser: Any, width: int, height: int = 900) -> tuple[Any, list[str]]:
    """A browser context in which every request off loopback (or off disk) is blocked, and the
    list it records them in."""
    context = browser.new_context(viewport={"width": width, "height": height})
    blocked: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(("http://127.0.0.1:", "file://", "data:", "blob:")):
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort()

    context.route("**/*", route)
    return context, blocked


@pytest.fixture
def offline(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    context, blocked = _offline_context(browser, 1280)
    try:
        yield context.new_page(), blocked
    finally:
        context.close()
    assert not blocked, f"the site reached off loopback: {blocked}"


@pytest.fixture
def page(offline: tuple[Any, list[str]]) -> Any:
    return offline[0]


@pytest.fixture
def mobile(browser: Any) -> Iterator[Any]:
    context, blocked = _offline_context(browser, 390, 844)
    try:
        yield context.new_page()
    finally:
        context.close()
    assert not blocked, f"the site reached off loopback: {blocked}"


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
    assert headers[:4] == ["Field", "Type", "Required", "Example"]
    fields = table.locator("tbody tr td:first-child").all_inner_texts()
    assert fields[:3] == ["v", "seq", "type"]
    assert "delta.text" in fields
    example = table.locator("tbody tr", has=page.locator("td:first-child", has_text="delta.text"))
    assert example.locator("td").nth(3).inner_text().startswith('"')
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "event-content.delta.png"), full_page=True)


def test_rule_anchor_is_reachable(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/spec/#ls-seq-2")
    rule = page.locator("#ls-seq-2")
    assert rule.is_visible()
    assert "LS-SEQ-2" in rule.inner_text()


def _search(page: Any, site_url: str, text: str) -> Any:
    page.goto(f"{site_url}/")
    page.wait_for_load_state("networkidle")  # the search index is loaded by a web worker
    search = page.locator("input.md-search__input")
    search.click()
    search.press_sequentially(text, delay=20)
    results = page.locator(".md-search-result__item")
    # the search index is built in a web worker when the page loads: slow on a busy machine
    results.first.wait_for(timeout=90000)
    return results


def test_search_finds_a_rule_by_its_id(site_url: str, page: Any) -> None:
    results = _search(page, site_url, "LS-SEQ-2")
    first = results.first.inner_text()
    assert "LS-SEQ-2" in first, first
    assert "LS-SEQ-2" in " ".join(results.all_inner_texts()[:3])


def test_search_finds_content_delta(site_url: str, page: Any) -> None:
    results = _search(page, site_url, "content.delta")
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


def test_lifecycle_diagrams_render_offline(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/spec/lifecycle/")
    page.wait_for_load_state("networkidle")
    diagrams = page.locator("svg.ls-diagram")
    assert diagrams.count() == 2
    for index, states in enumerate((["idle", "open", "failed", "closed"],
                                    ["unopened", "open", "closed"])):
        diagram = diagrams.nth(index)
        diagram.scroll_into_view_if_needed()
        box = diagram.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 60
        names = diagram.locator("text.name").all_text_contents()
        assert names == states
        assert diagram.locator("path.arrow").count() >= len(states)
    assert page.locator("pre.mermaid, .mermaid").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#stream").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "lifecycle.png"))


# The pages whose tables were too wide once (the mapping pages have a test of their own).
WIDE_TABLE_PAGES = ("/spec/lifecycle/", "/registries/stop-reasons/", "/registries/error-codes/",
                    "/registries/event-types/", "/events/content.delta/",
                    "/events/reasoning.signature/", "/events/", "/spec/rules/",
                    "/spec/request/")


def test_no_table_needs_sideways_scrolling(site_url: str, page: Any) -> None:
    for path in WIDE_TABLE_PAGES:
        page.goto(f"{site_url}{path}")
        wide = page.evaluate(
            """() => [...document.querySelectorAll('.md-typeset__scrollwrap')]
                .filter(wrap => wrap.scrollWidth > wrap.clientWidth + 1)
                .map(wrap => wrap.innerText.slice(0, 60))""")
        assert not wide, f"{path}: {wide}"


def test_examples_show_json_and_wire_tabs(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/events/content.delta/")
    tabs = page.locator(".tabbed-set").first
    labels = tabs.locator(".tabbed-labels label").all_inner_texts()
    assert labels == ["JSON", "Wire"]
    shown = tabs.locator(".tabbed-block").first
    assert shown.is_visible() and '"delta": {' in shown.inner_text()
    copy = shown.locator("button[data-md-type='copy']")
    copy.first.wait_for(timeout=5000)  # the theme adds a copy button to every code block
    tabs.locator(".tabbed-labels label", has_text="Wire").click()
    wire = tabs.locator(".tabbed-block").nth(1)
    assert wire.is_visible() and wire.inner_text().startswith("event: content.delta")


def test_status_badges_in_the_navigation_and_pages(site_url: str, page: Any) -> None:
    page.goto(f"{site_url}/events/reasoning.delta/")
    assert page.locator(".md-nav .md-status--provisional").count() >= 1
    assert page.locator(".md-nav .md-status--permanent").count() >= 1
    assert page.locator("article .ls-status--provisional").first.is_visible()
    assert page.locator("article .admonition", has_text="Provisional").first.is_visible()


def test_mobile_width(site_url: str, mobile: Any) -> None:
    mobile.goto(f"{site_url}/events/content.delta/")
    assert mobile.locator("h1").first.is_visible()
    drawer = mobile.locator(".md-sidebar--primary").first.bounding_box()
    assert drawer is not None and drawer["x"] + drawer["width"] <= 0  # the menu is folded away
    assert mobile.locator("label.md-header__button[for='__drawer']").is_visible()
    overflow = mobile.evaluate(
        "() => document.scrollingElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    ARTIFACTS.mkdir(exist_ok=True)
    mobile.screenshot(path=str(ARTIFACTS / "event-content.delta-mobile.png"))


def test_opened_from_disk_it_says_how_to_serve_it(site_dir: Path, page: Any) -> None:
    page.goto((site_dir / "spec" / "index.html").as_uri())
    note = page.locator(".ls-served")
    note.wait_for(timeout=5000)
    assert "python3 -m http.server" in note.inner_text()
