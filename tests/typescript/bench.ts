/**
 * Throughput of the TypeScript decoder against the most used JavaScript SSE parser.
 *
 *   node --expose-gc tests/typescript/run.mjs bench.ts < job
 *
 * Reads the job on stdin: `{"rounds": 5, "workloads": [{"name", "body", "chunk"}]}`, each body
 * a file of the Python benchmark's bytes, fed in chunks of `chunk` bytes or, with chunk 0, one
 * event a chunk. Ours is `Decoder` as a client uses it by default, validating every event
 * against its schema and the lifecycle; the peer is eventsource-parser fed the text of each
 * chunk (decoded as a stream, as its own TextDecoder pipeline does) followed by JSON.parse,
 * which validates nothing. Writes events per second of CPU time, the best of the rounds, as JSON.
 */

import { readFileSync } from "node:fs";

import { createParser } from "eventsource-parser";

type Package = typeof import("../../generated/typescript/src/index.js");

interface Workload {
    readonly name: string;
    readonly body: string;
    readonly chunk: number;
}

const pkg = (await import(process.env.LLM_STREAM_PACKAGE as string)) as Package;

/** The body cut after each blank line (LF LF or CRLF CRLF): one event a chunk. */
function perEvent(body: Uint8Array): Uint8Array[] {
    const chunks: Uint8Array[] = [];
    let start = 0;
    for (let at = body.indexOf(10); at >= 0; at = body.indexOf(10, at + 1)) {
        if (body[at + 1] === 10 || (body[at + 1] === 13 && body[at + 2] === 10)) {
            const end = at + (body[at + 1] === 10 ? 2 : 3);
            chunks.push(body.subarray(start, end));
            start = end;
        }
    }
    return chunks;
}

function cut(body: Uint8Array, size: number): Uint8Array[] {
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < body.length; at += size) {
        chunks.push(body.subarray(at, at + size));
    }
    return chunks;
}

function ours(chunks: readonly Uint8Array[]): number {
    const decoder = new pkg.Decoder();
    let count = 0;
    for (const chunk of chunks) {
        count += decoder.feed(chunk).length;
    }
    count += decoder.close().length;
    if (!decoder.conforming) {
        throw new Error(JSON.stringify(decoder.diagnostics.slice(0, 3)));
    }
    return count;
}

function peer(chunks: readonly Uint8Array[]): number {
    const text = new TextDecoder();
    let count = 0;
    const parser = createParser({
        onEvent(event) {
            if (JSON.parse(event.data)) {
                count += 1;
            }
        },
    });
    for (const chunk of chunks) {
        parser.feed(text.decode(chunk, { stream: true }));
    }
    parser.feed(text.decode());
    return count;
}

/** Events per second of each run's best of `rounds`, taking turns after one untimed turn. The
 * time is the process's CPU time, so that a machine busy with other work slows neither run. */
function rates(runs: Record<string, () => number>, rounds: number): Record<string, number> {
    const counts = Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, run()]));
    const expected = Object.values(counts)[0];
    for (const [name, count] of Object.entries(counts)) {
        if (count !== expected) {
            throw new Error(`${name} gave ${count} events, not ${expected}`);
        }
    }
    const best = Object.fromEntries(Object.keys(runs).map((name) => [name, Infinity]));
    for (let round = 0; round < rounds; round++) {
        for (const [name, run] of Object.entries(runs)) {
            (globalThis as { gc?: () => void }).gc?.();
            const start = process.cpuUsage();
            run();
            const { user, system } = process.cpuUsage(start);
            best[name] = Math.min(best[name], (user + system) / 1e6);
        }
    }
    return Object.fromEntries(Object.entries(best).map(([name, seconds]) => [name, expected / seconds]));
}

const job = JSON.parse(readFileSync(0, "utf8")) as { rounds: number; workloads: Workload[] };
const answer: Record<string, Record<string, number>> = {};
for (const { name, body, chunk } of job.workloads) {
    const bytes = new Uint8Array(readFileSync(body));
    const chunks = chunk === 0 ? perEvent(bytes) : cut(bytes, chunk);
    answer[name] = rates({ ours: () => ours(chunks), peer: () => peer(chunks) }, job.rounds);
}
process.stdout.write(JSON.stringify({ node: process.version, rows: answer }));
