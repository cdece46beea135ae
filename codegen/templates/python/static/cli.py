"""`llm-stream check`, `check-request`, `decode` and `translate-request`: the bindings'
command line.

Exit codes: 0 conforming, 1 not conforming, 2 usage or I/O error. A capture may be a bare
response body or a whole HTTP response (status line and headers first, as curl -i saves it);
line numbers always count from the top of the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any

from .decoder import Decoder
from .diagnostics import Diagnostic, Severity
from .jsontext import loads
from .request import check_request_text, line_of_pointer
from .translate import FORMATS, FROM_FORMATS, TranslationError, request_from, request_to

CHUNK = 1 << 16


class UsageError(Exception):
    """Bad arguments or unreadable input: exit code 2."""


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from exc


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _skip_http_head(chunks: Iterator[bytes]) -> tuple[Iterator[bytes], int]:
    """Drop a leading HTTP status line and headers; returns the body and the lines dropped."""
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= 5:
            break
    if not head.startswith(b"HTTP/"):
        return _chain(head, chunks), 0
    while True:
        end = _head_end(head)
        if end is not None:
            lines = head[:end].count(b"\n")
            return _chain(head[end:], chunks), lines
        chunk = next(chunks, b"")
        if not chunk:
            return iter(()), head.count(b"\n")
        head += chunk


def _head_end(head: bytes) -> int | None:
    """Where the body starts: after the first empty line, its line end CRLF or LF."""
    position = 0
    while (newline := head.find(b"\n", position)) >= 0:
        if newline - position <= 1 and head[position:newline] in (b"", b"\r"):
            return newline + 1
        position = newline + 1
    return None


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


def decode_file(
    path: str, decoder: Decoder
) -> tuple[list[Any], list[Diagnostic]]:
    """Every event and diagnostic of a capture, lines counted from the top of the file."""
    with _open(path) as stream:
        body, offset = _skip_http_head(_chunks(stream))
        events: list[Any] = []
        for chunk in body:
            events.extend(decoder.feed(chunk))
        events.extend(decoder.close())
    diagnostics = [
        Diagnostic(d.rule, d.line + offset if d.line else d.line, d.message, d.severity)
        for d in decoder.diagnostics
    ]
    return events, sorted(diagnostics, key=lambda d: d.line)


def _print(path: str, diagnostics: Sequence[Diagnostic], stream: IO[str]) -> None:
    for d in diagnostics:
        marker = "warning: " if d.severity is Severity.WARNING else ""
        print(f"{path}:{d.line}: {d.rule} {marker}{d.message}", file=stream)


def _conforming(diagnostics: Sequence[Diagnostic]) -> bool:
    return not any(d.severity is Severity.ERROR for d in diagnostics)


def _check(args: argparse.Namespace) -> int:
    decoder = Decoder(
        typed=False,
        **answered_request(request=args.request, tools=args.tools),
        max_line_bytes=args.max_line_bytes,
        max_event_bytes=args.max_event_bytes,
    )
    events, diagnostics = decode_file(args.path, decoder)
    conforming = _conforming(diagnostics)
    if args.json:
        print(json.dumps({
            "conforming": conforming,
            "events": len(events),
            "diagnostics": [d.as_dict() for d in diagnostics],
        }, ensure_ascii=False))
    else:
        _print(args.path, diagnostics, sys.stdout)
        verdict = "conforms" if conforming else "does not conform"
        print(f"{args.path}: {verdict} ({len(events)} events, {len(diagnostics)} diagnostics)",
              file=sys.stderr)
    return 0 if conforming else 1


def _check_request(args: argparse.Namespace) -> int:
    with _open(args.path) as stream:
        raw = stream.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.path}: not UTF-8: {exc}") from exc
    diagnostics = check_request_text(text)
    _print(args.path, diagnostics, sys.stdout)
    return 0 if _conforming(diagnostics) else 1


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
        if not _conforming(diagnostics):
            return 1
    sys.stdout.write(output)
    return 0


def _decode(args: argparse.Namespace) -> int:
    decoder = Decoder(typed=False, max_line_bytes=args.max_line_bytes,
                      max_event_bytes=args.max_event_bytes)
    events, diagnostics = decode_file(args.path, decoder)
    for event in events:
        print(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
    _print(args.path, diagnostics, sys.stderr)
    return 0 if _conforming(diagnostics) else 1


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="llm-stream", description="Check and decode LLM-Stream.")
    commands = root.add_subparsers(dest="command", required=True)

    def limits(command: argparse.ArgumentParser) -> None:
        command.add_argument("--max-line-bytes", type=int, default=1 << 20, metavar="N")
        command.add_argument("--max-event-bytes", type=int, default=8 << 20, metavar="N")

    check = commands.add_parser("check", help="check a captured response body")
    check.add_argument("--json", action="store_true", help="one JSON report instead of lines")
    answers = check.add_mutually_exclusive_group()
    answers.add_argument("--request", metavar="FILE",
                         help="the request the stream answers: its tools are the declared ones "
                              "and its metadata what the stream should echo")
    answers.add_argument("--tools", metavar="FILE",
                         help="the request (or a JSON array of tools) whose tools were declared")
    limits(check)
    check.add_argument("path", metavar="PATH|-")
    check.set_defaults(handler=_check)

    request = commands.add_parser("check-request", help="check an llm-request+json body")
    request.add_argument("path", metavar="PATH|-")
    request.set_defaults(handler=_check_request)

    translate_request = commands.add_parser(
        "translate-request", help="translate a request body from or to a vendor's format")
    direction = translate_request.add_mutually_exclusive_group(required=True)
    direction.add_argument("--from", dest="source", choices=FROM_FORMATS, metavar="FORMAT",
                           help=f"a vendor's body into ours ({', '.join(FROM_FORMATS)})")
    direction.add_argument("--to", dest="target", choices=FORMATS, metavar="FORMAT",
                           help=f"ours into a vendor's body ({', '.join(FORMATS)})")
    translate_request.add_argument("path", metavar="PATH|-")
    translate_request.set_defaults(handler=_translate_request)

    decode = commands.add_parser("decode", help="print the events as JSON Lines")
    limits(decode)
    decode.add_argument("path", metavar="PATH|-")
    decode.set_defaults(handler=_decode)

    from .translate.command import add_parser as add_translate

    add_translate(commands)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        return int(args.handler(args))
    except UsageError as exc:
        print(f"llm-stream: {exc}", file=sys.stderr)
        return 2
