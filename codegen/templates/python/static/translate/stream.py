"""What every stream translator shares: vendor SSE in, conforming LLM-Stream events out.

A vendor module only reads its own events and calls the few verbs here: start, text, reasoning,
signature, a tool call's start, arguments and completion, finish (the turn ended, with the
vendor's stop reason), end (the vendor's terminal event) and fail. This module keeps the
LLM-Stream side right whatever the vendor does: seq from 0, one content block index per block
in the order blocks open, each block closed by content.stop with the turn's stop reason, a tool
call whole in tool.call after its fragments, usage from the last totals the vendor reported and
only with both required counts, and after an error or a cut only stream.end. Memory stays
bounded by the open tool calls' arguments; the text is never held.
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic_core import to_json

from ..diagnostics import Diagnostic, Severity
from ..jsontext import loads
from ..plainjson import parse as parse_json
from ..registry import SPEC_VERSION
from ..sse import SSEDecoder
from .tables import FIELD_MAPS, VALUE_MAPS

# What the translators report about their input, as the rule of a Diagnostic.
NOT_JSON = "vendor-not-json"
"""An event's data is not the JSON the format requires: the stream ends with an error."""
CUT = "vendor-cut"
"""The vendor stream stopped before its terminal event: it ends with error truncated."""
UNEXPECTED = "vendor-unexpected"
"""An event the format does not allow where it came, or a member of the wrong type; skipped."""
REFUSED = "vendor-refused"
"""Something LLM-Stream cannot carry (a second choice, say): the stream ends with an error."""
VENDOR_ERROR = "vendor-error"
"""The vendor reported an error mid-stream; it is translated, so this is a warning."""

TEXT = "text"
REASONING = "reasoning"
TOOL_CALL = "tool-call"


@dataclass(slots=True)
class _Block:
    """One LLM-Stream content block while it is open."""

    index: int
    kind: str
    key: Hashable = None
    id: str = ""
    name: str = ""
    fragments: list[str] = field(default_factory=list)
    called: bool = False
    signed: bool = False


def encode_event(event: Mapping[str, Any]) -> bytes:
    """One event as it goes on the wire: the same bytes as `llm_stream.encode_event` gives,
    made by pydantic-core's serializer, several times faster than the json module's."""
    kind: str = event["type"]
    return b"event: " + kind.encode() + b"\ndata: " + to_json(event) + b"\n\n"


def encode_events(events: Iterable[Mapping[str, Any]]) -> bytes:
    """The events as they go on the wire, each as `encode_event` writes it."""
    return b"".join([encode_event(event) for event in events])


TEXT_DELTA = (b'event: content.delta\ndata: {"v":' + to_json(SPEC_VERSION)
               + b',"seq":%d,"type":"content.delta","index":%d,"role":"assistant",'
               b'"delta":{"text":%b}}\n\n')
"""A text delta as `encode_event` writes the translator's dict of it, around seq, index and
the text's JSON: the commonest event, framed without building the dict."""


def compact_json(value: Any) -> str:
    """JSON text as LLM-Stream carries arguments: compact, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _is_json(text: str) -> bool:
    try:
        loads(text)
    except ValueError:
        return False
    return True


class StreamTranslator:
    """Vendor SSE bytes in with `feed`, LLM-Stream events (envelope dicts, seq assigned) out;
    `close` ends the stream, with error truncated when the vendor stream was cut. Sans-IO:
    any chunking of the same bytes gives the same events. `feed_encoded` and `close_encoded`
    give the same events as bytes, as `encode_events` writes them, at less cost: what a gateway
    sends on.

    A chunk that is one whole vendor event of the usual shape (an `event:` line where the
    format names its events, one `data:` line of a JSON object, a blank line: what a server that
    flushes every event sends) is taken from its bytes, without the SSE layer's general path
    (`SSEDecoder.whole_event`, `whole_data`)."""

    format: ClassVar[str]
    title: ClassVar[str]
    event_lines: ClassVar[bool] = True
    """Whether the format names its events in `event:` lines, which the fast path expects."""
    done: ClassVar[str | None] = None
    """The data of the format's terminal event where that is not JSON (`[DONE]`)."""

    def __init__(self, *, model: str | None = None, request_id: str | None = None,
                 created: int | None = None) -> None:
        self._sse = SSEDecoder()
        self._findings: list[Diagnostic] = []
        self._model = model
        self._request_id = request_id
        self._created = created
        self._out: list[Any] = []
        self._encode = False  # the events of this feed go out as bytes (feed_encoded)
        self._seq = 0
        self._line = 0
        self._started = False
        self._finished = False
        self._ended = False
        self._blocks: dict[Hashable, _Block] = {}
        self._open: list[_Block] = []
        self._next_index = 0
        self._tool_calls = 0
        self._vendor_usage: dict[str, Any] = {}
        self._stops = VALUE_MAPS[self.format]["stop-reasons"]
        self._errors = VALUE_MAPS[self.format]["error-codes"]
        self._usage = FIELD_MAPS[self.format]["usage"]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What was wrong with the vendor stream, SSE framing included, by line."""
        return sorted([*self._sse.diagnostics, *self._findings], key=lambda d: d.line)

    @property
    def finished(self) -> bool:
        """Whether the turn finished: its blocks are closed."""
        return self._finished

    @property
    def ended(self) -> bool:
        """Whether stream.end has been produced; later input is ignored."""
        return self._ended

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Take the next chunk of the vendor body; return the events it completes."""
        self._encode = False
        return self._feed(data)

    def close(self) -> list[dict[str, Any]]:
        """End the vendor body; return the last events, stream.end always among them."""
        self._encode = False
        return self._close()

    def feed_encoded(self, data: bytes) -> bytes:
        """As `feed`, the events encoded: `encode_events(feed(data))`."""
        self._encode = True
        return b"".join(self._feed(data))

    def close_encoded(self) -> bytes:
        """As `close`, the events encoded: `encode_events(close())`."""
        self._encode = True
        return b"".join(self._close())

    def _feed(self, data: bytes) -> list[Any]:
        out = self._out = []
        if self._ended:
            self._sse.feed_fields(data)
            return out
        sse = self._sse
        if self.event_lines:
            whole = sse.whole_event(data)
            if whole is not None and whole[0][:7] == b"event: ":
                try:
                    kind = whole[0][7:].decode() or "message"
                    parsed = parse_json(whole[1])
                except ValueError:
                    pass  # the general path reads it, and reports what is wrong with it
                else:
                    self._line = sse.took_whole_event()
                    self.on_json(kind, parsed)
                    return out
        else:
            payload = sse.whole_data(data)
            if payload is not None and payload[:1] == b"{":
                try:
                    parsed = parse_json(payload)
                except ValueError:
                    pass
                else:
                    self._line = sse.took_whole_data()
                    self.on_json("message", parsed)
                    return out
        for kind, text, _, _, line in self._sse.feed_fields(data):
            if self._ended:
                break
            self._line = line
            self.on_event(kind, text)  # type: ignore[arg-type]  # str: no bytes_data
        return out

    def _close(self) -> list[Any]:
        out = self._out = []
        self._sse.close()
        if not self._ended:
            self.at_body_end()
        return out

    # -- for the vendor modules ------------------------------------------------------------------

    def on_event(self, kind: str, data: str) -> None:
        """One SSE event of the vendor stream: `kind` is its event: field, `data` its data.
        A format whose events need more than their JSON (a `ping`) reads it here."""
        if data == self.done:
            self.end()
            return
        try:
            parsed = parse_json(data)
        except ValueError:
            parsed = self.parse(data)
            if parsed is None:
                return
        self.on_json(kind, parsed)

    def on_json(self, kind: str, event: Any) -> None:
        """One vendor event whose data is JSON, parsed."""
        raise NotImplementedError

    def at_body_end(self) -> None:
        """The body ended before the terminal event: a cut. A format without a terminal event
        (Gemini) ends here when its turn finished."""
        self.cut()

    def report(self, rule: str, message: str, severity: Severity = Severity.ERROR) -> None:
        self._findings.append(Diagnostic(rule, self._line, message, severity))

    def parse(self, data: str) -> Any:
        """The JSON of an event's data that `from_json` refused, read as `loads` reads it;
        None (the stream failed) when it is not JSON."""
        try:
            return loads(data)
        except ValueError as exc:
            self.report(NOT_JSON, f"the {self.title} event's data is not JSON: {exc}")
            self.fail("internal_error", f"the upstream {self.title} stream sent an event that "
                                        "is not JSON")
            return None

    def start(self, model: object = None, created: object = None) -> None:
        """stream.start, once: the vendor's model and time where it says them, else the
        translator's own."""
        if self._started:
            return
        self._started = True
        fields: dict[str, Any] = {}
        if self._request_id is not None:
            fields["request_id"] = self._request_id
        fields["model"] = model if isinstance(model, str) and model else self._model or "unknown"
        if isinstance(created, int) and not isinstance(created, bool) and created >= 0:
            fields["created"] = created
        else:
            fields["created"] = self._created if self._created is not None else int(time.time())
        self._emit("stream.start", fields)

    def text(self, key: Hashable, text: object) -> None:
        """Answer text for the text block of `key`; empty text makes no event. The commonest
        event of all, so the usual case (an open text block) is checked inline."""
        if not isinstance(text, str) or not text:
            return
        block = self._blocks.get(key)
        if block is None or block.kind != TEXT or self._finished or not self._started:
            if not self._accepting():
                return
            block = self._block(key, TEXT)
        elif self._ended:
            return
        if self._encode:
            self._out.append(TEXT_DELTA % (self._seq, block.index, to_json(text)))
        else:
            self._out.append({"v": SPEC_VERSION, "seq": self._seq, "type": "content.delta",
                              "index": block.index, "role": "assistant",
                              "delta": {"text": text}})
        self._seq += 1

    def reasoning(self, key: Hashable, text: object) -> None:
        """Reasoning text for the reasoning block of `key`."""
        if not isinstance(text, str) or not text or not self._accepting():
            return
        block = self._block(key, REASONING)
        if block.signed:
            self.report(UNEXPECTED, "reasoning text after the reasoning block's signature; "
                                    "it starts a block of its own")
            block = self._block((key, "after signature", self._seq), REASONING)
        self._emit("reasoning.delta", {"index": block.index, "delta": {"text": text}})

    def signature(self, key: Hashable, signature: object) -> None:
        """The opaque signature of the reasoning block of `key` (opened if need be: a block with
        a signature and no text is reasoning the vendor keeps encrypted)."""
        if not isinstance(signature, str) or not signature or not self._accepting():
            return
        block = self._block(key, REASONING)
        if block.signed:
            block = self._block((key, "signature", self._seq), REASONING)
        block.signed = True
        self._emit("reasoning.signature", {"index": block.index, "signature": signature})

    def tool_start(self, key: Hashable, call_id: object, name: object) -> None:
        """A tool call begins: its block opens, and its first fragment will carry id and name."""
        if not self._accepting():
            return
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            self.report(UNEXPECTED, "a tool call without a string id and name is skipped")
            return
        if key in self._blocks:
            self.report(UNEXPECTED, f"tool call {call_id!r} starts twice; the second is skipped")
            return
        self._block(key, TOOL_CALL, call_id, name)
        self._tool_calls += 1

    def tool_arguments(self, key: Hashable, fragment: object) -> None:
        """A fragment of the arguments of the tool call of `key`: a tool.call.delta."""
        if not isinstance(fragment, str) or not fragment or not self._accepting():
            return
        block = self._blocks.get(key)
        if block is None or block.kind != TOOL_CALL or block.called:
            self.report(UNEXPECTED, "tool call arguments for no open tool call are skipped")
            return
        fields: dict[str, Any] = {"index": block.index}
        if not block.fragments:
            fields.update(id=block.id, name=block.name)
        fields["arguments"] = fragment
        block.fragments.append(fragment)
        self._emit("tool.call.delta", fields)

    def tool_call(self, key: Hashable, arguments: object = None) -> None:
        """The tool call of `key` is complete: tool.call with the whole arguments, those of its
        fragments, else `arguments` (a vendor that sends them only at the end), else "{}"."""
        block = self._blocks.get(key)
        if block is not None and block.kind == TOOL_CALL and not block.called:
            self._complete(block, arguments)

    def _complete(self, block: _Block, arguments: object = None) -> None:
        if not self._accepting():
            return
        whole = "".join(block.fragments)
        if not block.fragments:
            whole = arguments if isinstance(arguments, str) and arguments else "{}"
        elif isinstance(arguments, str) and arguments and arguments != whole:
            self.report(UNEXPECTED, f"tool call {block.id!r}: the final arguments differ from "
                                    "its fragments joined; the fragments are kept")
        if not _is_json(whole):
            self.report(UNEXPECTED, f"tool call {block.id!r}: the arguments are not JSON")
            self.fail("internal_error", f"the upstream tool call {block.id!r} has arguments that "
                                        "are not JSON")
            return
        block.called = True
        self._emit("tool.call", {"index": block.index, "id": block.id, "name": block.name,
                                 "arguments": whole})

    def usage(self, counts: object) -> None:
        """The vendor's usage object so far: its counts replace those reported before."""
        if isinstance(counts, dict):
            self._vendor_usage.update(counts)

    def finish(self, vendor_reason: object) -> None:
        """The turn ended for `vendor_reason`: open tool calls complete, then every block is
        closed with the turn's stop reason, the vendor's own kept beside it (D-VENDOR-VALUES);
        a turn with a complete tool call ends with tool_use whatever the vendor says, and a call
        cut off at max_tokens (fragments without tool.call) closes with max_tokens."""
        if self._finished or not self._accepting():
            return
        reason = vendor_reason if isinstance(vendor_reason, str) and vendor_reason else None
        ours = (self._stops.read(reason) if reason else None) or "end_turn"
        for block in self._open:
            if block.kind == TOOL_CALL and not block.called:
                whole = "".join(block.fragments) or "{}"
                if ours == "max_tokens" and not _is_json(whole):
                    continue  # cut off mid-arguments: fragments only, no tool.call
                self._complete(block)
                if self._ended:
                    return
        if any(block.called for block in self._open):
            ours = "tool_use"  # D-TOOL-USE-STOP
        self._finished = True
        stops = self._open or [_Block(0, TEXT)]
        for block in stops:
            cut = block.kind == TOOL_CALL and not block.called
            fields: dict[str, Any] = {"index": block.index,
                                      "stop_reason": "max_tokens" if cut else ours}
            if reason is not None:
                fields["vendor_stop_reason"] = reason
            self._emit("content.stop", fields)
        self._open = []

    def end(self) -> None:
        """The vendor's terminal event: usage, then stream.end. A terminal event before the turn
        finished closes it without a stop reason of the vendor's."""
        if self._ended:
            return
        self.start()
        if not self._finished:
            self.finish(None)
            if self._ended:
                return
        self._stream_end()

    def fail(self, code: str, message: str, vendor_code: str | None = None) -> None:
        """An error with a registered code, then usage so far and stream.end; nothing after."""
        if self._ended:
            return
        self.start()
        fields: dict[str, Any] = {"code": code, "message": message}
        if vendor_code is not None:
            fields["vendor_code"] = vendor_code
        self._emit("error", fields)
        self._stream_end()

    def vendor_error(self, vendor_code: object, message: object) -> None:
        """An error the vendor reported, with its code mapped (D-VENDOR-VALUES)."""
        code = vendor_code if isinstance(vendor_code, str) and vendor_code else None
        ours = (self._errors.read(code) if code else self._errors.otherwise) or "internal_error"
        text = message if isinstance(message, str) and message else f"{self.title} error"
        self.report(VENDOR_ERROR, f"the {self.title} stream reports an error: "
                                  f"{code or 'no code'}: {text}", Severity.WARNING)
        self.fail(ours, text, code)

    def cut(self) -> None:
        """The vendor stream stopped before its terminal event (D-TRUNCATED)."""
        where = f"its last event at line {self._line}" if self._line else "no event"
        self.report(CUT, f"the {self.title} stream ends ({where}) without its terminal event")
        self.fail("truncated", f"the upstream {self.title} stream ended before its terminal "
                               "event; the response is incomplete")

    def refuse(self, message: str) -> None:
        """Input LLM-Stream cannot carry: reported, and the stream ends with an error."""
        self.report(REFUSED, message)
        self.fail("internal_error", message)

    # -- internals -------------------------------------------------------------------------------

    def _accepting(self) -> bool:
        """Content is taken until the turn finished; the stream starts with the first of it."""
        if self._ended:
            return False
        if self._finished:
            self.report(UNEXPECTED, f"{self.title} content after the turn finished is skipped")
            return False
        self.start()
        return True

    def _block(self, key: Hashable, kind: str, call_id: str = "", name: str = "") -> _Block:
        """The open block of `key`, or a new one at the next index when there is none of that
        kind (the old one stays open until the turn finishes)."""
        block = self._blocks.get(key)
        if block is None or block.kind != kind:
            block = _Block(self._next_index, kind, key, call_id, name)
            self._next_index += 1
            self._blocks[key] = block
            self._open.append(block)
        return block

    def _emit(self, kind: str, fields: dict[str, Any]) -> None:
        event = {"v": SPEC_VERSION, "seq": self._seq, "type": kind, **fields}
        self._out.append(encode_event(event) if self._encode else event)
        self._seq += 1

    def _stream_end(self) -> None:
        counts = self._usage.read(self._vendor_usage)
        if "input_tokens" in counts and "output_tokens" in counts:
            self._emit("usage", dict(counts))
        self._emit("stream.end", {} if self._request_id is None
                   else {"request_id": self._request_id})
        self._ended = True
