/**
 * The decoder on every captured stream of the spec: any chunking gives the same events and
 * diagnostics as the whole body at once, under the default limits and under small ones; and a
 * `ReadableStream`, such as a `fetch` body, gives what `feed` gives.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Aggregate, Decoder, type DecoderOptions, type Diagnostic } from "../../generated/typescript/src/index.js";
import { captures, random } from "./examples.js";

interface Verdict {
    readonly events: string[];
    readonly diagnostics: readonly Diagnostic[];
}

function decode(chunks: Iterable<Uint8Array>, options: DecoderOptions): Verdict {
    const decoder = new Decoder(options);
    const events: unknown[] = [];
    for (const chunk of chunks) {
        events.push(...decoder.feed(chunk));
    }
    events.push(...decoder.close());
    return { events: events.map((event) => JSON.stringify(event)), diagnostics: decoder.diagnostics };
}

function* cut(body: Uint8Array, size: () => number): Generator<Uint8Array> {
    for (let at = 0; at < body.length;) {
        const next = Math.min(body.length, at + size());
        yield body.subarray(at, next);
        at = next;
    }
}

const OPTIONS: readonly DecoderOptions[] = [
    {},
    { maxLineBytes: 48 },
    { maxEventBytes: 64 },
    { lifecycle: false, validate: false },
];

describe("every chunking gives the same result", () => {
    for (const { file, body } of captures()) {
        it(file, () => {
            for (const options of OPTIONS) {
                const whole = decode([body], options);
                assert.deepEqual(decode(cut(body, () => 1), options), whole, "byte by byte");
                for (let seed = 1; seed <= 8; seed++) {
                    const next = random(seed);
                    const sizes = () => 1 + Math.floor(next() * (seed % 2 ? 9 : 200));
                    assert.deepEqual(decode(cut(body, sizes), options), whole, `seed ${seed}`);
                }
            }
        });
    }
});

function readable(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> & { cancelled: boolean } {
    let index = 0;
    const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
            if (index < chunks.length) {
                controller.enqueue(chunks[index++]);
            } else {
                controller.close();
            }
        },
        cancel() {
            state.cancelled = true;
        },
    });
    const state = Object.assign(stream, { cancelled: false });
    return state;
}

describe("a ReadableStream", () => {
    const example = captures().find((capture) => capture.file.endsWith("complete-example.sse"));
    assert.ok(example !== undefined);

    it("gives the events and diagnostics of feed", async () => {
        for (const { body } of captures()) {
            const chunks = [...cut(body, random(7))].map((chunk) => chunk.slice());
            const decoder = new Decoder();
            const events: string[] = [];
            for await (const event of decoder.stream(readable(chunks))) {
                events.push(JSON.stringify(event));
            }
            assert.deepEqual({ events, diagnostics: decoder.diagnostics }, decode([body], {}));
        }
    });

    it("is cancelled when the reader stops early, and the decoder stays open", async () => {
        const stream = readable([...cut(example.body, () => 16)]);
        const decoder = new Decoder();
        for await (const event of decoder.stream(stream)) {
            assert.equal(event.type, "stream.start");
            break;
        }
        assert.equal(stream.cancelled, true);
        assert.deepEqual(decoder.diagnostics, []);
    });

    it("aggregates into the answer", async () => {
        const result = new Aggregate();
        for await (const event of new Decoder().stream(readable([example.body]))) {
            result.add(event);
        }
        assert.equal(result.ended, true);
        assert.ok(result.outputText.length > 0);
        assert.equal(result.stopReason, "end_turn");
        assert.ok(result.usage !== null && result.usage.output_tokens !== null);
    });
});

describe("hostile input", () => {
    const encoder = new TextEncoder();
    const sse = (kind: string, data: string): string => `event: ${kind}\ndata: ${data}\n\n`;
    const start = sse("stream.start", '{"v":"1.0","seq":0,"type":"stream.start","model":"m","created":1}');
    const call = (seq: number, name: string): string => sse("tool.call",
        `{"v":"1.0","seq":${seq},"type":"tool.call","index":0,"id":"c${seq}","name":"${name}","arguments":"{}"}`);

    it("takes the declared tools as names or as the request's tools array, never one string", () => {
        for (const tools of [["get_weather"], [{ name: "get_weather", description: "", parameters: {} }]]) {
            const decoder = new Decoder({ tools, lifecycle: false });
            const events = decoder.feed(encoder.encode(call(1, "rm") + call(2, "get_weather")));
            assert.deepEqual(decoder.diagnostics.map((d) => d.rule), ["LS-CALL-4"]);
            assert.equal(events.length, 1); // the refused call is not returned
        }
        assert.throws(() => new Decoder({ tools: "get_weather" as unknown as string[] }), TypeError);
        assert.throws(() => new Decoder({ tools: [{ title: "x" }] as unknown as string[] }), TypeError);
    });

    it("refuses a member name written twice and JSON past the depth limit", () => {
        const twice = sse("content.delta", '{"v":"1.0","seq":1,"type":"content.delta","index":0,'
            + '"role":"assistant","delta":{"text":"a","text":"b"}}');
        const deep = sse("content.delta", '{"v":"1.0","seq":2,"type":"content.delta","index":0,'
            + `"role":"assistant","delta":{"text":"a"},"x":${"[".repeat(128)}${"]".repeat(128)}}`);
        const decoder = new Decoder();
        assert.equal(decoder.feed(encoder.encode(start + twice + deep)).length, 1);
        assert.deepEqual(decoder.diagnostics.map((d) => d.rule), ["LS-SSE-6", "LS-LIMIT-3"]);
    });

    it("aggregates events of any shape without throwing, listing only calls in their place", () => {
        const result = new Aggregate()
            .add({ type: "tool.call", index: 0, id: "a", name: "rm", arguments: "{}" })
            .add({ type: "stream.start" })
            .add({ type: "content.delta", index: [0], delta: { text: 5 } })
            .add({ type: "content.delta", index: 0, delta: { text: "a" } })
            .add({ type: "tool.call", index: 1, id: "b", name: "f", arguments: "{}" });
        assert.equal(result.outputText, "a");
        assert.deepEqual(result.toolCalls.map((c) => c.id), ["b"]);
    });
});
