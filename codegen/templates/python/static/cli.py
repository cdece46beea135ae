"""`llm-stream check`, `check-request`, `decode` and `translate-request`: the bindings'
commands.

Exit codes: 0 conforming, 1 not conforming, 2 usage or I/O error. A capture may be a bare
response body or a whole HTTP response (status line and headers first, as curl -i saves it);
line numbers always count from the top of the file. Captures are read and judged a chunk at a
time: memory stays flat however long the input, and `decode` writes each event as it comes.
The `llm-stream` command (`llm_stream_codegen.cli`) dispatches here; each `configure_*` adds a
command's arguments to its parser.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any

from .decoder import Decoder, Event
from .diagnostics import Diagnostic, Severity
from .jsontext import loads
from .request import check_request_text, line_of_pointer

CHUNK = 1 << 16
MAX_HEAD_BYTES = 64 << 10
"""The most bytes a capture's HTTP status line and headers may take (servers refuse far less)."""


class UsageError(Exception):
    """Bad arguments or unreadable input: exit code 2."""


def positive(text: str) -> int:
    """An argparse type: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 1")
    return value


def counted(count: int, noun: str) -> str:
    """`1 diagnostic`, `2 diagnostics`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from exc


def _chunks(stream: IO[bytes], path: str) -> Iterator[bytes]:
    """What arrives, as it arrives (`read1`: a pipe gives what it has, not a full chunk)."""
    read = getattr(stream, "read1", stream.read)
    while True:
        try:
            chunk = read(CHUNK)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        if not chunk:
            return
        yield chunk


def _skip_http_head(chunks: Iterator[bytes], path: str) -> tuple[Iterator[bytes], int]:
    """Drop a leading HTTP status line and headers; returns the body and the lines dropped.

    Each byte of the head is searched once, and a head longer than MAX_HEAD_BYTES is refused.
    """
    head = bytearray()
    for chunk in chunks:
        head += chunk
        if len(head) >= 5:
            break
    if not head.startswith(b"HTTP/"):
        return _chain(bytes(head), chunks), 0
    searched = 0
    while True:
        end, searched = _head_end(head, searched)
        if end is not None:
            return _chain(bytes(head[end:]), chunks), head.count(b"\n", 0, end)
        if len(head) > MAX_HEAD_BYTES:
            raise UsageError(f"{path}: the HTTP head (status line and headers) runs past "
                             f"{MAX_HEAD_BYTES:,} bytes without the empty line that ends it")
        chunk = next(chunks, b"")
        if not chunk:
            return iter(()), head.count(b"\n")
        head += chunk


def _head_end(head: bytearray, start: int) -> tuple[int | None, int]:
    """Where the body starts (after the first empty line, its line end CRLF or LF), searching
    the complete lines from `start`; and where the next search starts."""
    position = start
    while (newline := head.find(b"\n", position)) >= 0:
        if newline == position or (newline == position + 1 and head[position] == 0x0D):
            return newline + 1, newline + 1
        position = newline + 1
    return None, position


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _json_file(path: str) -> Any:
    try:
        with _open(path) as stream:
            return loads(stream.read().decode("utf-8", "replace"))
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON: {exc}") from exc
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def answered_request(
    *, request: str | None = None, tools: str | None = None
) -> dict[str, Any]:
    """The `Decoder` options for the request a stream answers, each file read once: from a
    whole `request`, its tools and its metadata (which the stream should echo in part,
    LS-META-2); from `tools`, a request or a JSON array of declarations, the tools alone."""
    options: dict[str, Any] = {}
    path = request or tools
    if path is None:
        return options
    document = _json_file(path)
    if request is not None:
        if not isinstance(document, dict):
            raise UsageError(f"{path}: not a request (a JSON object)")
        metadata = document.get("metadata")
        options["request_metadata"] = metadata if isinstance(metadata, dict) else None
    declared = document.get("tools", []) if isinstance(document, dict) else document
    if not isinstance(declared, list):
        raise UsageError(f"{path}: no list of tools found")
    options["tools"] = [
        t["name"] for t in declared if isinstance(t, dict) and isinstance(t.get("name"), str)
    ]
    return options


def iter_capture(
    path: str, decoder: Decoder
) -> Iterator[tuple[list[Event], list[Diagnostic]]]:
    """A capture decoded a chunk at a time: the events each chunk completed and the
    diagnostics found meanwhile, lines counted from the top of the file. The decoder's
    diagnostics are handed over and cleared as they come, so that none piles up."""
    with _open(path) as stream:
        body, offset = _skip_http_head(_chunks(stream, path), path)
        for chunk in body:
            events = decoder.feed(chunk)
            yield events, _taken(decoder, offset)
        events = decoder.close()
        yield events, _taken(decoder, offset)


def _taken(decoder: Decoder, offset: int) -> list[Diagnostic]:
    found = decoder.diagnostics
    if not found:
        return []
    taken = [Diagnostic(d.rule, d.line + offset if d.line else d.line, d.message, d.severity)
             for d in found]
    found.clear()
    return taken


def decode_file(path: str, decoder: Decoder) -> tuple[list[Event], list[Diagnostic]]:
    """Every event and diagnostic of a capture, diagnostics in line order; for small files."""
    events: list[Event] = []
    diagnostics: list[Diagnostic] = []
    for batch, found in iter_capture(path, decoder):
        events += batch
        diagnostics += found
    return events, sorted(diagnostics, key=lambda d: d.line)


def _print(path: str, diagnostics: Sequence[Diagnostic], stream: IO[str]) -> None:
    for d in diagnostics:
        marker = "warning: " if d.severity is Severity.WARNING else ""
        print(f"{path}:{d.line}: {d.rule} {marker}{d.message}", file=stream)


def _errors(diagnostics: Sequence[Diagnostic]) -> int:
    return sum(1 for d in diagnostics if d.severity is Severity.ERROR)


def _verdict(path: str, conforming: bool, detail: str) -> None:
    verdict = "conforms" if conforming else "does not conform"
    print(f"{path}: {verdict} ({detail})", file=sys.stderr)


class _JsonReport:
    """`check --json`: one JSON object, its diagnostics written as they are found."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.written = 0
        out.write('{"diagnostics": [')

    def add(self, diagnostics: Sequence[Diagnostic]) -> None:
        for d in diagnostics:
            self.out.write((", " if self.written else "")
                           + json.dumps(d.as_dict(), ensure_ascii=False))
            self.written += 1

    def end(self, *, conforming: bool, events: int, error: str | None = None) -> None:
        tail: dict[str, Any] = {"events": events, "conforming": conforming}
        if error is not None:
            tail["error"] = error
        self.out.write("], " + json.dumps(tail, ensure_ascii=False)[1:] + "\n")


def _printable(text: str) -> str:
    """Text fit for a JSON document: a file name's undecodable bytes shown as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _check(args: argparse.Namespace) -> int:
    report = _JsonReport(sys.stdout) if args.json else None
    events = errors = diagnostics = 0
    try:
        decoder = Decoder(
            typed=False,
            **answered_request(request=args.request, tools=args.tools),
            max_line_bytes=args.max_line_bytes,
            max_event_bytes=args.max_event_bytes,
            max_blocks=args.max_blocks,
        )
        for batch, found in iter_capture(args.path, decoder):
            events += len(batch)
            diagnostics += len(found)
            errors += _errors(found)
            if report is not None:
                report.add(found)
            elif found:
                _print(args.path, found, sys.stdout)
                sys.stdout.flush()  # a live stream's findings show as they are made
    except UsageError as exc:
        if report is not None:
            report.end(conforming=False, events=events, error=_printable(str(exc)))
        raise
    if report is not None:
        report.end(conforming=not errors, events=events)
    else:
        _verdict(args.path, not errors,
                 f"{counted(events, 'event')}, {counted(diagnostics, 'diagnostic')}")
    return 0 if not errors else 1


def _check_request(args: argparse.Namespace) -> int:
    with _open(args.path) as stream:
        try:
            raw = stream.read()
        except OSError as exc:
            raise UsageError(f"{args.path}: cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.path}: not UTF-8: {exc}") from exc
    diagnostics = check_request_text(text)
    _print(args.path, diagnostics, sys.stdout)
    errors = _errors(diagnostics)
    _verdict(args.path, not errors, f"a request, {counted(len(diagnostics), 'diagnostic')}")
    return 0 if not errors else 1


def _json_text(path: str, text: str) -> Any:
    """The JSON value of a text, or a usage error naming the line where it stops being JSON."""
    try:
        return loads(text)
    except ValueError as exc:
        try:
            json.loads(text)
        except json.JSONDecodeError as located:
            raise UsageError(f"{path}:{located.lineno}: not JSON: {located.msg} "
                             f"(column {located.colno})") from exc
        raise UsageError(f"{path}:1: not JSON: {exc}") from exc


def _translate_request(args: argparse.Namespace) -> int:
    """A request body between our media type and a vendor's; the result on stdout. Exit 1
    names the field that cannot be carried, or the rule a translated request of ours breaks."""
    from .translate import TranslationError, request_from, request_to  # only this command's

    with _open(args.path) as stream:
        raw = stream.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.path}: not UTF-8: {exc}") from exc
    body = _json_text(args.path, text)
    try:
        result = request_from(args.source, body) if args.source else request_to(args.target, body)
    except TranslationError as exc:
        line = line_of_pointer(text, exc.pointer)
        print(f"{args.path}:{line}: {exc.field or '(body)'}: {exc.message}", file=sys.stderr)
        return 1
    output = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
    if args.source:
        diagnostics = check_request_text(output)
        _print("(translated request)", diagnostics, sys.stderr)
        if _errors(diagnostics):
            return 1
    sys.stdout.write(output)
    return 0


def _decode(args: argparse.Namespace) -> int:
    decoder = Decoder(typed=False, max_line_bytes=args.max_line_bytes,
                      max_event_bytes=args.max_event_bytes, max_blocks=args.max_blocks)
    out = sys.stdout.buffer
    errors = 0
    for batch, found in iter_capture(args.path, decoder):
        if batch:
            out.write(b"".join(_json_line(event) for event in batch))
            out.flush()
        if found:
            _print(args.path, found, sys.stderr)
            errors += _errors(found)
    return 0 if not errors else 1


def _json_line(event: Any) -> bytes:
    """One event as a line of JSON, its text as UTF-8; a lone surrogate (which JSON's \\u escapes
    can carry but UTF-8 cannot) comes out as that escape (backslashreplace writes it so)."""
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"


def _limits(command: argparse.ArgumentParser) -> None:
    command.add_argument("--max-line-bytes", type=positive, default=1 << 20, metavar="N",
                         help="the longest line accepted (default: 1 MiB)")
    command.add_argument("--max-event-bytes", type=positive, default=8 << 20, metavar="N",
                         help="the largest event accepted (default: 8 MiB)")
    command.add_argument("--max-blocks", type=positive, default=4096, metavar="N",
                         help="the most content blocks a stream may open (default: 4096)")


def configure_check(check: argparse.ArgumentParser) -> None:
    check.add_argument("--json", action="store_true", help="one JSON report instead of lines")
    answers = check.add_mutually_exclusive_group()
    answers.add_argument("--request", metavar="FILE",
                         help="the request the stream answers: its tools are the declared ones "
                              "and its metadata what the stream should echo")
    answers.add_argument("--tools", metavar="FILE",
                         help="the request (or a JSON array of tools) whose tools were declared")
    _limits(check)
    check.add_argument("path", metavar="PATH|-")
    check.set_defaults(handler=_check)


def configure_check_request(request: argparse.ArgumentParser) -> None:
    request.add_argument("path", metavar="PATH|-")
    request.set_defaults(handler=_check_request)


def configure_translate_request(translate_request: argparse.ArgumentParser) -> None:
    from .translate import FORMATS, FROM_FORMATS

    direction = translate_request.add_mutually_exclusive_group(required=True)
    direction.add_argument("--from", dest="source", choices=FROM_FORMATS, metavar="FORMAT",
                           help=f"a vendor's body into ours ({', '.join(FROM_FORMATS)})")
    direction.add_argument("--to", dest="target", choices=FORMATS, metavar="FORMAT",
                           help=f"ours into a vendor's body ({', '.join(FORMATS)})")
    translate_request.add_argument("path", metavar="PATH|-")
    translate_request.set_defaults(handler=_translate_request)

def configure_decode(decode: argparse.ArgumentParser) -> None:
    _limits(decode)
    decode.add_argument("path", metavar="PATH|-")
    decode.set_defaults(handler=_decode)
