"""`llm-stream translate`: output, exit codes 0/1/2, stdin, and the diagnostics it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from llm_stream import Decoder

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "spec" / "examples" / "vendor"


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "llm_stream_codegen.cli", "translate", *args],
                          input=stdin, capture_output=True, check=False, cwd=ROOT)


def test_a_vendor_stream_becomes_its_llm_stream_body() -> None:
    result = run("--from", "anthropic", "--created", "1767225600",
                 str(VENDOR / "anthropic/thinking-tool-use.sse"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (VENDOR / "anthropic/thinking-tool-use-llm-stream.sse").read_bytes()
    assert result.stderr == b""


def test_a_cut_stream_exits_1_with_a_diagnostic_and_still_ends() -> None:
    path = VENDOR / "gemini/cut.sse"
    result = run("--from", "gemini", "-", stdin=path.read_bytes())
    assert result.returncode == 1
    assert result.stderr.decode().startswith("-:1: vendor-cut the Gemini stream ends")
    decoder = Decoder(typed=False)
    events = decoder.feed(result.stdout) + decoder.close()
    assert [e["type"] for e in events][-2:] == ["error", "stream.end"]
    assert decoder.conforming


def test_a_vendor_error_is_translated_with_a_warning_and_exit_0() -> None:
    result = run("--from", "openai-chat", str(VENDOR / "openai-chat/error-mid-stream.sse"))
    assert result.returncode == 0
    assert b"vendor-error warning: " in result.stderr


def test_llm_stream_becomes_openai_chat_chunks_ending_in_done() -> None:
    result = run("--to", "openai-chat", str(ROOT / "spec/examples/complete/complete-example.sse"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(b"data: [DONE]\n\n")
    assert b'"content":"The"' in result.stdout and b'"finish_reason":"stop"' in result.stdout


def test_a_broken_llm_stream_input_exits_1_and_still_ends_in_done() -> None:
    path = ROOT / "spec/examples/invalid/stream-end-missing.sse"
    result = run("--to", "openai-chat", str(path))
    assert result.returncode == 1
    assert result.stdout.endswith(b"data: [DONE]\n\n") and b'"truncated"' in result.stdout
    assert b"LS-" in result.stderr


def test_usage_and_io_errors_exit_2() -> None:
    assert run("--from", "mistral", "x").returncode == 2
    assert run("--to", "anthropic", "x").returncode == 2
    assert run("--from", "gemini", "--to", "openai-chat", "x").returncode == 2
    missing = run("--from", "gemini", str(ROOT / "no-such-file.sse"))
    assert missing.returncode == 2 and b"no-such-file.sse" in missing.stderr
    choice = run("--from", "anthropic", "--choice", "1", str(VENDOR / "anthropic/text.sse"))
    assert choice.returncode == 2 and b"--choice is for openai-chat and gemini" in choice.stderr
