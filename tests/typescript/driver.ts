/**
 * The TypeScript side of the two-language tests: reads one JSON job on stdin, answers on stdout.
 *
 * - `decode`: bodies (base64) with the decoder options the Python side used, each fed in every
 *   chunking asked for (a list of chunk sizes, taken in turn; 0 is the whole body at once); the
 *   answer is, per chunking, the events as JSON text and the diagnostics as [rule, line,
 *   severity], or the first error when strict mode threw.
 * - `validate`: instances for named validator functions of a module next to the package's
 *   index.js; the answer is each one's errors as [rule, pointer, message] and its yes/no check.
 * - `encode` and `aggregate`: events through the encoder (the bytes as text) and the aggregator.
 *
 * Run by `run.mjs`, which puts the package (the generated one, or a copy's) at
 * LLM_STREAM_PACKAGE.
 */

import { readFileSync } from "node:fs";

type Package = typeof import("../../generated/typescript/src/index.js");

interface DecodeCase {
    readonly name: string;
    readonly body: string;
    readonly options: Readonly<Record<string, unknown>>;
    readonly chunkings: readonly (readonly number[])[];
}

interface ValidateCase {
    readonly function: string;
    readonly instances: readonly unknown[];
}

interface Job {
    readonly decode?: readonly DecodeCase[];
    readonly validate?: { readonly module: string; readonly cases: readonly ValidateCase[] };
    readonly encode?: readonly Record<string, unknown>[];
    readonly aggregate?: readonly (readonly unknown[])[];
}

const packageUrl = process.env.LLM_STREAM_PACKAGE as string;
const pkg = (await import(packageUrl)) as Package;

function decoderOptions(options: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const names: Record<string, string> = {
        tools: "tools", request_metadata: "requestMetadata", lifecycle: "lifecycle",
        validate: "validate", strict: "strict", max_line_bytes: "maxLineBytes",
        max_event_bytes: "maxEventBytes", max_blocks: "maxBlocks",
    };
    return Object.fromEntries(Object.entries(options).map(([key, value]) => {
        if (!(key in names)) {
            throw new Error(`unknown decoder option ${key}`);
        }
        return [names[key], value];
    }));
}

function* chunks(body: Uint8Array, sizes: readonly number[]): Generator<Uint8Array> {
    if (sizes.length === 1 && sizes[0] === 0) {
        yield body;
        return;
    }
    let at = 0;
    for (let turn = 0; at < body.length; turn++) {
        const size = sizes[turn % sizes.length];
        yield body.subarray(at, at + size);
        at += size;
    }
}

function decode(job: DecodeCase): unknown[] {
    const body = Buffer.from(job.body, "base64");
    return job.chunkings.map((sizes) => {
        const decoder = new pkg.Decoder(decoderOptions(job.options));
        const events: unknown[] = [];
        try {
            for (const chunk of chunks(body, sizes)) {
                events.push(...decoder.feed(chunk));
            }
            events.push(...decoder.close());
        } catch (error) {
            if (!(error instanceof pkg.LLMStreamError)) {
                throw error;
            }
            events.push(...error.events);
            return {
                events: events.map((event) => JSON.stringify(event)),
                raised: [error.diagnostic.rule, error.diagnostic.line],
            };
        }
        return {
            events: events.map((event) => JSON.stringify(event)),
            diagnostics: decoder.diagnostics.map((d) => [d.rule, d.line, d.severity]),
        };
    });
}

async function validate(spec: NonNullable<Job["validate"]>): Promise<unknown[]> {
    const module = (await import(new URL(spec.module, packageUrl).href)) as Record<string, unknown>;
    return spec.cases.map(({ function: name, instances }) => {
        const validateOne = module[name] as (instance: unknown) => { rule: string; pointer: string; message: string }[];
        const check = module[name.replace(/^validate/, "isValid")] as (instance: unknown) => boolean;
        return instances.map((instance) => ({
            errors: validateOne(instance).map((e) => [e.rule, e.pointer, e.message]),
            valid: check(instance),
        }));
    });
}

function aggregate(events: readonly unknown[]): unknown {
    const result = pkg.aggregate(events);
    return {
        output_text: result.outputText,
        reasoning: Object.fromEntries(result.reasoning),
        reasoning_signatures: Object.fromEntries(result.reasoningSignatures),
        tool_calls: result.toolCalls,
        stop_reason: result.stopReason,
        usage: result.usage,
        model: result.model,
        request_id: result.requestId,
        error: result.error === null ? null : [result.error.code, result.error.message],
        ended: result.ended,
    };
}

const job = JSON.parse(readFileSync(0, "utf8")) as Job;
const answer = {
    decode: (job.decode ?? []).map(decode),
    validate: job.validate === undefined ? [] : await validate(job.validate),
    encode: (job.encode ?? []).map((event) => new TextDecoder().decode(pkg.encodeEvent(event))),
    aggregate: (job.aggregate ?? []).map(aggregate),
};
process.stdout.write(JSON.stringify(answer));
