"""The examples of the LLM-Stream draft (spec/examples/): printed ones byte for byte, and the
conforming versions beside them.

The draft itself is read from $LLM_STREAM_DRAFT, or /work/shared/reference/llm-stream-draft.md;
the checks that need it are skipped where it is absent. Everything else runs on the repository
alone.
"""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "spec" / "examples"
MANIFEST = EXAMPLES / "examples.yaml"
DRAFT = Path(os.environ.get("LLM_STREAM_DRAFT", "/work/shared/reference/llm-stream-draft.md"))
HEADER = (
    "# Every example of the LLM-Stream draft, exactly as printed, "
    "and the conforming versions beside them.\n"
)

KINDS = {
    "request",
    "message",
    "fragment",
    "events",
    "stream",
    "http-response",
    "header",
    "schema",
    "flow",
    "template",
    "vendor-stream",
}
SECTIONS = {
    "request-media-type",
    "request-envelope",
    "messages",
    "content-field",
    "tools",
    "gen-parameters",
    "metadata-field",
    "extensions-field",
    "tool-flow",
    "response-media-type",
    "sse-framing",
    "event-envelope",
    "sequence-numbers",
    "event-types",
    "stream-start",
    "content-delta",
    "content-stop",
    "tool-call",
    "usage",
    "error",
    "stream-end",
    "lifecycle",
    "complete-example",
    "framing-tradeoff",
    "gateway-translation",
    "content-negotiation",
    "dual-format",
    "prompt-confidentiality",
    "tool-call-abuse",
    "extension-safety",
    "sequence-exhaustion",
    "media-type-registration",
    "event-type-registry",
    "appendix-envelope-schema",
}
KEYS = [
    "file", "title", "section", "kind", "printed", "abbreviated", "complete", "expect", "options",
    "translation",
]
# The two fenced blocks of the draft that are pictures, not protocol: recognised by a line of each.
DIAGRAM_MARKERS = ("HTTP layer:  Delivers raw bytes", "stream.start (seq=0)\n")

# REQUIRED fields of each event, from the draft's field tables (5.3).
EVENT_REQUIRED = {
    "stream.start": {"v", "seq", "type", "model", "created"},
    "content.delta": {"v", "seq", "type", "index", "role", "delta"},
    "content.stop": {"v", "seq", "type", "index", "stop_reason"},
    "tool.call": {"v", "seq", "type", "index", "id", "name", "arguments"},
    "usage": {"v", "seq", "type", "input_tokens", "output_tokens"},
    "error": {"v", "seq", "type", "code", "message"},
    "stream.end": {"v", "seq", "type"},
}
STOP_REASONS = {"end_turn", "max_tokens", "tool_use", "content_filter"}
PART_REQUIRED = {
    "text": {"text"},
    "image": {"media_type", "data"},
    "document": {"media_type", "data"},
    "audio": {"media_type", "data"},
}


# ---------------------------------------------------------------------------------------- helpers


def load_manifest() -> list[dict[str, Any]]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return list(data["examples"])


ENTRIES = load_manifest()
COMPLETE = [e for e in ENTRIES if e["file"].startswith("complete/")]
BY_FILE = {e["file"]: e for e in ENTRIES}


def entries(**where: Any) -> list[dict[str, Any]]:
    return [e for e in ENTRIES if all(e.get(k) == v for k, v in where.items())]


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [e["file"] for e in items]


def read(name: str) -> str:
    return (EXAMPLES / name).read_bytes().decode("utf-8")


def draft_text() -> str:
    if not DRAFT.is_file():
        pytest.skip(f"the draft is not here: {DRAFT}")
    return DRAFT.read_text(encoding="utf-8")


def unwrap(text: str) -> str:
    """Undo the draft's print wrapping: a line starting with two spaces continues the one before."""
    out: list[str] = []
    for line in text.split("\n"):
        if line.startswith("  ") and out:
            out[-1] += line.lstrip(" ")
        else:
            out.append(line)
    return "\n".join(out)


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Strict parse of the shape every conforming file here has: event line, data line, blank."""
    assert text.endswith("\n\n"), "the last event must be ended by a blank line"
    assert "\r" not in text
    events = []
    for block in text[:-2].split("\n\n"):
        lines = block.split("\n")
        assert len(lines) == 2, f"an event must be one event: line and one data: line: {block!r}"
        assert lines[0].startswith("event: "), lines[0]
        assert lines[1].startswith("data: "), lines[1]
        name, data = lines[0][len("event: ") :], lines[1][len("data: ") :]
        obj = json.loads(data)
        assert isinstance(obj, dict)
        assert compact(obj) == data, f"data: is not compact one-line JSON: {data}"
        events.append((name, obj))
    return events


def matches(printed: Any, complete: Any) -> bool:
    """The printed value is carried over: equal, except placeholders "<...>" match any string."""
    if isinstance(printed, str) and printed.startswith("<") and printed.endswith(">"):
        return isinstance(complete, str)
    if isinstance(printed, dict):
        return isinstance(complete, dict) and all(
            k in complete and matches(v, complete[k]) for k, v in printed.items()
        )
    if isinstance(printed, list):
        return (
            isinstance(complete, list)
            and len(printed) == len(complete)
            and all(matches(a, b) for a, b in zip(printed, complete, strict=True))
        )
    return type(printed) is type(complete) and printed == complete


def check_message(msg: Any) -> None:
    assert isinstance(msg, dict)
    assert msg.get("role") in {"system", "user", "assistant", "tool"}, msg
    assert "content" in msg, msg
    content = msg["content"]
    if content is None:
        # Not allowed by the draft's message table (content: string or array, REQUIRED), but
        # printed by the draft's own tool flow (Request 2) for an assistant turn with tool_calls.
        # Accepted here in that one shape only, until the project decides.
        assert msg["role"] == "assistant" and msg.get("tool_calls"), msg
    elif isinstance(content, list):
        assert content, "an empty content array"
        for part in content:
            assert isinstance(part, dict)
            assert part.get("type") in PART_REQUIRED, part
            assert PART_REQUIRED[part["type"]] <= part.keys(), part
            for key in PART_REQUIRED[part["type"]]:
                assert isinstance(part[key], str), part
            if "data" in part:
                base64.b64decode(part["data"], validate=True)
    else:
        assert isinstance(content, str), msg
    if "name" in msg:
        assert isinstance(msg["name"], str)
    if msg["role"] == "tool":
        assert isinstance(msg.get("tool_call_id"), str), msg
    for call in msg.get("tool_calls", []):
        assert {"id", "name", "arguments"} <= call.keys(), call
        json.loads(call["arguments"])


def check_request(req: Any) -> None:
    assert isinstance(req, dict)
    assert req.get("version") == "1.0"
    assert req.get("stream") is True
    assert isinstance(req.get("model"), str) and req["model"]
    assert isinstance(req.get("messages"), list) and req["messages"]
    for msg in req["messages"]:
        check_message(msg)
    for tool in req.get("tools", []):
        assert {"name", "description", "parameters"} <= tool.keys(), tool
        assert isinstance(tool["parameters"], dict)
    for group in ("parameters", "metadata", "extensions"):
        if group in req:
            assert isinstance(req[group], dict)
    for key in req.get("extensions", {}):
        assert re.fullmatch(r"vendor:[^:]+", key), key


def envelope_schema() -> dict[str, Any]:
    return json.loads(read("draft/event-envelope-schema.json"))


def check_event(name: str, event: dict[str, Any]) -> None:
    assert name == event.get("type"), f"event: {name} but type {event.get('type')}"
    assert event.get("v") == "1.0"
    assert isinstance(event.get("seq"), int) and event["seq"] >= 0
    assert event["type"] in EVENT_REQUIRED, event
    missing = EVENT_REQUIRED[event["type"]] - event.keys()
    assert not missing, f"{event['type']} without {sorted(missing)}"
    if event["type"] == "content.delta":
        assert event["role"] == "assistant"
        assert isinstance(event["delta"].get("text"), str)
    if event["type"] == "content.stop":
        assert event["stop_reason"] in STOP_REASONS
    if event["type"] == "tool.call":
        json.loads(event["arguments"])
    if "index" in event:
        assert isinstance(event["index"], int) and event["index"] >= 0
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(envelope_schema()).validate(event)


def check_lifecycle(events: list[dict[str, Any]]) -> None:
    types = [e["type"] for e in events]
    assert types[0] == "stream.start" and types.count("stream.start") == 1
    assert types[-1] == "stream.end" and types.count("stream.end") == 1
    assert "usage" in types
    assert types.count("error") <= 1
    open_blocks: set[int] = set()
    closed: set[int] = set()
    for event in events:
        if event["type"] in {"content.delta", "tool.call"}:
            assert event["index"] not in closed, f"block {event['index']} used after content.stop"
            open_blocks.add(event["index"])
        elif event["type"] == "content.stop":
            assert event["index"] in open_blocks, f"content.stop of unopened block {event['index']}"
            open_blocks.discard(event["index"])
            closed.add(event["index"])
    assert not open_blocks, f"blocks never closed by content.stop: {sorted(open_blocks)}"


# --------------------------------------------------------------------------------- the manifest


def test_manifest_header_and_shape() -> None:
    assert MANIFEST.read_text(encoding="utf-8").startswith(HEADER)
    assert len(BY_FILE) == len(ENTRIES), "a file listed twice"
    for e in ENTRIES:
        assert list(e) == [k for k in KEYS if k in e], f"{e['file']}: keys out of order or unknown"
        assert {"file", "title", "section", "kind", "printed"} <= e.keys(), e
        assert e["kind"] in KINDS, e
        assert e["section"] in SECTIONS, e
        assert e["printed"] is e["file"].startswith("draft/"), e
        assert e["file"].startswith(("draft/", "complete/", "invalid/", "valid-extra/",
                                     "vendor/")), e
        assert ("abbreviated" in e) == ("complete" in e), e
        if e["printed"]:
            if "abbreviated" in e:
                assert "expect" not in e, e
                assert e["complete"], e
                for name in e["complete"]:
                    assert name in BY_FILE and not BY_FILE[name]["printed"], name
            elif e["kind"] != "template":  # no instance: neither valid nor abbreviated
                assert e.get("expect") == "valid", e
        elif e["file"].startswith("complete/"):
            assert "abbreviated" not in e and e.get("expect") == "valid", e


def test_names_and_extensions() -> None:
    ext = {
        "request": ".json",
        "message": ".json",
        "fragment": ".json",
        "schema": ".json",
        "events": ".sse",
        "stream": ".sse",
        "http-response": ".http",
        "header": ".txt",
        "flow": ".txt",
        "template": ".txt",
        "vendor-stream": ".sse",
    }
    for e in ENTRIES:
        name = Path(e["file"]).name
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*\.(json|sse|http|txt)", name), name
        assert name.endswith(ext[e["kind"]]), e


def test_every_manifest_file_exists() -> None:
    missing = [name for name in BY_FILE if not (EXAMPLES / name).is_file()]
    assert not missing


def test_every_example_file_is_in_the_manifest() -> None:
    on_disk = {
        p.relative_to(EXAMPLES).as_posix()
        for sub in ("draft", "complete")
        for p in (EXAMPLES / sub).rglob("*")
        if p.is_file()
    }
    assert on_disk - BY_FILE.keys() == set()


def test_every_complete_file_is_claimed_by_a_printed_one() -> None:
    claimed = {name for e in entries(printed=True) for name in e.get("complete", [])}
    assert {e["file"] for e in COMPLETE} == claimed


# ---------------------------------------------------------------------- printed, byte for byte


@pytest.mark.parametrize("entry", entries(printed=True), ids=ids(entries(printed=True)))
def test_printed_is_a_whole_fenced_block_of_the_draft(entry: dict[str, Any]) -> None:
    text = draft_text()
    content = read(entry["file"])
    assert content in text
    assert content.endswith("\n") and "\r" not in content
    fenced = re.compile(r"(?m)^~~~[a-z]*\n" + re.escape(content) + r"~~~$")
    assert fenced.search(text), "not the whole content of one fenced block"


def test_every_fenced_block_of_the_draft_is_here() -> None:
    text = draft_text()
    blocks = re.findall(r"(?ms)^~~~[a-z]*\n(.*?)^~~~$", text)
    printed = {read(e["file"]) for e in entries(printed=True)}
    missing = [b for b in blocks if b not in printed and not any(m in b for m in DIAGRAM_MARKERS)]
    assert not missing
    assert len(blocks) == len(printed) + len(DIAGRAM_MARKERS)


# ---------------------------------------------------------------- printed against complete


def http_body(text: str) -> str:
    head, body = text.split("\n\n", 1)
    assert re.match(r"HTTP/\S+ 200 OK\n", head)
    assert "Content-Type: text/event-stream" in head.split("\n")
    return body


UNWRAPPED = [
    e
    for e in entries(printed=True)
    if e["file"].endswith((".sse", ".http")) and len(e.get("complete", [])) == 1
]


@pytest.mark.parametrize("entry", UNWRAPPED, ids=ids(UNWRAPPED))
def test_printed_sse_unwrapped_is_the_complete_one(entry: dict[str, Any]) -> None:
    printed = read(entry["file"])
    if entry["kind"] == "http-response":
        printed = http_body(printed)
    (complete,) = entry["complete"]
    # The draft's blocks end after the last data: line; on the wire a blank line ends the event.
    assert unwrap(printed).rstrip("\n") + "\n\n" == read(complete)


JSON_PRINTED = [
    e for e in entries(printed=True) if e["kind"] in {"fragment", "message"} and "complete" in e
]


@pytest.mark.parametrize("entry", JSON_PRINTED, ids=ids(JSON_PRINTED))
def test_printed_json_values_are_carried_over(entry: dict[str, Any]) -> None:
    text = read(entry["file"])
    printed = json.loads("{" + text + "}") if entry["kind"] == "fragment" else json.loads(text)
    for name in entry["complete"]:
        complete = json.loads(read(name))
        if entry["kind"] == "fragment" or BY_FILE[name]["kind"] == "message":
            assert matches(printed, complete), name
        else:  # a printed message inside a whole request
            assert any(matches(printed, m) for m in complete["messages"]), name


def test_printed_message_without_placeholder_is_valid() -> None:
    for e in entries(printed=True, kind="message", expect="valid"):
        check_message(json.loads(read(e["file"])))


def test_tool_flow_printed_values_are_carried_over() -> None:
    printed = unwrap(read("draft/tool-flow.txt"))
    responses = {
        1: [ev for _, ev in parse_sse(read("complete/tool-flow-response-1.sse"))],
        2: [ev for _, ev in parse_sse(read("complete/tool-flow-response-2.sse"))],
    }
    part = 0
    shown = 0
    for line in printed.split("\n"):
        if m := re.fullmatch(r"Response (\d):", line):
            part = int(m.group(1))
        elif line.startswith("data: "):
            event = json.loads(line[len("data: ") :])
            assert any(matches(event, ev) for ev in responses[part]), event
            shown += 1
    assert shown == 3
    req1 = json.loads(read("complete/tool-flow-request-1.json"))
    req2 = json.loads(read("complete/tool-flow-request-2.json"))
    assert req2["messages"][: len(req1["messages"])] == req1["messages"]
    assert req1["tools"] == req2["tools"]
    call = next(ev for ev in responses[1] if ev["type"] == "tool.call")
    assistant, tool = req2["messages"][-2:]
    assert assistant["tool_calls"] == [
        {"id": call["id"], "name": call["name"], "arguments": call["arguments"]}
    ]
    assert tool["tool_call_id"] == call["id"]
    assert {t["name"] for t in req1["tools"]} >= {call["name"]}


# -------------------------------------------------------------------------- complete, conforming


COMPLETE_JSON = [e for e in COMPLETE if e["file"].endswith(".json")]
COMPLETE_SSE = [e for e in COMPLETE if e["file"].endswith(".sse")]


@pytest.mark.parametrize("entry", COMPLETE_JSON, ids=ids(COMPLETE_JSON))
def test_complete_json_parses_and_conforms(entry: dict[str, Any]) -> None:
    text = read(entry["file"])
    obj = json.loads(text)
    assert text == json.dumps(obj, indent=2, ensure_ascii=False) + "\n", "not 2-space pretty JSON"
    if entry["kind"] == "request":
        check_request(obj)
    elif entry["kind"] == "message":
        check_message(obj)
    else:
        pytest.fail(f"no check for kind {entry['kind']}")
    assert "<" not in text and "..." not in text, "a placeholder is left"


@pytest.mark.parametrize("entry", COMPLETE_SSE, ids=ids(COMPLETE_SSE))
def test_complete_sse_conforms(entry: dict[str, Any]) -> None:
    events = parse_sse(read(entry["file"]))
    for name, event in events:
        check_event(name, event)
    seqs = [event["seq"] for _, event in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    if entry["kind"] == "stream":
        assert seqs[0] == 0
        check_lifecycle([event for _, event in events])
    else:
        assert entry["kind"] == "events"


def test_complete_images_are_real_pngs() -> None:
    found = 0
    for e in COMPLETE_JSON:
        for msg in (
            [json.loads(read(e["file"]))]
            if e["kind"] == "message"
            else json.loads(read(e["file"]))["messages"]
        ):
            parts = msg["content"] if isinstance(msg["content"], list) else []
            for part in parts:
                if part["type"] == "image" and part["media_type"] == "image/png":
                    check_png(base64.b64decode(part["data"], validate=True))
                    found += 1
    assert found


def check_png(data: bytes) -> None:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    pos, kinds, idat = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        kinds.append(kind)
        if kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    zlib.decompress(idat)


# ---------------------------------------------------------------------- the other printed kinds


def test_schema_is_valid_2020_12() -> None:
    schema = envelope_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["properties"]["type"]["enum"]) == set(EVENT_REQUIRED)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)


def test_accept_header() -> None:
    assert read("draft/dual-format-accept-header.txt") == (
        'Accept: text/event-stream; profile="llm-stream-1.0"\n'
    )


def test_framing_template_matches_complete_events() -> None:
    template = read("draft/sse-framing-template.txt").replace("\\n\n", "\n")
    shape = (
        re.escape(template)
        .replace(re.escape("<event-type>"), r"(\S+)")
        .replace(re.escape("<JSON event envelope>"), r"(\{.*\})")
    )
    for e in COMPLETE_SSE:
        text = read(e["file"])
        assert re.fullmatch(f"(?:{shape})+", text), e["file"]
