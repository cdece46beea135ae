"""`llm-stream translate-request`, run as a real subprocess.

Exit codes: 0 translated (the body on stdout), 1 refused (`PATH:LINE: FIELD: message` on
stderr, or the rule a translated request of ours breaks), 2 usage or I/O error.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from test_cli import COMMAND, run

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = ROOT / "tests" / "requests"
TOOL_FLOW = REQUESTS / "ours" / "tool-flow.json"
CHAT_TOOL_FLOW = REQUESTS / "openai-chat" / "tool-flow.json"


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_to_a_vendor_prints_the_vendor_body(fmt: str) -> None:
    result = run("translate-request", "--to", fmt, TOOL_FLOW)
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout) == json.loads((REQUESTS / fmt / "tool-flow.json").read_text())


def test_from_openai_chat_reads_stdin_and_prints_a_conforming_request(tmp_path: Path) -> None:
    result = run("translate-request", "--from", "openai-chat", "-",
                 stdin=CHAT_TOOL_FLOW.read_bytes())
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout) == json.loads(TOOL_FLOW.read_text())
    translated = tmp_path / "ours.json"
    translated.write_text(result.stdout)
    assert run("check-request", translated).returncode == 0


def test_a_refusal_exits_1_naming_the_field_and_its_line() -> None:
    result = run("translate-request", "--to", "openai-responses",
                 REQUESTS / "ours" / "stop-sequences.json")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{REQUESTS / 'ours' / 'stop-sequences.json'}:8: parameters.stop_sequences: "
        "OpenAI Responses has no stop_sequences"
    ]


def test_a_non_conforming_request_of_ours_exits_1_with_the_rule(tmp_path: Path) -> None:
    body = json.loads(TOOL_FLOW.read_text())
    body["messages"][2]["tool_call_id"] = "call_9"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(body, indent=2))
    result = run("translate-request", "--to", "anthropic", path)
    assert result.returncode == 1
    assert "messages[2].tool_call_id: LS-MSG-5" in result.stderr


def test_a_chat_body_that_makes_a_non_conforming_request_exits_1_with_the_rule() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c9", "content": "x"}]}
    result = run("translate-request", "--from", "openai-chat", "-",
                 stdin=json.dumps(body).encode())
    assert (result.returncode, result.stdout) == (1, "")
    assert "LS-MSG-5" in result.stderr


def test_bad_json_exits_2_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "model": "m",\n  "messages": [\n}\n')
    result = run("translate-request", "--to", "gemini", path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"llm-stream: {path}:4: not JSON: ")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("arguments", [
    ("translate-request", str(TOOL_FLOW)),
    ("translate-request", "--to", "gemini", "--from", "openai-chat", str(TOOL_FLOW)),
    ("translate-request", "--to", "cohere", str(TOOL_FLOW)),
    ("translate-request", "--from", "anthropic", str(TOOL_FLOW)),
    ("translate-request", "--to", "gemini", "/nonexistent/request.json"),
])
def test_usage_and_io_errors_exit_2(arguments: tuple[str, ...]) -> None:
    result = run(*arguments)
    assert (result.returncode, result.stdout) == (2, "")
    assert "Traceback" not in result.stderr


def test_the_guide_shows_the_real_output() -> None:
    """Each `$ llm-stream translate-request` of the guide prints what the guide shows, on
    stdout when it translates and on stderr when it refuses."""
    guide = (ROOT / "site" / "docs" / "guides" / "translate-request.md").read_text()
    (block,) = re.findall(r"^```console\n(.*?)^```", guide, re.S | re.M)
    sessions = re.findall(r"^\$ (llm-stream translate-request .*)\n((?:(?!\$ ).*\n)*)", block,
                          re.M)
    assert len(sessions) == 2
    for command, shown in sessions:
        result = subprocess.run([*COMMAND, *shlex.split(command)[1:]], capture_output=True,
                                text=True, encoding="utf-8", cwd=ROOT, timeout=60, check=False)
        assert (result.stdout or result.stderr) == shown, command
