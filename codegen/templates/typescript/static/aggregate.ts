/**
 * Fold a stream's events into its final result: what a non-streaming client would have received.
 *
 * Text is joined per content index, and reasoning apart from it with the signature of its block;
 * tool calls keep their raw and parsed arguments, usage keeps the last running totals (decision
 * D-USAGE-TOTALS), and counts never reported stay null, never zero. As the Python bindings'
 * `aggregate`, it takes whatever the decoder returned, unknown event types included, and leaves
 * out a member of the wrong type; a tool call counts only between stream.start and stream.end,
 * before any error (decision D-TOOL-CALL-CHECKS).
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

function str(event: unknown, name: string): string | null {
    const value = get(event, name);
    return typeof value === "string" ? value : null;
}

function int(event: unknown, name: string): number | null {
    const value = get(event, name);
    return Number.isInteger(value) ? value as number : null;
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
    private started = false;

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
        const index = int(event, "index");
        if (kind === "content.delta" || kind === "reasoning.delta") {
            const text = str(get(event, "delta"), "text");
            const joined = kind === "content.delta" ? this.text : this.reasoning;
            if (index !== null && text !== null) {
                joined.set(index, (joined.get(index) ?? "") + text);
            }
        } else if (kind === "reasoning.signature") {
            const signature = str(event, "signature");
            if (index !== null && signature !== null) {
                this.reasoningSignatures.set(index, signature);
            }
        } else if (kind === "tool.call") {
            this.toolCall(event, index);
        } else if (kind === "content.stop") {
            const reason = str(event, "stop_reason");
            if (index !== null && reason !== null) {
                this.stopReasons.set(index, reason);
            }
        } else if (kind === "usage") {
            const counts = USAGE_FIELDS.map((name) => int(event, name));
            this.usage = {
                input_tokens: counts[0], output_tokens: counts[1], cached_input_tokens: counts[2],
                reasoning_tokens: counts[3], cache_creation_input_tokens: counts[4],
            };
        } else if (kind === "stream.start") {
            this.started = true;
            this.model = str(event, "model");
            this.requestId = str(event, "request_id");
            this.created = int(event, "created");
        } else if (kind === "error") {
            const code = str(event, "code");
            const message = str(event, "message");
            if (code !== null && message !== null) {
                this.error = { code, message };
            }
        } else if (kind === "stream.end") {
            this.ended = true;
            this.requestId = this.requestId || str(event, "request_id");
        }
        return this;
    }

    /** A call to make: one that came in its place, with every member of its type. */
    private toolCall(event: unknown, index: number | null): void {
        const id = str(event, "id");
        const name = str(event, "name");
        const args = str(event, "arguments");
        if (!this.started || this.ended || this.error !== null || index === null || id === null
            || name === null || args === null) {
            return;
        }
        let parsed: unknown = null;
        try {
            parsed = loads(args);
        } catch {
            // not JSON text: kept raw, parsed stays null
        }
        this.toolCalls.push({ index, id, name, arguments: args, parsed });
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
