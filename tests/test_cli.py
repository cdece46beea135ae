"""The real `llm-stream` console script, run as a subprocess: check, check-request, decode.

Exit codes: 0 conforming, 1 not conforming, 2 usage or I/O error. Diagnostics are printed as
`PATH:LINE: RULE-ID message`, with line numbers counted from the top of the input.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llm_stream.rules import RULES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
VALID = EXAMPLES / "complete" / "complete-example.sse"
SEQ_GAP = EXAMPLES / "invalid" / "seq-gap.sse"
UNDECLARED = EXAMPLES / "invalid" / "tool-call-undeclared-name.sse"
TOOLS_REQUEST = EXAMPLES / "complete" / "tool-flow-request-1.json"
LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<rule>LS-[A-Z]+-\d+) (?P<message>.+)$")


def _command() -> list[str]:
    beside = Path(sys.executable).with_name("llm-stream")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("llm-stream")
    return [found] if found else [sys.executable, "-m", "llm_stream_codegen.cli"]


COMMAND = _command()


def run(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *map(str, args)], input=stdin.decode() if stdin is not None else None,
        capture_output=True, text=True, encoding="utf-8", timeout=60, check=False,
    )


def parsed(stdout: str) -> list[dict[str, Any]]:
    found = []
    for text in stdout.splitlines():
        match = LINE.match(text)
        assert match, f"not PATH:LINE: RULE-ID message: {text!r}"
        found.append({**match.groupdict(), "line": int(match["line"])})
    return found


def event_line(path: Path, needle: str) -> int:
    """The line of the event (its `event:` line) whose data contains `needle`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    data = next(n for n, text in enumerate(lines, 1) if needle in text)
    assert lines[data - 2].startswith("event:")
    return data - 1


# -- check ------------------------------------------------------------------------------------


def test_check_a_conforming_body() -> None:
    result = run("check", VALID)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip() == f"{VALID}: conforms (8 events, 0 diagnostics)"


def test_check_a_body_that_does_not_conform() -> None:
    result = run("check", SEQ_GAP)
    assert result.returncode == 1
    (diagnostic,) = parsed(result.stdout)
    assert diagnostic["path"] == str(SEQ_GAP)
    assert diagnostic["rule"] == "LS-SEQ-2"
    gap = SEQ_GAP.read_text().splitlines()[diagnostic["line"]]
    assert diagnostic["line"] == event_line(SEQ_GAP, gap[gap.index('"seq"'):][:9])
    assert "does not conform" in result.stderr


@pytest.mark.parametrize("path", sorted((EXAMPLES / "invalid").glob("*.sse"))[::10],
                         ids=lambda p: p.name)
def test_every_line_names_an_existing_rule_and_a_line_of_the_file(path: Path) -> None:
    result = run("check", path)
    assert result.returncode in (0, 1), result.stderr
    lines = len(path.read_bytes().splitlines())
    for diagnostic in parsed(result.stdout):
        assert diagnostic["rule"] in RULES
        assert 0 <= diagnostic["line"] <= lines + 1


def test_warnings_are_marked_and_do_not_fail() -> None:
    path = EXAMPLES / "valid-extra" / "unregistered-event-type.sse"
    result = run("check", path)
    assert result.returncode == 0
    (diagnostic,) = parsed(result.stdout)
    assert diagnostic["rule"] == "LS-TYPE-1"
    assert diagnostic["message"].startswith("warning: ")
    assert diagnostic["line"] == event_line(path, '"type":"vendor.trace"')


def test_check_json_report() -> None:
    valid = run("check", "--json", VALID)
    assert valid.returncode == 0
    assert json.loads(valid.stdout) == {"conforming": True, "events": 8, "diagnostics": []}
    invalid = run("check", "--json", SEQ_GAP)
    assert invalid.returncode == 1
    report = json.loads(invalid.stdout)
    assert set(report) == {"conforming", "events", "diagnostics"}
    assert report["conforming"] is False
    assert report["events"] == len(run("decode", SEQ_GAP).stdout.splitlines())
    (diagnostic,) = report["diagnostics"]
    assert {"line", "rule", "message"} <= set(diagnostic)
    assert (diagnostic["rule"], diagnostic["severity"]) == ("LS-SEQ-2", "error")
    assert diagnostic["line"] == parsed(run("check", SEQ_GAP).stdout)[0]["line"]


def test_check_with_declared_tools(tmp_path: Path) -> None:
    assert run("check", UNDECLARED).returncode == 0  # nothing declared to check against
    result = run("check", "--tools", TOOLS_REQUEST, UNDECLARED)
    assert result.returncode == 1
    (diagnostic,) = parsed(result.stdout)
    assert diagnostic["rule"] == "LS-CALL-4"
    assert diagnostic["line"] == event_line(UNDECLARED, '"type":"tool.call"')
    # a JSON array of declarations does as well as a whole request
    declarations = tmp_path / "tools.json"
    declarations.write_text(json.dumps(json.loads(TOOLS_REQUEST.read_text())["tools"]))
    assert run("check", "--tools", declarations, UNDECLARED).returncode == 1
    declarations.write_text(json.dumps([{"name": "get_forecast"}]))
    assert run("check", "--tools", declarations, UNDECLARED).returncode == 0
    assert run("check", "--json", "--tools", declarations, UNDECLARED).returncode == 0
    declarations.write_text("{not json")
    result = run("check", "--tools", declarations, UNDECLARED)
    assert result.returncode == 2 and "not JSON" in result.stderr
    assert run("check", "--tools", tmp_path / "missing.json", UNDECLARED).returncode == 2


def test_check_against_the_request(tmp_path: Path) -> None:
    """--request: the request's tools are the declared ones, and its metadata's request_id is
    what stream.start and stream.end should echo (a warning when they do not)."""
    request = EXAMPLES / "complete" / "request-metadata.json"
    echoed = EXAMPLES / "valid-extra" / "request-id-echoed.sse"
    not_echoed = EXAMPLES / "invalid" / "request-id-not-echoed.sse"
    assert run("check", "--request", request, echoed).stdout == ""
    assert run("check", not_echoed).stdout == ""  # no request, nothing to echo
    result = run("check", "--request", request, not_echoed)
    assert result.returncode == 0  # a SHOULD: the stream still conforms
    (diagnostic,) = parsed(result.stdout)
    assert diagnostic["rule"] == "LS-META-2" and "warning" in diagnostic["message"]
    assert diagnostic["line"] == event_line(not_echoed, '"type":"stream.end"')
    # the request's tools are the declared ones: this request declares none
    result = run("check", "--request", request, UNDECLARED)
    assert sorted(d["rule"] for d in parsed(result.stdout)) == [
        "LS-CALL-4", "LS-META-2", "LS-META-2"]
    assert run("check", "--request", TOOLS_REQUEST, UNDECLARED).returncode == 1
    declarations = tmp_path / "tools.json"
    declarations.write_text("[]")
    result = run("check", "--request", declarations, UNDECLARED)
    assert result.returncode == 2 and "not a request" in result.stderr
    result = run("check", "--request", request, "--tools", TOOLS_REQUEST, UNDECLARED)
    assert result.returncode == 2 and "not allowed with" in result.stderr


def test_check_reads_standard_input() -> None:
    result = run("check", "-", stdin=SEQ_GAP.read_bytes())
    assert result.returncode == 1
    (diagnostic,) = parsed(result.stdout)
    assert diagnostic["path"] == "-"
    assert diagnostic["line"] == parsed(run("check", SEQ_GAP).stdout)[0]["line"]
    assert run("check", "-", stdin=VALID.read_bytes()).returncode == 0
    assert json.loads(run("check", "--json", "-", stdin=b"").stdout)["conforming"] is False


def test_check_an_http_capture_counts_lines_from_the_top(tmp_path: Path) -> None:
    capture = tmp_path / "capture.http"
    head = b"HTTP/1.1 200 OK\nContent-Type: text/event-stream\nCache-Control: no-cache\n\n"
    capture.write_bytes(head + SEQ_GAP.read_bytes())
    result = run("check", capture)
    assert result.returncode == 1
    (diagnostic,) = parsed(result.stdout)
    assert diagnostic["line"] == parsed(run("check", SEQ_GAP).stdout)[0]["line"] + 4
    # headers with LF line ends before a CRLF body: the head ends at the first empty line
    crlf = EXAMPLES / "valid-extra" / "complete-example-crlf.sse"
    capture.write_bytes(head + crlf.read_bytes())
    result = run("check", "--json", capture)
    assert json.loads(result.stdout) == {"conforming": True, "events": 8, "diagnostics": []}


def test_a_missing_file_is_an_io_error(tmp_path: Path) -> None:
    for command in ("check", "check-request", "decode"):
        result = run(command, tmp_path / "nope.sse")
        assert result.returncode == 2
        assert result.stdout == ""
        assert "nope.sse" in result.stderr and "No such file" in result.stderr
    assert run("check", tmp_path).returncode == 2  # a directory


@pytest.mark.parametrize("args", [
    (),
    ("frobnicate",),
    ("check",),
    ("check", "--no-such-option", str(VALID)),
    ("check", "--max-line-bytes", "many", str(VALID)),
    ("decode", str(VALID), str(VALID)),
    ("check-request",),
], ids=repr)
def test_bad_arguments_exit_2(args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.returncode == 2, result
    assert "usage: llm-stream" in result.stderr + result.stdout


def test_help_exits_0() -> None:
    assert run("--help").returncode == 0
    assert run("check", "--help").returncode == 0


def test_limits_on_the_command_line() -> None:
    path = EXAMPLES / "invalid" / "comment-line-over-limit.sse"
    assert run("check", path).returncode == 0
    result = run("check", "--max-line-bytes", "256", path)
    assert result.returncode == 1
    assert [d["rule"] for d in parsed(result.stdout)] == ["LS-LIMIT-1"]


# -- check-request ----------------------------------------------------------------------------


def test_check_request_on_a_valid_request() -> None:
    result = run("check-request", TOOLS_REQUEST)
    assert (result.returncode, result.stdout) == (0, "")


@pytest.mark.parametrize(("name", "rule", "needle"), [
    ("request-model-number.json", "LS-REQ-3", '"model": 4'),
    ("parameters-temperature-string.json", "LS-PARAM-1", '"temperature"'),
    ("message-name-number.json", "LS-MSG-3", '"name": 12345'),
    ("tool-message-unknown-call-id.json", "LS-MSG-5", '"tool_call_id": "call_2"'),
])
def test_check_request_points_at_the_offending_value(name: str, rule: str, needle: str) -> None:
    path = EXAMPLES / "invalid" / name
    result = run("check-request", path)
    assert result.returncode == 1
    (diagnostic,) = parsed(result.stdout)
    assert (diagnostic["path"], diagnostic["rule"]) == (str(path), rule)
    lines = path.read_text().splitlines()
    assert needle in lines[diagnostic["line"] - 1]


def test_check_request_from_standard_input_and_on_broken_bodies() -> None:
    body = (EXAMPLES / "invalid" / "request-model-number.json").read_bytes()
    result = run("check-request", "-", stdin=body)
    assert result.returncode == 1
    assert result.stdout.startswith("-:4: LS-REQ-3 ")
    result = run("check-request", "-", stdin=b'{\n  "version": "1.0",\n  "model": \n}')
    assert result.returncode == 1
    assert result.stdout.startswith("-:4: LS-REQ-4 ")
    one_line = json.dumps(json.loads(body))
    assert run("check-request", "-", stdin=one_line.encode()).stdout.startswith("-:1: LS-REQ-3")


def test_check_request_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"model": "caf\xe9"}')
    result = run("check-request", path)
    assert result.returncode == 2 and "UTF-8" in result.stderr


# -- decode -----------------------------------------------------------------------------------


def test_decode_prints_json_lines() -> None:
    result = run("decode", VALID)
    assert result.returncode == 0 and result.stderr == ""
    events = [json.loads(line) for line in result.stdout.splitlines()]
    expected = [json.loads(line[6:]) for line in VALID.read_text().splitlines()
                if line.startswith("data: ")]
    assert events == expected


def test_decode_puts_diagnostics_on_stderr() -> None:
    result = run("decode", SEQ_GAP)
    assert result.returncode == 1
    types = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert types[0] == "stream.start" and types[-1] == "stream.end"
    (diagnostic,) = parsed(result.stderr)
    assert diagnostic["rule"] == "LS-SEQ-2"


def test_decode_reads_standard_input_and_keeps_non_ascii_text() -> None:
    body = (b'event: stream.start\ndata: {"v":"1.0","seq":0,"type":"stream.start","model":"m",'
            b'"created":1}\n\nevent: content.delta\ndata: {"v":"1.0","seq":1,'
            b'"type":"content.delta","index":0,"role":"assistant",'
            b'"delta":{"text":"24\xc2\xb0C \xe4\xb8\xad"}}\n\n')
    result = run("decode", "-", stdin=body)
    assert result.returncode == 1  # no stream.end
    assert "LS-END-2" in result.stderr
    lines = result.stdout.splitlines()
    assert json.loads(lines[1])["delta"]["text"] == "24\u00b0C \u4e2d"
    assert "\u00b0" in lines[1]
