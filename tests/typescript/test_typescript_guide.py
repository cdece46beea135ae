"""The TypeScript guide's code type-checks and runs as it stands.

The ```ts blocks of site/docs/guides/typescript.md, joined in order as one module, are checked by
`tsc --noEmit` against the generated package (imported as "llm-stream", as an application
imports it), then run in Node against a server on loopback that answers with the spec's complete
example, in place of the guide's endpoint.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from node_package import ROOT, node_project, requires_node

from llm_stream import Decoder, aggregate, encode_event

pytestmark = requires_node

GUIDE = ROOT / "site" / "docs" / "guides" / "typescript.md"
ENDPOINT = "https://inference.example/v1/stream"
EXAMPLE = ROOT / "spec" / "examples" / "complete" / "complete-example.sse"


class _Endpoint(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        assert request["messages"]
        assert self.headers["content-type"] == "application/llm-request+json"
        body = EXAMPLE.read_bytes()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/stream"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def guide_code() -> str:
    blocks = re.findall(r"^```ts\n(.*?)^```", GUIDE.read_text(), re.S | re.M)
    assert len(blocks) >= 4
    return "\n".join(blocks)


def test_the_guide_type_checks(tmp_path: Path) -> None:
    (tmp_path / "guide.ts").write_text(guide_code())
    (tmp_path / "tsconfig.json").write_text(json.dumps({
        "compilerOptions": {
            "target": "ES2022", "lib": ["ES2022", "DOM", "DOM.Iterable", "DOM.AsyncIterable"],
            "module": "ESNext", "moduleResolution": "Bundler", "strict": True, "noEmit": True,
            "types": [], "paths": {"llm-stream": [str(ROOT / "generated/typescript/src/index.ts")]},
        },
        "files": ["guide.ts"],
    }))
    tsc = node_project() / "node_modules" / "typescript" / "bin" / "tsc"
    result = subprocess.run(["node", str(tsc), "-p", str(tmp_path)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_guide_runs(tmp_path: Path, endpoint: str) -> None:
    source, package = tmp_path / "source", tmp_path / "app" / "node_modules" / "llm-stream"
    source.mkdir()
    (source / "guide.ts").write_text(guide_code().replace(ENDPOINT, endpoint))
    run = node_project() / "run.mjs"
    for folder, target in ((ROOT / "generated/typescript/src", package),
                           (source, tmp_path / "app")):
        subprocess.run(["node", str(run), "--transpile", str(folder), str(target)], check=True)
    (package / "package.json").write_text(json.dumps(
        {"name": "llm-stream", "type": "module", "exports": "./index.js"}))
    result = subprocess.run(["node", str(tmp_path / "app" / "guide.js")], capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()

    decoder = Decoder(typed=False)
    events = decoder.feed(EXAMPLE.read_bytes()) + decoder.close()
    answer = aggregate(events)
    assert lines[0] == answer.output_text
    assert lines[1] == "true []"
    assert lines[2].startswith("1 [ '1: LS-END-2 ")
    usage = answer.usage.output_tokens if answer.usage else None
    assert lines[3] == f"{answer.output_text} {answer.stop_reason} {usage} true"
    delta = {"v": "1.0", "seq": 0, "type": "content.delta", "index": 0, "role": "assistant",
             "delta": {"text": "Hi"}}
    assert "\n".join(lines[4:]).rstrip("\n") == encode_event(delta).decode().rstrip("\n")
    shutil.rmtree(tmp_path, ignore_errors=True)
