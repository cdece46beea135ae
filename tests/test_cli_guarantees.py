"""What `llm-stream` guarantees under bad input, signals and broken pipes, run as real processes.

No command shows a traceback: a usage or I/O error exits 2 with one line, Ctrl-C exits 130 with
one line, a closed output pipe ends the command quietly with 141. `check` and `decode` stream:
`decode` writes an event before the next one arrives, and the memory of both stays flat however
long the input.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_stream import SPEC_VERSION, __version__, implementation
from llm_stream.cli import MAX_HEAD_BYTES, _skip_http_head
from llm_stream_codegen.cli import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "spec" / "examples"
VALID = EXAMPLES / "complete" / "complete-example.sse"
SEQ_GAP = EXAMPLES / "invalid" / "seq-gap.sse"
REQUEST = EXAMPLES / "complete" / "tool-flow-request-1.json"


def _command() -> list[str]:
    beside = Path(sys.executable).with_name("llm-stream")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "llm_stream_codegen.cli"]


COMMAND = _command()


def run(*args: str | Path | bytes, stdin: bytes | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*COMMAND, *args], input=stdin, capture_output=True, timeout=120,
                          check=False, cwd=cwd)


def no_traceback(stderr: bytes) -> None:
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")


def event(kind: str, seq: int, **fields: object) -> bytes:
    data = json.dumps({"v": "1.0", "seq": seq, "type": kind, **fields}, separators=(",", ":"))
    return f"event: {kind}\ndata: {data}\n\n".encode()


def deltas(first_seq: int, count: int, role: str) -> bytes:
    return b"".join(event("content.delta", first_seq + i, index=0, role=role,
                          delta={"text": f" word{i}"}) for i in range(count))


def capture(size: int, role: str = "assistant") -> Iterator[bytes]:
    """A body of about `size` bytes, made as it is read: conforming, or with another `role`
    one diagnostic an event."""
    yield event("stream.start", 0, model="m", created=1)
    seq = 1
    produced = 0
    while produced < size:
        chunk = deltas(seq, 500, role)
        seq += 500
        produced += len(chunk)
        yield chunk
    yield event("content.stop", seq, index=0, stop_reason="end_turn")
    yield event("stream.end", seq + 1)


# -- the help screen and the version --------------------------------------------------------------


def test_help_lists_every_command_with_its_summary() -> None:
    result = run("--help")
    assert result.returncode == 0
    screen = " ".join(result.stdout.decode().split())
    for command in COMMANDS:
        assert f"{command.name} {command.summary}" in screen
    for name in ("generate", "check-spec", "registry", "check", "check-request", "decode"):
        assert name in {c.name for c in COMMANDS}


def test_an_unknown_command_lists_every_command() -> None:
    result = run("frobnicate")
    assert result.returncode == 2
    no_traceback(result.stderr)
    message = result.stderr.decode()
    assert "invalid choice: 'frobnicate'" in message
    for command in COMMANDS:
        assert f"'{command.name}'" in message


def test_version_is_the_package_version() -> None:
    from importlib.metadata import version

    assert __version__ == version("llm-stream") == "1.0.0a1"
    assert SPEC_VERSION == "1.0"
    result = run("--version")
    expected = f"llm-stream 1.0.0a1 (LLM-Stream 1.0; decoder: {implementation()})\n"
    assert (result.returncode, result.stdout.decode()) == (0, expected)


# -- usage errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-5", "0", "many", "1.5"])
@pytest.mark.parametrize("option", ["--max-line-bytes", "--max-event-bytes"])
def test_numeric_options_are_whole_numbers_from_1(option: str, value: str) -> None:
    for command in ("check", "decode"):
        result = run(command, f"{option}={value}", VALID)
        assert result.returncode == 2
        no_traceback(result.stderr)
        assert f"argument {option}:" in result.stderr.decode()


def test_check_json_on_a_missing_file_still_reports(tmp_path: Path) -> None:
    result = run("check", "--json", tmp_path / "nope.sse")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["conforming"] is False and report["events"] == 0
    assert "nope.sse" in report["error"] and "No such file" in report["error"]
    assert result.stderr.decode().startswith("llm-stream: ")


def test_one_diagnostic_is_singular() -> None:
    result = run("check", SEQ_GAP)
    assert result.stderr.decode().endswith("does not conform (8 events, 1 diagnostic)\n")


def test_check_request_says_so_when_the_request_conforms() -> None:
    result = run("check-request", REQUEST)
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.decode() == f"{REQUEST}: conforms (a request, 0 diagnostics)\n"


# -- I/O errors and file names --------------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "decode", "check-request"])
def test_a_read_error_exits_2_with_one_line(command: str) -> None:
    """/proc/self/mem opens but reading its first page fails with EIO."""
    result = run(command, "/proc/self/mem")
    assert result.returncode == 2
    no_traceback(result.stderr)
    assert result.stderr.decode() == (
        "llm-stream: /proc/self/mem: cannot read: Input/output error\n")


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/caf\xe9.sse"
    Path(os.fsdecode(name)).write_bytes(SEQ_GAP.read_bytes())
    result = run("check", name)
    assert result.returncode == 1
    no_traceback(result.stderr)
    assert result.stdout.startswith(name + b":10: LS-SEQ-2 ")
    assert result.stderr.startswith(name + b": does not conform")
    missing = run("check", "--json", name + b".missing")
    assert missing.returncode == 2
    assert "caf\ufffd.sse.missing" in json.loads(missing.stdout)["error"]


def test_text_that_utf8_cannot_carry_is_refused_by_rule() -> None:
    """JSON may hold a lone surrogate (\\ud800), which no UTF-8 output can carry."""
    body = (event("stream.start", 0, model="m", created=1)
            + b'event: content.delta\ndata: {"v":"1.0","seq":1,"type":"content.delta",'
              b'"index":0,"role":"assistant","delta":{"text":"\\ud800 \xc2\xb0"}}\n\n')
    for command in ("decode", "check"):
        result = run(command, "-", stdin=body)
        no_traceback(result.stderr)
        assert result.returncode == 1
        assert b"-:4: LS-" in result.stdout + result.stderr


# -- HTTP heads -----------------------------------------------------------------------------------


def test_an_http_head_without_its_end_is_refused_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "endless.http"
    path.write_bytes(b"HTTP/1.1 200 OK\r\n" + b"X-Filler: aaaaaaaaaaaaaaaa\r\n" * 20_000)
    for args in (("check", path), ("check", "--json", path), ("decode", path)):
        result = run(*args)
        assert result.returncode == 2
        no_traceback(result.stderr)
        assert f"runs past {MAX_HEAD_BYTES:,} bytes" in result.stderr.decode()


def test_the_head_is_searched_once_whatever_the_chunking() -> None:
    """A head just under the limit, fed a byte at a time: each byte is looked at once, and the
    lines before the body are counted."""
    lines = MAX_HEAD_BYTES // 32
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Filler: aaaaaaaaaaaaaaaaaaa\r\n" * (lines - 2) + b"\r\n"
    assert len(head) < MAX_HEAD_BYTES
    body, dropped = _skip_http_head(iter([bytes([b]) for b in head + b"data: x\n"]), "-")
    assert dropped == lines
    assert b"".join(body) == b"data: x\n"


# -- pipes and signals ----------------------------------------------------------------------------


def test_decode_writes_each_event_before_the_next_arrives() -> None:
    """The input is written an event at a time, and each event's line is read back before the
    next is written: nothing waits for the end of the input."""
    process = subprocess.Popen([*COMMAND, "decode", "-"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        for seq, chunk in enumerate([event("stream.start", 0, model="m", created=1),
                                     *(event("content.delta", s, index=0, role="assistant",
                                             delta={"text": str(s)}) for s in range(1, 5))]):
            process.stdin.write(chunk)
            process.stdin.flush()
            assert json.loads(process.stdout.readline())["seq"] == seq
    finally:
        process.kill()
        process.communicate()


@pytest.mark.parametrize("keep", [1, 0], ids=["head -1", "head -0"])
@pytest.mark.parametrize("command", ["decode", "check", "translate --to openai-chat"])
def test_a_closed_pipe_ends_the_command_quietly(command: str, keep: int, tmp_path: Path) -> None:
    path = tmp_path / "long.sse"
    with path.open("wb") as out:  # check prints a line for each event that does not conform
        for chunk in capture(4 << 20, role="user" if command == "check" else "assistant"):
            out.write(chunk)
    shell = f"{' '.join(map(str, COMMAND))} {command} {path} | head -{keep}"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True,
                            timeout=120, check=False)
    no_traceback(result.stderr)
    assert result.returncode == 141
    assert len(result.stdout.splitlines()) == keep
    assert b"Exception ignored" not in result.stderr


@pytest.mark.parametrize("command", ["decode", "check"])
def test_ctrl_c_exits_130_with_one_line(command: str) -> None:
    process = subprocess.Popen([*COMMAND, command, "-"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(event("stream.start", 0, model="m", created=1))
    process.stdin.flush()
    if command == "decode":
        assert process.stdout.readline()  # the command is reading its input now
    else:
        # check prints nothing for a good event: send a bad one and wait for its diagnostic
        process.stdin.write(event("content.delta", 5, index=0, role="assistant",
                                  delta={"text": "x"}))
        process.stdin.flush()
        assert b"LS-SEQ-2" in process.stdout.readline()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == b"llm-stream: interrupted\n"


# -- memory ---------------------------------------------------------------------------------------

PEAK = textwrap.dedent("""
    import contextlib, os, sys, tracemalloc
    from llm_stream_codegen.cli import main
    command, path, report = sys.argv[1:]
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        tracemalloc.start()
        status = main([command, path])
        peak = tracemalloc.get_traced_memory()[1]
    open(report, "w").write(f"{status} {peak}")
""")


def peak_bytes(command: str, size: int, tmp_path: Path) -> int:
    """The Python heap's peak while `command` reads a body of `size` bytes."""
    path = tmp_path / f"{size}.sse"
    with path.open("wb") as out:
        for chunk in capture(size):
            out.write(chunk)
    report = tmp_path / "peak"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    subprocess.run([sys.executable, "-c", PEAK, command, str(path), str(report)],
                   check=True, timeout=600, env=env, stdout=subprocess.DEVNULL)
    status, peak = map(int, report.read_text().split())
    assert status == 0
    return peak


@pytest.mark.parametrize("command", ["check", "decode"])
def test_memory_stays_flat_in_the_input_size(command: str, tmp_path: Path) -> None:
    """16 times the input takes no more memory: the peak of an 8 MB body is within 1 MB of the
    peak of a 512 KB one (holding its 70,000 events would take tens of MB more)."""
    small = peak_bytes(command, 1 << 19, tmp_path)
    large = peak_bytes(command, 8 << 20, tmp_path)
    assert large < small + (1 << 20), (small, large)
    assert large < 64 << 20
