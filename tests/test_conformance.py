"""`llm-stream conformance` against real endpoints on loopback: `serve` with the mock model and
in gateway mode pass every scenario; a deliberately broken endpoint fails, naming the rule."""

from __future__ import annotations

import json

import pytest
from servers import serving_upstream

from llm_stream import Encoder
from llm_stream_codegen.cli import main
from llm_stream_conformance.scenarios import SCENARIOS
from llm_stream_server.gateway import FORMATS, Gateway
from llm_stream_server.mock import MockModel, answer
from llm_stream_server.replay import Received, ReplayServer, Reply


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str]:
    code = main(["conformance", *arguments])
    return code, capsys.readouterr().out


def test_serve_with_the_mock_model_passes_every_scenario(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving_upstream(MockModel()) as url:
        code, out = run(capsys, f"{url}/v1/stream")
    lines = out.splitlines()
    assert code == 0, out
    assert [line.split()[:2] for line in lines[:-1]] == [["PASS", s.name] for s in SCENARIOS]
    assert lines[-1] == f"{url}/v1/stream: 11 of 11 scenarios pass"


def test_serve_in_gateway_mode_passes_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    with serving_upstream(MockModel()) as upstream_url:
        gateway = Gateway(FORMATS["llm-stream"], base_url=f"{upstream_url}/v1/stream",
                          api_key=None, silence=10)
        with serving_upstream(gateway) as url:
            code, out = run(capsys, f"{url}/v1/stream", "--json")
    report = json.loads(out)
    assert code == 0 and report["passed"], out
    assert [r["name"] for r in report["results"]] == [s.name for s in SCENARIOS]


def _without_stream_start(_: Received) -> Reply:
    """A broken endpoint: it answers everything with 200 and a stream that lacks stream.start."""
    encoder = Encoder()
    events = answer({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, created=1)
    return Reply(chunks=[encoder.encode(e) for e in events[1:]])


def test_a_broken_endpoint_fails_naming_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    broken = ReplayServer(_without_stream_start)
    with broken.running() as url:
        code, out = run(capsys, f"{url}/v1/stream", "--only", "plain-text,wrong-content-type",
                        "--only", "malformed-request")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].split()[:2] == ["FAIL", "plain-text"]
    assert "LS-START-1" in lines[0]
    assert lines[1].split()[:3] == ["FAIL", "wrong-content-type", "D-HTTP-ERRORS:"]
    assert "expected HTTP 415" in lines[1] and "got 200" in lines[1]
    assert lines[2].split()[:3] == ["FAIL", "malformed-request", "D-HTTP-ERRORS:"]
    assert lines[3].endswith("0 of 3 scenarios pass, 3 fail")
    assert [r.headers["content-type"] for r in broken.received] == [
        "application/llm-request+json", "text/plain", "application/llm-request+json"]


def test_json_report_lists_each_failed_rule_with_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ReplayServer(_without_stream_start).running() as url:
        code, out = run(capsys, f"{url}/v1/stream", "--only", "plain-text", "--json")
    report = json.loads(out)
    result = report["results"][0]
    assert code == 1 and not report["passed"] and report["failed"] == 1
    assert "LS-START-1" in result["failed"]
    finding = next(f for f in result["findings"] if f["check"] == "LS-START-1")
    assert finding["line"] == 1 and finding["severity"] == "error"


def test_an_endpoint_that_skips_the_tool_call_fails_the_tool_scenario(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def text_only(request: Received) -> Reply:
        body = json.loads(request.body)
        body["tools"] = []
        return Reply(chunks=[Encoder().encode(e) for e in answer(body, created=1)][:1]
                     + _renumbered(answer(body, created=1)[1:]))

    with ReplayServer(text_only).running() as url:
        code, out = run(capsys, f"{url}/v1/stream", "--only", "tool-call")
    assert code == 1
    assert out.startswith("FAIL  tool-call  expect:tool-call: no tool.call")


def _renumbered(events: list[dict[str, object]]) -> list[bytes]:
    encoder = Encoder()
    encoder.seq = 1
    return [encoder.encode(e) for e in events]


@pytest.mark.parametrize("arguments", [
    ["ftp://example/v1/stream"], ["http://127.0.0.1:1/v1/stream", "--only", "nope"], [],
])
def test_usage_errors_exit_2(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", *arguments]) == 2


def test_an_unreachable_endpoint_fails_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "http://127.0.0.1:1/v1/stream", "--only", "plain-text")
    assert code == 1
    assert out.startswith("FAIL  plain-text  expect:response: ConnectError")
