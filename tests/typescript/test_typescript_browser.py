"""The TypeScript bindings in a browser: headless Chromium fetches streams over loopback and
decodes the response bodies with `Decoder.stream`, as a web client would.

The page imports the package as the browser gets it (ES modules, transpiled from the generated
sources); the server sends each stream an event at a time, flushing between them. The page must
find the events and diagnostics the Python decoder finds in the same bytes, and fold the same
answer. Needs Debian's chromium (or CHROMIUM=/path) and LLM_STREAM_TYPESCRIPT=1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from node_package import ROOT, canonical, node_project, requires_node

from llm_stream import Decoder, aggregate

pytestmark = requires_node

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
STREAMS = {
    "complete": ROOT / "spec/examples/complete/complete-example.sse",
    "tool-flow": ROOT / "spec/examples/complete/tool-flow-response-1.sse",
    "seq-gap": ROOT / "spec/examples/invalid/seq-gap.sse",
    "crlf": ROOT / "spec/examples/valid-extra/complete-example-crlf.sse",
}
PAGE = """<!doctype html>
<meta charset="utf-8">
<title>llm-stream in a browser</title>
<script type="module">
import { Aggregate, Decoder } from "/package/index.js";

async function decode(name) {
    const response = await fetch(`/stream/${name}`, {
        method: "POST",
        headers: { "content-type": "application/llm-request+json", accept: "text/event-stream" },
        body: JSON.stringify({ version: "1.0", stream: true, model: "m", messages: [] }),
    });
    const decoder = new Decoder();
    const result = new Aggregate();
    const events = [];
    for await (const event of decoder.stream(response.body)) {
        events.push(JSON.stringify(event));
        result.add(event);
    }
    return {
        contentType: response.headers.get("content-type"),
        events,
        diagnostics: decoder.diagnostics.map((d) => [d.rule, d.line, d.severity]),
        outputText: result.outputText,
        toolCalls: result.toolCalls.map((call) => [call.name, call.parsed]),
    };
}

const names = NAMES;
const decoded = await Promise.all(names.map(async (name) => [name, await decode(name)]));
window.results = Object.fromEntries(decoded);
</script>
"""


def _events(body: bytes) -> list[bytes]:
    """The body cut after each blank line: one write a server flushes per event."""
    return re.findall(rb"(?s).*?(?:\r\n\r\n|\n\n|\r\r)|.+$", body)


def handler(package: Path) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/":
                page = PAGE.replace("NAMES", json.dumps(list(STREAMS)))
                self._send(200, "text/html; charset=utf-8", page.encode())
            elif self.path.startswith("/package/") and self.path.endswith(".js"):
                file = package / self.path.removeprefix("/package/")
                if file.parent == package and file.is_file():
                    self._send(200, "text/javascript", file.read_bytes())
                else:
                    self._send(404, "text/plain", b"no such module")
            else:
                self._send(404, "text/plain", b"not found")

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            path = STREAMS.get(self.path.removeprefix("/stream/"))
            if path is None:
                self._send(404, "text/plain", b"no such stream")
                return
            self.send_response(200)
            self.send_header("content-type", 'text/event-stream; profile="llm-stream-1.0"')
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for piece in _events(path.read_bytes()):
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
                time.sleep(0.005)
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page, the package and the streams, served on 127.0.0.1 from a thread."""
    package = tmp_path_factory.mktemp("package")
    subprocess.run(["node", str(node_project() / "run.mjs"), "--transpile",
                    str(ROOT / "generated/typescript/src"), str(package)], check=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(package))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture(scope="module")
def results(site: str) -> dict[str, Any]:
    from playwright import sync_api as playwright_api

    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no chromium at {CHROMIUM}: install Debian's chromium package")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{site}/")
            page.wait_for_function("window.results !== undefined", timeout=30000)
            assert not errors, errors
            found: dict[str, Any] = page.evaluate("window.results")
            return found
        finally:
            browser.close()


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_browser_finds_what_the_python_decoder_finds(results: dict[str, Any],
                                                         name: str) -> None:
    body = STREAMS[name].read_bytes()
    decoder = Decoder(typed=False)
    events = decoder.feed(body) + decoder.close()
    found = results[name]
    assert found["contentType"] == 'text/event-stream; profile="llm-stream-1.0"'
    assert [canonical(json.loads(e)) for e in found["events"]] == [canonical(e) for e in events]
    assert found["diagnostics"] == [[d.rule, d.line, d.severity.value]
                                    for d in decoder.diagnostics]
    result = aggregate(events)
    assert found["outputText"] == result.output_text
    assert found["toolCalls"] == [[call.name, call.parsed] for call in result.tool_calls]


def test_the_streams_are_the_ones_meant(results: dict[str, Any]) -> None:
    assert results["complete"]["outputText"].strip()
    assert results["tool-flow"]["toolCalls"]
    assert [rule for rule, _, _ in results["seq-gap"]["diagnostics"]] == ["LS-SEQ-2"]
