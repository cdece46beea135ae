/**
 * Fold a stream's events into its final result: what a non-streaming client would have received.
 *
 * Text is joined per content index, and reasoning apart from it with the signature of its block;
 * tool calls keep their raw and parsed arguments, usage keeps the last running totals (decision
 * D-USAGE-TOTALS), and counts never reported stay null, never zero. As the Python bindings'
 * `aggregate`, it takes whatever the decoder returned, unknown event types included.
 */

import { isObject, loads, member } from "./jsontext.js";

export interface ToolCall {
    readonly index: unknown;
    readonly id: unknown;
    readonly name: unknown;
    readonly arguments: unknown;
    /** The arguments decoded from JSON, or null when they are not JSON. */
    readonly parsed: unknown;
}

export interface Usage {
    readonly input_tokens: number | null;
    readonly output_tokens: number | null;
    readonly cached_input_tokens: number | null;
    readonly reasoning_tokens: number | null;
    readonly cache_creation_input_tokens: number | null;
}

const USAGE_FIELDS = [
    "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "cache_creation_input_tokens",
] as const;

function get(event: unknown, name: string): unknown {
    return isObject(event) ? member(event, name) ?? null : null;
}

function text(delta: unknown): string {
    const value = get(delta, "text");
    return typeof value === "string" ? value : "";
}

/** The final result of one stream. */
export class Aggregate {
    model: unknown = null;
    requestId: unknown = null;
    created: unknown = null;
    readonly text = new Map<unknown, string>();
    /** The reasoning of each reasoning block, never part of the answer (decision D-REASONING). */
    readonly reasoning = new Map<unknown, string>();
    /** The signature of each reasoning block that has one, to send back verbatim with it. */
    readonly reasoningSignatures = new Map<unknown, unknown>();
    readonly toolCalls: ToolCall[] = [];
    readonly stopReasons = new Map<unknown, unknown>();
    usage: Usage | null = null;
    /** The code and message of the error event, if one came. */
    error: { readonly code: unknown; readonly message: unknown } | null = null;
    /** Whether stream.end arrived. */
    ended = false;

    /** All text blocks joined in index order. */
    get outputText(): string {
        const indexes = [...this.text.keys()].sort((a, b) => Number(a) - Number(b));
        return indexes.map((index) => this.text.get(index)).join("");
    }

    /** The reason of the last block closed: the reason the turn stopped. */
    get stopReason(): unknown {
        return [...this.stopReasons.values()].pop() ?? null;
    }

    /** Fold one event in; unknown event types are ignored, as parsers ignore unknown data. */
    add(event: unknown): this {
        const kind = get(event, "type");
        const index = get(event, "index");
        if (kind === "content.delta") {
            this.text.set(index, (this.text.get(index) ?? "") + text(get(event, "delta")));
        } else if (kind === "reasoning.delta") {
            this.reasoning.set(index, (this.reasoning.get(index) ?? "") + text(get(event, "delta")));
        } else if (kind === "reasoning.signature") {
            this.reasoningSignatures.set(index, get(event, "signature"));
        } else if (kind === "tool.call") {
            const args = get(event, "arguments");
            let parsed: unknown = null;
            try {
                parsed = typeof args === "string" ? loads(args) : null;
            } catch {
                // not JSON text: kept raw, parsed stays null
            }
            this.toolCalls.push({ index, id: get(event, "id"), name: get(event, "name"), arguments: args, parsed });
        } else if (kind === "content.stop") {
            this.stopReasons.set(index, get(event, "stop_reason"));
        } else if (kind === "usage") {
            const counts = USAGE_FIELDS.map((name) => {
                const value = get(event, name);
                return typeof value === "number" ? value : null;
            });
            this.usage = {
                input_tokens: counts[0], output_tokens: counts[1], cached_input_tokens: counts[2],
                reasoning_tokens: counts[3], cache_creation_input_tokens: counts[4],
            };
        } else if (kind === "stream.start") {
            this.model = get(event, "model");
            this.requestId = get(event, "request_id");
            this.created = get(event, "created");
        } else if (kind === "error") {
            this.error = { code: get(event, "code"), message: get(event, "message") };
        } else if (kind === "stream.end") {
            this.ended = true;
            this.requestId = this.requestId || get(event, "request_id");
        }
        return this;
    }
}

/** Fold a whole stream of events into its `Aggregate`. */
export function aggregate(events: Iterable<unknown>): Aggregate {
    const result = new Aggregate();
    for (const event of events) {
        result.add(event);
    }
    return result;
}
