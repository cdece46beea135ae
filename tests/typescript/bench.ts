/**
 * Throughput of the TypeScript decoder against the most used JavaScript SSE parser.
 *
 *   node --expose-gc tests/typescript/run.mjs bench.ts < job
 *
 * Reads the job on stdin: `{"rounds": 5, "maxBlocks": N, "workloads": [{"name", "body",
 * "events", "streams"}]}`, each body a file of the Python benchmark's chunks, one after another,
 * and `streams` the lengths of each stream's chunks, which are fed as they are. Ours is `Decoder`
 * as a client uses it by default (its block limit raised to `maxBlocks`), one a stream,
 * validating every event against its schema and the lifecycle; the peer is eventsource-parser
 * fed the text of each chunk (decoded as a stream, as its own TextDecoder pipeline does)
 * followed by JSON.parse, which validates nothing. Writes events per second of CPU
 * time, the best of the rounds, as JSON.
 */

import { readFileSync } from "node:fs";

import { createParser } from "eventsource-parser";

type Package = typeof import("../../generated/typescript/src/index.js");

interface Workload {
    readonly name: string;
    /** A file of the workload's chunks, one after another. */
    readonly body: string;
    /** How many events the streams carry in all. */
    readonly events: number;
    /** Each stream as the lengths of its chunks. */
    readonly streams: readonly (readonly number[])[];
}

const pkg = (await import(process.env.LLM_STREAM_PACKAGE as string)) as Package;

function streamsOf(bytes: Uint8Array, lengths: readonly (readonly number[])[]): Uint8Array[][] {
    let at = 0;
    return lengths.map((chunks) => chunks.map((length) => bytes.subarray(at, (at += length))));
}

function ours(streams: readonly (readonly Uint8Array[])[], maxBlocks: number): number {
    let count = 0;
    for (const chunks of streams) {
        const decoder = new pkg.Decoder({ maxBlocks });
        for (const chunk of chunks) {
            count += decoder.feed(chunk).length;
        }
        count += decoder.close().length;
        if (!decoder.conforming) {
            throw new Error(JSON.stringify(decoder.diagnostics.slice(0, 3)));
        }
    }
    return count;
}

function peer(streams: readonly (readonly Uint8Array[])[]): number {
    let count = 0;
    for (const chunks of streams) {
        const text = new TextDecoder();
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
    }
    return count;
}

/** Events per second of each run's best of `rounds`, taking turns after one untimed turn. The
 * time is the process's CPU time, so that a machine busy with other work slows neither run. */
function rates(runs: Record<string, () => number>, expected: number, rounds: number): Record<string, number> {
    for (const [name, run] of Object.entries(runs)) {
        const count = run();
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

const job = JSON.parse(readFileSync(0, "utf8")) as { rounds: number; maxBlocks: number; workloads: Workload[] };
const answer: Record<string, Record<string, number>> = {};
for (const { name, body, events, streams } of job.workloads) {
    const chunks = streamsOf(new Uint8Array(readFileSync(body)), streams);
    answer[name] = rates({ ours: () => ours(chunks, job.maxBlocks), peer: () => peer(chunks) }, events, job.rounds);
}
process.stdout.write(JSON.stringify({ node: process.version, rows: answer }));
