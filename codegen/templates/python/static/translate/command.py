"""`llm-stream translate`: a vendor stream into LLM-Stream (`--from FORMAT`), or LLM-Stream into
OpenAI Chat Completions chunks (`--to openai-chat`), chunk by chunk as the input arrives.

Exit codes: 0; 1 when the input was malformed or cut, the diagnostics on stderr (the output
still ends as a stream must: error and stream.end, or an error chunk and [DONE]); 2 for usage or
I/O errors. A whole HTTP response (curl -i) is read from its body on.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from ..cli import UsageError, _chunks, _open, _print, _skip_http_head
from ..decoder import Decoder
from ..diagnostics import Diagnostic, Severity
from .openai_chat_writer import OpenAIChatWriter
from .tables import FORMATS

WRITERS = ("openai-chat",)


def configure(command: argparse.ArgumentParser) -> None:
    """The arguments of `translate` and its handler."""
    direction = command.add_mutually_exclusive_group(required=True)
    direction.add_argument("--from", dest="source", choices=FORMATS, metavar="FORMAT",
                           help=f"the vendor format of the input: {', '.join(FORMATS)}")
    direction.add_argument("--to", dest="target", choices=WRITERS, metavar="FORMAT",
                           help="write the LLM-Stream input as this format: openai-chat")
    command.add_argument("--model", help="the model to name where the input does not")
    command.add_argument("--created", type=int, metavar="SECONDS",
                         help="the Unix time to give where the input does not")
    command.add_argument("--request-id", help="the request_id stream.start and stream.end echo")
    command.add_argument("--choice", type=int, metavar="N",
                         help="translate choice N of a stream with several (openai-chat, gemini)")
    command.add_argument("path", metavar="PATH|-")
    command.set_defaults(handler=run)


def _body(path: str) -> tuple[Iterator[bytes], int]:
    return _skip_http_head(_chunks(_open(path), path), path)


def _write(data: bytes) -> None:
    if data:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def run(args: argparse.Namespace) -> int:
    """Translate, printing each chunk's output as it is made; then report and exit."""
    from . import stream_translator

    if args.source is not None:
        if args.choice is not None and args.source not in ("openai-chat", "gemini"):
            raise UsageError(f"--choice is for openai-chat and gemini, not {args.source}")
        translator = stream_translator(args.source, model=args.model, created=args.created,
                                       request_id=args.request_id, choice=args.choice)
        body, offset = _body(args.path)
        for chunk in body:
            _write(translator.feed_encoded(chunk))
        _write(translator.close_encoded())
        diagnostics = translator.diagnostics
    else:
        writer = OpenAIChatWriter(model=args.model, created=args.created)
        decoder = Decoder(typed=False)
        body, offset = _body(args.path)
        for chunk in body:
            _write(writer.write(decoder.feed(chunk)))
        _write(writer.write(decoder.close()) + writer.close())
        diagnostics = decoder.diagnostics
    shifted = [Diagnostic(d.rule, d.line + offset if d.line else 0, d.message, d.severity)
               for d in diagnostics]
    _print(args.path, shifted, sys.stderr)
    return 1 if any(d.severity is Severity.ERROR for d in shifted) else 0
