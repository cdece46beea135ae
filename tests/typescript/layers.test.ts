/**
 * The layers one by one: the SSE layer's WHATWG rules and limits, the encoder, the hash the
 * decoder keeps of tool call fragments, and the types a caller narrows events with.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";

import {
    Decoder, Encoder, encodeEvent, type EventOfType, isRegistered, SSEDecoder, type SSEEvent,
} from "../../generated/typescript/src/index.js";
import { Sha256 } from "../../generated/typescript/src/sha256.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function sse(parts: readonly (string | Uint8Array)[], limits = {}): [SSEEvent[], string[]] {
    const decoder = new SSEDecoder(limits);
    const events = parts.flatMap((part) => decoder.feed(typeof part === "string" ? bytes(part) : part));
    decoder.close();
    return [events, decoder.diagnostics.map((d) => `${d.line} ${d.rule}`)];
}

describe("the SSE layer", () => {
    it("reads fields as WHATWG does", () => {
        const [events] = sse([": comment\nevent:x\ndata\ndata:  two\nid: 7\nretry: 10\nunknown: 1\n\n"]);
        assert.deepEqual(events, [{ type: "x", data: "\n two", id: "7", retry: 10, line: 2 }]);
    });

    it("strips one BOM at the start of the body only, however it is cut", () => {
        const body = "\ufeffdata: a\n\n\ufeffdata: b\n\n";
        for (const parts of [[body], [bytes(body).subarray(0, 1), bytes(body).subarray(1)]]) {
            const [events] = sse(parts);
            assert.deepEqual(events.map((e) => e.data), ["a"], "a later BOM starts an unknown field");
        }
    });

    it("ends lines at CR, LF and CRLF, a CRLF split across chunks counting once", () => {
        const [events, found] = sse(["data: a\r", "\ndata: b\r\r", "\n", "data: c\n\n"]);
        assert.deepEqual(events.map((e) => [e.data, e.line]), [["a\nb", 1], ["c", 4]]);
        assert.deepEqual(found, []);
    });

    it("reads lines ending in CRLF, LF and CR alike, mixed in one chunk, however it is cut", () => {
        const cases: [string, [string, string, number][]][] = [
            ["event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", [["a", "1", 1], ["message", "2", 4]]],
            ["data: 1\r\ndata: 2\n\r\nevent: b\r\ndata: 3\n\n", [["message", "1\n2", 1], ["b", "3", 4]]],
            ["data: 1\r\rdata: 2\r\n\r\n", [["message", "1", 1], ["message", "2", 3]]],
            ["event:\r\ndata:\r\n\r\ndata: \r\r\n\n", [["message", "", 1], ["message", "", 4]]],
            ["data: a\r\n\ndata: b\n\r\n", [["message", "a", 1], ["message", "b", 3]]],
        ];
        for (const [body, expected] of cases) {
            for (let cut = 0; cut <= body.length; cut++) {
                const [events, found] = sse([body.slice(0, cut), body.slice(cut)]);
                assert.deepEqual(events.map((e) => [e.type, e.data, e.line]), expected, `${JSON.stringify(body)} cut at ${cut}`);
                assert.deepEqual(found, []);
            }
        }
    });

    it("ignores an id holding NUL, and a retry that is not digits", () => {
        const [events] = sse(["id: a\0b\nretry: 1x\ndata: x\n\n"]);
        assert.deepEqual(events, [{ type: "message", data: "x", id: "", retry: null, line: 1 }]);
    });

    it("reports a line that is not UTF-8 and reads it with U+FFFD", () => {
        const [events, found] = sse([new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0x41, 0x0a, 0x0a])]);
        assert.deepEqual(events.map((e) => e.data), ["\ufffdA"]);
        assert.deepEqual(found, ["1 LS-SSE-1"]);
    });

    it("drops the event of an over-long line, and keeps an over-long comment's", () => {
        const long = "x".repeat(40);
        const [events, found] = sse([`data: ${long}\n\n:${long}\ndata: ok\n\n`], { maxLineBytes: 32 });
        assert.deepEqual(events.map((e) => [e.data, e.line]), [["ok", 4]]);
        assert.deepEqual(found, ["1 LS-LIMIT-1", "3 LS-LIMIT-1"]);
    });

    it("skips an over-long line that never ends in bounded memory", () => {
        const decoder = new SSEDecoder({ maxLineBytes: 1024 });
        const chunk = new Uint8Array(1 << 16).fill(0x61);
        for (let i = 0; i < 64; i++) {
            decoder.feed(chunk);
        }
        decoder.close();
        assert.deepEqual(decoder.diagnostics.map((d) => d.message), [`line 1 is ${64 << 16} bytes long, over the limit of 1024`]);
    });

    it("counts an event's data in UTF-8 bytes against the limit", () => {
        const [events, found] = sse([`data: ${"é".repeat(16)}\n\ndata: ${"é".repeat(17)}\n\n`], { maxEventBytes: 32 });
        assert.equal(events.length, 1);
        assert.deepEqual(found, ["3 LS-LIMIT-2"]);
    });

    it("warns when the body ends inside an event", () => {
        const [events, found] = sse(["data: a\n\ndata: b\n"]);
        assert.equal(events.length, 1);
        assert.deepEqual(found, ["3 LS-SSE-5"]);
    });
});

describe("the encoder", () => {
    it("numbers events from 0 and writes what the decoder reads back as conforming", () => {
        const encoder = new Encoder();
        const chunks = [
            encoder.event("stream.start", { model: "m", created: 1 }),
            encoder.event("content.delta", { index: 0, role: "assistant", delta: { text: "h\u00e9 \"\n" } }),
            encoder.event("content.stop", { index: 0, stop_reason: "end_turn" }),
            encoder.event("usage", { input_tokens: 1, output_tokens: 2 }),
            encoder.encode({ type: "stream.end", seq: 99, v: "0" }),
        ];
        const decoder = new Decoder();
        const events = [...chunks.flatMap((chunk) => decoder.feed(chunk)), ...decoder.close()];
        assert.deepEqual(decoder.diagnostics, []);
        assert.deepEqual(events.map((e) => e.seq), [0, 1, 2, 3, 4]);
        assert.equal(new TextDecoder().decode(chunks[4]), 'event: stream.end\ndata: {"v":"1.0","seq":4,"type":"stream.end"}\n\n');
    });

    it("refuses an event without a one-line type, and numbers that are not JSON", () => {
        assert.throws(() => encodeEvent({ type: "a\nb" }), TypeError);
        assert.throws(() => encodeEvent({ v: "1.0" }), TypeError);
        assert.throws(() => encodeEvent({ type: "usage", input_tokens: Number.NaN }), RangeError);
    });
});

describe("SHA-256", () => {
    it("agrees with node:crypto, fed in any pieces", () => {
        const data = bytes("é".repeat(1000) + "abc");
        for (const piece of [1, 7, 63, 64, 65, data.length]) {
            const hash = new Sha256();
            for (let at = 0; at < data.length; at += piece) {
                hash.update(data.subarray(at, at + piece));
            }
            assert.equal(hash.hexDigest(), createHash("sha256").update(data).digest("hex"));
        }
        assert.equal(new Sha256().hexDigest(), createHash("sha256").digest("hex"));
    });
});

describe("the types", () => {
    it("narrow a registered event by its type", () => {
        const decoder = new Decoder();
        const body = new Encoder().event("stream.start", { model: "m", created: 1, "vendor:x": true });
        for (const event of decoder.feed(body)) {
            assert.ok(isRegistered(event));
            if (event.type === "stream.start") {
                const start: EventOfType<"stream.start"> = event;
                assert.equal(start.model, "m");
                assert.equal(start["vendor:x"], true, "unknown members are kept");
            }
        }
    });
});
