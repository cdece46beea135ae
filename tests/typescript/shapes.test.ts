/**
 * The decoder's fast paths held to its general path: an event text read by a shape learned
 * before (`readShape`) gives the object the JSON parser gives, in the same order, and only when
 * the checks the decoder then skips (D-DUPLICATE-KEYS, LS-LIMIT-3, LS-LIMIT-4, unpaired
 * surrogates) all hold; and a stream decodes to the same events and diagnostics, in every
 * chunking, with shapes learned as without any, for texts that look almost like a shape it
 * knows.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { afterEach, describe, it } from "node:test";
import { getHeapSnapshot, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

import { Decoder, type DecoderOptions, type Diagnostic, LLMStreamError } from "../../generated/typescript/src/index.js";
import { duplicateName, loads } from "../../generated/typescript/src/jsontext.js";
import { learnShape, readShape, resetShapes } from "../../generated/typescript/src/shapes.js";
import { random } from "./examples.js";

/** Events of each common type as encoders and vendors write them, one after another. */
const BASE: readonly (readonly [string, string])[] = [
    ["stream.start", '{"v":"1.0","seq":0,"type":"stream.start","model":"m","created":1749292800}'],
    ["content.delta", '{"v":"1.0","seq":1,"type":"content.delta","index":0,"role":"assistant","delta":{"text":" caf\u00e9"}}'],
    ["content.delta", '{"v":"1.0","seq":2,"type":"content.delta","index":0,"role":"assistant","delta":{"text":" the"}}'],
    ["content.stop", '{"v":"1.0","seq":3,"type":"content.stop","index":0,"stop_reason":"end_turn"}'],
    ["tool.call.delta", '{"v":"1.0","seq":4,"type":"tool.call.delta","index":1,"id":"call_1","name":"get_weather","arguments":""}'],
    ["tool.call.delta", '{"v":"1.0","seq":5,"type":"tool.call.delta","index":1,"arguments":"{\\"city\\":"}'],
    ["tool.call.delta", '{"v":"1.0","seq":6,"type":"tool.call.delta","index":1,"arguments":"\\"Vienna\\"}"}'],
    ["tool.call", '{"v":"1.0","seq":7,"type":"tool.call","index":1,"id":"call_1","name":"get_weather","arguments":"{\\"city\\":\\"Vienna\\"}"}'],
    ["content.stop", '{"v":"1.0","seq":8,"type":"content.stop","index":1,"stop_reason":"tool_use"}'],
    ["reasoning.delta", '{"type":"reasoning.delta","v":"1.0","seq":9,"index":2,"delta":{"text":"hm"}}'],
    ["reasoning.signature", '{"v": "1.0", "seq": 10, "type": "reasoning.signature", "index": 2, "signature": "c2ln"}'],
    ["content.stop", '{"v":"1.0","seq":11,"type":"content.stop","index":2,"stop_reason":"end_turn"}'],
    ["usage", '{"v":"1.0","seq":12,"type":"usage","input_tokens":9,"output_tokens":2}'],
    ["stream.end", '{"v":"1.0","seq":13,"type":"stream.end"}'],
];

/** Ways of writing a text that look almost like the one given: each a function of the text
 * that returns another, the same when it does not apply. */
const MUTATIONS: Readonly<Record<string, (text: string) => string>> = {
    "an escaped letter": (text) => text.replace('"text":" ', '"text":"\\u0020'),
    "an escaped quote": (text) => text.replace('"text":"', '"text":"\\"'),
    "an escaped solidus and newline": (text) => text.replace('"text":"', '"text":"\\/\\n'),
    "every escape JSON has": (text) => text.replace('"text":"', '"text":"\\b\\f\\r\\t\\\\\\/\\"\\u00E9\\u20ac'),
    "a long string of escapes": (text) => text.replace('"text":"', `"text":"${"\\n\\u00e9x".repeat(20)}`),
    "an escape that is not JSON": (text) => text.replace('"text":"', '"text":"\\x'),
    "a raw tab in a string": (text) => text.replace('"text":"', '"text":"\t'),
    "a non-ASCII string": (text) => text.replace('"text":"', '"text":"\u65e5\u672c \u{1F600}'),
    "a lone high surrogate escape": (text) => text.replace('"text":"', '"text":"\\ud800'),
    "a lone low surrogate escape": (text) => text.replace('"text":"', '"text":"x\\udc00'),
    "a surrogate pair escaped": (text) => text.replace('"text":"', '"text":"\\ud83d\\ude00'),
    "a lone surrogate escape in arguments": (text) => text.replace('"arguments":"', '"arguments":"\\ud800'),
    "an escaped member name": (text) => text.replace('"index":', '"\\u0069ndex":'),
    "a duplicate member name": (text) => text.replace('"index":', '"index":0,"index":'),
    "a duplicate name in a nested object": (text) => text.replace('"delta":{', '"delta":{"text":"a",'),
    "a duplicate seq": (text) => text.replace(/"seq":(\d+)/, '"seq":$1,"seq":$1'),
    "a float seq": (text) => text.replace(/"seq":(\d+)/, '"seq":$1.0'),
    "an exponent seq": (text) => text.replace(/"seq":(\d+)/, '"seq":$1e0'),
    "a negative seq": (text) => text.replace(/"seq":(\d+)/, '"seq":-$1'),
    "a negative zero index": (text) => text.replace(/"index":(\d+)/, '"index":-0'),
    "a seq with a leading zero": (text) => text.replace(/"seq":(\d+)/, '"seq":0$1'),
    "a seq of 16 digits": (text) => text.replace(/"seq":(\d+)/, '"seq":1000000000000000'),
    "a seq of 15 digits": (text) => text.replace(/"seq":(\d+)/, '"seq":900000000000000'),
    "a seq as a string": (text) => text.replace(/"seq":(\d+)/, '"seq":"$1"'),
    "a missing seq": (text) => text.replace(/"seq":(\d+),/, ""),
    "a missing role": (text) => text.replace('"role":"assistant",', ""),
    "another role": (text) => text.replace('"role":"assistant"', '"role":"user"'),
    "a null role": (text) => text.replace('"role":"assistant"', '"role":null'),
    "an unknown member": (text) => text.replace('"index":', '"x_vendor":true,"index":'),
    "an unknown member at the end": (text) => `${text.slice(0, -1)},"x":{"y":[1,2]}}`,
    "a __proto__ member": (text) => text.replace('"index":', '"__proto__":{"index":0},"index":'),
    "a deep value": (text) => text.replace('"index":', `"x":${"[".repeat(130)}${"]".repeat(130)},"index":`),
    "objects nested five deep": (text) => text.replace('"index":', '"x":{"a":{"b":{"c":{"d":1}}}},"index":'),
    "a number of 4301 digits": (text) => text.replace('"index":', `"x":${"9".repeat(4301)},"index":`),
    "another version": (text) => text.replace('"v":"1.0"', '"v":"1.1"'),
    "another type": (text) => text.replace(/"type":"[a-z.]+"/, '"type":"content.stop"'),
    "an unregistered type": (text) => text.replace(/"type":"[a-z.]+"/, '"type":"x.vendor"'),
    "spaces after the colons": (text) => text.replaceAll('":', '": '),
    "a space at the end": (text) => `${text} `,
    "a trailing comma": (text) => `${text.slice(0, -1)},}`,
    "no closing brace": (text) => text.slice(0, -1),
    "an array": (text) => `[${text}]`,
    "a stop reason that is not the block's": (text) => text.replace('"stop_reason":"tool_use"', '"stop_reason":"end_turn"'),
    "other arguments": (text) => text.replace('"arguments":"{', '"arguments":"{\\"unit\\":1,'),
    "arguments that are not JSON": (text) => text.replace('"arguments":"{', '"arguments":"{{'),
    "falling output tokens": (text) => text.replace('"output_tokens":2', '"output_tokens":0'),
};

function body(events: readonly (readonly [string, string])[]): Uint8Array {
    return new TextEncoder().encode(events.map(([type, data]) => `event: ${type}\ndata: ${data}\n\n`).join(""));
}

interface Verdict {
    readonly events: string[];
    readonly diagnostics: readonly Diagnostic[];
}

function decode(chunks: Iterable<Uint8Array>): Verdict {
    const decoder = new Decoder({ tools: ["get_weather"] });
    const events: unknown[] = [];
    for (const chunk of chunks) {
        events.push(...decoder.feed(chunk));
    }
    events.push(...decoder.close());
    // The order of every object's members counts: the text of each event is compared.
    return { events: events.map((event) => JSON.stringify(event)), diagnostics: decoder.diagnostics };
}

/** The body whole, an event a chunk, and in chunks of 1 to 9 bytes. */
function chunkings(bytes: Uint8Array): Uint8Array[][] {
    const next = random(7);
    const small: Uint8Array[] = [];
    for (let at = 0; at < bytes.length;) {
        const end = Math.min(bytes.length, at + 1 + Math.floor(next() * 9));
        small.push(bytes.subarray(at, end));
        at = end;
    }
    const text = new TextDecoder().decode(bytes);
    const events = text.split(/(?<=\n\n)/).map((event) => new TextEncoder().encode(event));
    return [[bytes], events, small];
}

/** Every text of the base stream with one mutation applied, each a stream of its own. */
function* mutated(): Generator<[string, readonly (readonly [string, string])[]]> {
    for (const [name, mutate] of Object.entries(MUTATIONS)) {
        for (let i = 0; i < BASE.length; i++) {
            const [type, data] = BASE[i];
            const changed = mutate(data);
            if (changed !== data) {
                yield [`${name} in ${type} at ${i}`, BASE.map((event, j) => (j === i ? [type, changed] : event))];
            }
        }
    }
}

afterEach(() => resetShapes(true));

describe("a text read by a shape", () => {
    it("is the object JSON.parse gives, in the same order, and breaks no rule the decoder skips", () => {
        let read = 0;
        for (const [, events] of mutated()) {
            resetShapes(true);
            for (const [type, data] of BASE) {
                learnShape(type, data, true);
            }
            for (const [type, data] of events) {
                const shaped = readShape(type, data);
                if (shaped === null) {
                    continue;
                }
                read += 1;
                const parsed = loads(data); // throws for a text the bindings refuse
                assert.equal(JSON.stringify(shaped), JSON.stringify(parsed), data);
                assert.deepStrictEqual(shaped, parsed, data);
                assert.equal(duplicateName(data, parsed), null, data);
            }
        }
        assert.ok(read > 0);
    });

    it("is read for every event of the base stream once its shape is learned", () => {
        resetShapes(true);
        const types = new Set<string>();
        for (const [type, data] of BASE) {
            if (!types.has(type)) {
                assert.equal(readShape(type, data), null, "nothing learned yet");
                types.add(type);
            }
            learnShape(type, data, true);
            assert.deepStrictEqual(readShape(type, data), JSON.parse(data), data);
        }
    });

    it("is not read when the text only almost has the shape", () => {
        resetShapes(true);
        for (const [type, data] of BASE) {
            learnShape(type, data, true);
        }
        const refused = [
            "a duplicate member name", "a duplicate name in a nested object", "a float seq", "an exponent seq",
            "a seq with a leading zero", "a seq of 16 digits", "a missing role", "an unknown member",
            "a deep value", "a lone high surrogate escape", "a lone low surrogate escape", "a trailing comma",
            "an escape that is not JSON", "a raw tab in a string", "another version", "a __proto__ member",
        ];
        const [type, data] = BASE[1];
        for (const name of refused) {
            assert.equal(readShape(type, MUTATIONS[name](data)), null, name);
        }
    });

    it("is never learned from a text beyond the simplest kind", () => {
        resetShapes(true);
        const [type, data] = BASE[1];
        for (const name of ["a duplicate member name", "a float seq", "a deep value", "objects nested five deep",
            "a __proto__ member", "an unknown member at the end", "a number of 4301 digits", "a lone high surrogate escape"]) {
            const text = MUTATIONS[name](data);
            learnShape(type, text, true);
            assert.equal(readShape(type, text), null, name);
        }
    });
});

describe("learning", () => {
    it("tries a type whose texts give no shape ever less often, and learns it again later", () => {
        resetShapes(true);
        const [type, data] = BASE[1];
        const unlearnable = MUTATIONS["a float seq"](data);
        for (let i = 0; i < 16; i++) {
            learnShape(type, unlearnable, true);
        }
        learnShape(type, data, true);
        assert.equal(readShape(type, data), null, "not tried after 16 texts that gave no shape");
        let tries = 1;
        while (readShape(type, data) === null && tries < 2048) {
            learnShape(type, data, true);
            tries += 1;
        }
        assert.ok(tries < 1024, `learned again after ${tries} texts`);
        assert.deepStrictEqual(readShape(type, data), JSON.parse(data));
    });

    it("keeps at most four shapes of a type, the oldest making way", () => {
        resetShapes(true);
        const [type, data] = BASE[1];
        const texts = [0, 1, 2, 3, 4].map((n) => data.replace('"index":', `"x${n}":1,"index":`));
        for (const text of texts) {
            learnShape(type, text, true);
        }
        assert.equal(readShape(type, texts[0]), null);
        for (const text of texts.slice(1)) {
            assert.deepStrictEqual(readShape(type, text), JSON.parse(text));
        }
    });
});

describe("a stream decoded with shapes learned", () => {
    it("gives the events and diagnostics of the general path, in every chunking", () => {
        let differing = 0;
        for (const [name, events] of mutated()) {
            const bytes = body(events);
            resetShapes(false);
            const general = decode([bytes]);
            for (const chunks of chunkings(bytes)) {
                resetShapes(false);
                assert.deepEqual(decode(chunks), general, `${name}: general path`);
                resetShapes(true);
                decode([body(BASE)]); // every shape of the base stream learned
                assert.deepEqual(decode(chunks), general, name);
                resetShapes(true); // and learned by the stream itself
                assert.deepEqual(decode(chunks), general, `${name}, learned as it goes`);
            }
            differing += general.diagnostics.length > 0 ? 1 : 0;
        }
        assert.ok(differing > 20, "the mutations break rules");
    });

    it("of random texts, mutations applied in turn, gives what the general path gives", () => {
        const next = random(15);
        const names = Object.keys(MUTATIONS);
        for (let round = 0; round < 200; round++) {
            const events = BASE.map(([type, data]): [string, string] => {
                let text = data;
                while (next() < 0.3) {
                    text = MUTATIONS[names[Math.floor(next() * names.length)]](text);
                }
                return [type, text];
            });
            const bytes = body(events);
            resetShapes(false);
            const general = decode([bytes]);
            resetShapes(true);
            decode([body(BASE)]);
            for (const chunks of chunkings(bytes)) {
                assert.deepEqual(decode(chunks), general, JSON.stringify(events));
            }
        }
    });
});

/** Pieces of string contents that a shape must read as the parser does, or leave to it. */
const PIECES: readonly string[] = [
    "a", '","', "}", '\\"', "\\\\", "\\/", "\\u0000", "\u2028", "\\u2028", "\u{1F600}", "\\ud83d\\ude00",
    "\\ud800", "\\udc00", "\\uD800\\u0041", "\\n", "\\t\\r\\b\\f", "\\u00e9", '\\\\\\"', '\\",\\"seq\\":1,\\"x\\":\\"',
    '"', "\t", "\\x", "\\u12",
];

/** Decoder options a shape may be learned under, and read under. */
const OPTIONS: readonly DecoderOptions[] = [
    {}, { tools: ["get_weather"] }, { tools: [] }, { requestMetadata: { request_id: "r" } }, { lifecycle: false },
    { validate: false }, { strict: true }, { maxLineBytes: 200, maxEventBytes: 300 }, { maxBlocks: 1 },
];

/** The events and diagnostics of a body under `options`, or where strict decoding stopped. */
function verdictUnder(options: DecoderOptions, bytes: Uint8Array): string {
    const decoder = new Decoder(options);
    const events: unknown[] = [];
    let stopped = "";
    try {
        events.push(...decoder.feed(bytes), ...decoder.close());
    } catch (error) {
        if (!(error instanceof LLMStreamError)) {
            throw error;
        }
        stopped = `${error.diagnostic.rule} ${JSON.stringify(error.events)}`;
    }
    return JSON.stringify([events, decoder.diagnostics, stopped]);
}

describe("a shape learned under some decoder options", () => {
    it("gives what the general path gives under any others, whatever the strings hold", () => {
        const next = random(23);
        const piece = (): string => PIECES[Math.floor(next() * PIECES.length)];
        const strings = (text: string): string => text.replace(/"(text|arguments|model|signature|id)":"/g,
            (found) => `${found}${piece()}${next() < 0.5 ? piece() : ""}`);
        for (let round = 0; round < 60; round++) {
            const bytes = body(BASE.map(([type, data]): [string, string] => [type, next() < 0.5 ? strings(data) : data]));
            const options = OPTIONS[Math.floor(next() * OPTIONS.length)];
            resetShapes(false);
            const general = verdictUnder(options, bytes);
            resetShapes(true);
            verdictUnder(OPTIONS[Math.floor(next() * OPTIONS.length)], body(BASE));
            verdictUnder(OPTIONS[Math.floor(next() * OPTIONS.length)], bytes);
            assert.equal(verdictUnder(options, bytes), general, `round ${round}`);
        }
    });
});

/** A stream of a stream.start whose text is `start`, twice (the second read by the shape the
 * first taught), a content.delta and a stream.end, each `data:` line of a text a line of its own. */
function startedTwice(start: (seq: number) => string): Uint8Array {
    const lines = (data: string): string => data.split("\n").map((line) => `data: ${line}\n`).join("");
    return new TextEncoder().encode([
        `event: stream.start\n${lines(start(0))}\n`,
        `event: stream.start\n${lines(start(1))}\n`,
        `event: content.delta\n${lines(BASE[1][1].replace('"seq":1', '"seq":2'))}\n`,
        `event: stream.end\n${lines('{"v":"1.0","seq":3,"type":"stream.end"}')}\n`,
    ].join(""));
}

describe("a text beyond what a regular expression can take", () => {
    const cases: Readonly<Record<string, (seq: number) => string>> = {
        "a member name of 60,000 characters": (seq) =>
            `{"v":"1.0","seq":${seq},"type":"stream.start","model":"m","${"n".repeat(60_000)}":"x"}`,
        "5,000 members": (seq) => `{"v":"1.0","seq":${seq},"type":"stream.start","model":"m",`
            + `${Array.from({ length: 5000 }, (_, i) => `"x${i}":"v"`).join(",")}}`,
        // Learned from the first text; the second holds eight lines of 500,000 escapes each.
        "four million escapes in strings of a shape learned": (seq) => `{"v":"1.0","seq":${seq},"type":"stream.start","model":"m",\n`
            + ["a", "b", "c", "d", "e", "f", "g", "h"].map((name) => `"x_${name}":"${"\\n".repeat(seq === 0 ? 1 : 500_000)}"`).join(",\n") + "}",
    };
    for (const [name, start] of Object.entries(cases)) {
        it(`${name}: decoded as without shapes, by the decoder that learned it and the next`, () => {
            const bytes = startedTwice(start);
            resetShapes(false);
            const general = decode([bytes]);
            resetShapes(true);
            assert.deepEqual(decode([bytes]), general);
            assert.deepEqual(decode([bytes]), general, "a later decoder");
        });
    }

    it("of four near shapes costs about what parsing it costs", () => {
        resetShapes(true);
        const text = (fill: string, tail: string): string =>
            `{"v":"1.0","seq":1,"type":"content.delta","index":0,"delta":{"text":"${fill}"${tail}}}`;
        for (const tail of ['', ',"a":1', ',"b":1', ',"c":1']) {
            learnShape("content.delta", text("x", tail), true);
        }
        const best = (run: () => unknown): number => {
            let fastest = Infinity;
            for (let round = 0; round < 7; round++) {
                const start = performance.now();
                run();
                fastest = Math.min(fastest, performance.now() - start);
            }
            return fastest;
        };
        for (const fill of ["\\n".repeat(400_000), "abcdefghi\\n".repeat(80_000), "x".repeat(800_000)]) {
            const hostile = text(fill, ',"x":1');
            const ratio = best(() => readShape("content.delta", hostile)) / best(() => JSON.parse(hostile));
            assert.ok(ratio < 10, `the four shapes take ${ratio.toFixed(1)} times what JSON.parse takes`);
        }
    });
});

/** The strings of the heap, once the garbage is collected. */
async function heapStrings(): Promise<string> {
    setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
    // The engine keeps the subject of the last match of any regular expression (RegExp.input)
    // until the next match: that is not the decoder's.
    /x/.exec("x");
    let snapshot = "";
    for await (const part of getHeapSnapshot()) {
        snapshot += String(part);
    }
    return snapshot;
}

/** Decode a stream whose values and one event type carry `marker` (each after a letter, so
 * that the marker itself is no part of them); whether its events came out. */
function decodeMarked(marker: string): boolean {
    const call = `{\\"type\\":\\"t${marker}\\",\\"city\\":\\"c${marker}\\"}`;
    const texts: [string, string][] = [
        ["stream.start", `{"v":"1.0","seq":0,"type":"stream.start","model":"m${marker}","created":1}`],
        ["content.delta", `{"v":"1.0","seq":1,"type":"content.delta","index":0,"role":"assistant","delta":{"text":"d${marker}"}}`],
        ["content.stop", '{"v":"1.0","seq":2,"type":"content.stop","index":0,"stop_reason":"end_turn"}'],
        ["tool.call", `{"v":"1.0","seq":3,"type":"tool.call","index":1,"id":"i${marker}","name":"get_weather","arguments":"${call}"}`],
        ["content.stop", '{"v":"1.0","seq":4,"type":"content.stop","index":1,"stop_reason":"tool_use"}'],
        [`x${marker}`, '{"v":"1.0","seq":5,"type":"usage","input_tokens":1,"output_tokens":1}'],
        ["stream.end", '{"v":"1.0","seq":6,"type":"stream.end"}'],
    ];
    const { events } = decode([body(texts)]);
    return events.some((event) => event.includes(`d${marker}`)) && events.some((event) => event.includes(`c${marker}`));
}

describe("what is kept when a stream is done", () => {
    it("is no value of a text a shape was learned from, and no event type the stream sent", async () => {
        resetShapes(true);
        const marker = randomUUID().slice(0, 18);
        assert.ok(decodeMarked(marker));
        const heap = await heapStrings();
        for (const letter of ["m", "d", "t", "c", "i", "x"]) {
            assert.ok(!heap.includes(letter + marker), `${letter}${marker} is kept`);
        }
    });
});

describe("the parser's limits", () => {
    it("count an integer part's digits, not a fraction's or an exponent's", () => {
        const digits = "7".repeat(4301);
        for (const exponent of [`1e${digits}`, `1e+${digits}`, `1E-${digits}`, `0.${digits}`]) {
            assert.deepEqual(loads(`[${exponent}]`), JSON.parse(`[${exponent}]`));
        }
        for (const integer of [digits, `-${digits}`, `${digits}.0`, `${digits}e0`]) {
            assert.throws(() => loads(`[${integer}]`), /more than 4300 digits/);
        }
    });
});
