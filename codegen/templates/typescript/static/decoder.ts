/**
 * The sans-IO LLM-Stream decoder: bytes in, events and diagnostics out (draft section 5.1).
 *
 * The layers of the Python bindings, each its own module: SSE framing (`sse`), the JSON envelope
 * checked by the generated validators (`validators`), and the lifecycle state machine whose
 * tables come from the registry (`lifecycle`); texts of a shape seen before are read without
 * the JSON parser (`shapes`). The verdict is the Python decoder's, rule for
 * rule and line for line: the two are held to each other on every example of the spec and on
 * mutated ones. `feed()` takes whatever bytes arrived and returns the events they completed;
 * `stream()` does the same for a `ReadableStream`, such as the body of a `fetch` response.
 */

import { type Diagnostic, LLMStreamError, type SchemaError } from "./diagnostics.js";
import { duplicateName, isObject, JSONLimitError, jsonEqual, loads, member } from "./jsontext.js";
import * as life from "./lifecycle.js";
import { severity } from "./rules.js";
import { Sha256 } from "./sha256.js";
import { isShaped, learnShape, readShape } from "./shapes.js";
import { SSEDecoder, type SSEEvent } from "./sse.js";
import type { DecodedEvent } from "./types.js";
import { EVENT_CHECKS, isValidEnvelope, isValidEvent, validateEnvelope, validateEvent } from "./validators.js";

export interface DecoderOptions {
    /** Throw `LLMStreamError` on the first error instead of only recording it. */
    readonly strict?: boolean;
    /** What the request declared: tool names, or the request's `tools` array (objects with a
     * `name`); given, every tool.call is checked against them (draft section 8.2), wherever it
     * comes and with or without the lifecycle, and a tool.call with any error is not returned
     * (decision D-TOOL-CALL-CHECKS). */
    readonly tools?: Iterable<string | { readonly name: string }> | null;
    /** The request's `metadata`; given, the events that should echo its members (stream.start
     * and stream.end echo request_id) are checked (LS-META-2). */
    readonly requestMetadata?: Readonly<Record<string, unknown>> | null;
    /** `false` checks events one by one (framing, envelope, schema) without order, for
     * excerpts of a stream. */
    readonly lifecycle?: boolean;
    /** `false` checks each event against the envelope and the lifecycle only, not against the
     * schema of its type. */
    readonly validate?: boolean;
    readonly maxLineBytes?: number;
    readonly maxEventBytes?: number;
    /** How many distinct content block indexes a stream may open (LS-LIMIT-5); 4096 unless
     * given. */
    readonly maxBlocks?: number;
}

type Json = Record<string, unknown>;
/** One check of life.FIELD_CHECKS: (check, field, rule). */
type FieldCheck = readonly [string, string, string];

/** What the decoder knows of an open block whose events change no state but seq (and, for
 * fragments, the join of their text): their type, the check of their schema when the decoder
 * validates, and the join their fragments go to. */
interface Steady {
    readonly kind: string;
    readonly check: ((instance: unknown) => boolean) | null;
    readonly joining: Joining | null;
}

/** The event types that fragments build, and the type of those fragments. */
const BUILT_BY: ReadonlyMap<string, string> = new Map(
    [...life.FRAGMENTS].map(([kind, fragments]) => [fragments.event, kind]),
);

/** Block event types whose repetition in an open block changes no state but seq, or for
 * fragments no state but seq and the join of their block's fragments. */
const STEADY_KINDS: ReadonlySet<string> = new Set(
    [...life.PLACES].filter(([kind, place]) => place === "block" && life.BLOCK_KINDS.has(kind)
        && !life.PER_BLOCK.has(kind) && !life.CLOSES_WITH.has(kind) && !life.FIELD_CHECKS.has(kind)
        && !life.EXPECTED.has(kind) && !life.COMPLETES_BLOCK.has(kind) && !BUILT_BY.has(kind))
        .map(([kind]) => kind),
);

const NOT_PARSED = Symbol("not parsed");

/** A text the parser refused, and why: kept so that the general path reports it without parsing
 * the text again. */
class Refused {
    constructor(readonly error: unknown) {}
}

/** The value of a JSON text, or why the parser refused it. */
function attempt(text: string): unknown {
    try {
        return loads(text);
    } catch (error) {
        return new Refused(error);
    }
}

/** The registered event types, which the SSE layer reads as these strings. */
const EVENT_TYPES: readonly string[] = [...life.PLACES.keys()];

/** How many texts one decoder learns shapes from at most: learning one costs more than parsing
 * it, and a stream whose events keep taking new shapes would otherwise learn at every event. */
const LEARNED_SHAPES = 16;

/** The event types a client may act on, returned only when every check of them passed (decision
 * D-TOOL-CALL-CHECKS). */
const CALLS: ReadonlySet<string> = new Set(
    [...life.FIELD_CHECKS].filter(([, checks]) => checks.some(([check]) => check === "declared-tool"))
        .map(([kind]) => kind),
);

/** The json-text checks, each with what the shapes of its field's texts are learned as. */
const JSON_TEXT: ReadonlyMap<FieldCheck, string> = new Map(
    [...life.FIELD_CHECKS].flatMap(([kind, checks]) => checks.filter(([check]) => check === "json-text")
        .map((entry): [FieldCheck, string] => [entry, `${kind} ${entry[1]}`])),
);

/** Field checks that compare an event with the one before, run only with the lifecycle. */
const ORDERED_CHECKS: ReadonlySet<string> = new Set(["non-decreasing"]);

/** The rule a stream breaks that does not begin with stream.start. */
const START_RULE = life.STREAM_VIOLATIONS.get(life.STREAM_INITIAL)?.get(life.UNREGISTERED_PLACE) as string;

/** The places of the events that end a stream. */
const LAST_PLACES: ReadonlySet<string> = new Set(
    [...life.STREAM_TRANSITIONS.values()].flatMap((table) => [...table])
        .filter(([, target]) => target === life.STREAM_FINAL).map(([place]) => place),
);

/** The declared tool names: from names, or from the request's `tools` array. */
function toolNames(tools: Iterable<string | { readonly name: string }>): ReadonlySet<string> {
    if (typeof tools === "string") {
        throw new TypeError(`tools must be the declared tool names or the request's tools array, not one string: ${JSON.stringify(tools)}`);
    }
    const names = new Set<string>();
    for (const tool of tools) {
        const name: unknown = isObject(tool) ? member(tool, "name") : tool;
        if (typeof name !== "string") {
            throw new TypeError(`a declared tool is a name or an object with a string name, got ${JSON.stringify(tool)}`);
        }
        names.add(name);
    }
    return names;
}

function jsonKind(value: unknown): string {
    if (Array.isArray(value)) {
        return "an array";
    }
    return value === null ? "null" : typeof value === "string" ? "a string"
        : typeof value === "boolean" ? "a boolean" : "a number";
}

/** A value as a message quotes it. */
function quoted(value: unknown): string {
    return value === undefined ? "None" : JSON.stringify(value);
}

const encoder = new TextEncoder();

/** How many UTF-16 units of a block's fragments are kept as text before they are hashed. */
const JOIN_KEPT = 1 << 14;

/** The fragments of one block so far: their text joined while it is short, and once it is
 * longer, a hash of it, so that the memory a block takes stays bounded however long its
 * fragments run. Comparing the text is the hash's verdict without the hashing, which is most of
 * the work on tool calls streamed as fragments. */
class Joining {
    private text: string | null = "";
    private hash: Sha256 | null = null;

    constructor(
        readonly kind: string,
        readonly of: life.Fragments,
        /** The value of each of `of.carries` in the first fragment. */
        readonly carried: readonly unknown[],
    ) {}

    add(fragment: unknown): void {
        if (typeof fragment !== "string") {
            this.text = null; // its schema error is reported: the join is unknowable
            this.hash = null;
        } else if (this.hash !== null) {
            this.hash.update(encoder.encode(fragment));
        } else if (this.text !== null) {
            this.text += fragment;
            if (this.text.length > JOIN_KEPT) {
                this.hash = new Sha256().update(encoder.encode(this.text));
                this.text = "";
            }
        }
    }

    /** Whether the fragments joined are `whole`; true when that cannot be known. */
    addsUpTo(whole: unknown): boolean {
        if (this.text === null || typeof whole !== "string") {
            return true;
        }
        if (this.hash === null) {
            return this.text === whole;
        }
        return this.hash.hexDigest() === new Sha256().update(encoder.encode(whole)).hexDigest();
    }
}

/**
 * Decode one LLM-Stream response body incrementally. Every problem becomes a `Diagnostic` in
 * `diagnostics`, carrying the rule it breaks and the line it is on; events that fail their
 * schema are reported and not returned.
 */
export class Decoder {
    /**
     * A decoder and a join that live as long as the module. V8 forgets the optimized code of the
     * decoder's methods at a full collection in which no object of a class they use is alive,
     * because the hidden classes that code was made for die with the last such object; a
     * program that decodes stream after stream, with collections between them, would compile
     * those methods again after each. These keep the hidden classes alive.
     */
    private static readonly residents: readonly object[] = [
        new Decoder(), new Joining("", { event: "", field: "", carries: [], unlessStopReason: null, rule: "" }, []),
    ];

    readonly diagnostics: Diagnostic[] = [];
    readonly strict: boolean;
    readonly tools: ReadonlySet<string> | null;
    readonly requestMetadata: Readonly<Record<string, unknown>> | null;
    readonly lifecycle: boolean;
    private readonly isValid: (instance: unknown) => boolean;
    private readonly errors: (instance: unknown) => SchemaError[];
    private readonly validates: boolean;
    private readonly sse: SSEDecoder;
    private state = life.STREAM_INITIAL;
    private first = true;
    private expectedSeq = 0;
    /** Where an end-of-body finding goes when no event came: line 1. */
    private lastLine = 1;
    /** The data and line of an event that is not JSON, which the next may complete. */
    private pending: { readonly data: string; readonly line: number } | null = null;
    private readonly maxBlocks: number;
    /** The last event, a stream.end, was rejected before the lifecycle could place it. */
    private endRejected = false;
    /** An event reached the lifecycle. */
    private placed = false;
    private readonly blocks = new Map<number, string>();
    private readonly blockKinds = new Map<number, string>();
    /** Event type limited per block: how many each block holds. */
    private readonly blockCounts = new Map<string, Map<number, number>>();
    private readonly counts = new Map<string, number>();
    /** The state of the field checks that remember, by the check (an entry of FIELD_CHECKS). */
    private readonly seen = new Map<FieldCheck, Set<unknown>>();
    private readonly lastValue = new Map<FieldCheck, number>();
    /** Block index: the event type whose stop_reason its content.stop must carry. */
    private readonly closesWith = new Map<number, string>();
    /** Block index: the event that completed it. */
    private readonly completed = new Map<number, string>();
    /** Block index: its fragments so far. */
    private readonly joining = new Map<number, Joining>();
    /** Blocks that hold an event built by fragments. */
    private readonly built = new Set<number>();
    private readonly steady = new Map<number, Steady>();
    private failed = false;
    private closed = false;
    /** How many more texts this decoder may learn a shape from (`learnShape`). */
    private learning = LEARNED_SHAPES;

    constructor(options: DecoderOptions = {}) {
        this.strict = options.strict ?? false;
        this.tools = options.tools == null ? null : toolNames(options.tools);
        this.requestMetadata = options.requestMetadata ?? null;
        this.lifecycle = options.lifecycle ?? true;
        this.validates = options.validate ?? true;
        this.isValid = this.validates ? isValidEvent : isValidEnvelope;
        this.errors = this.validates ? validateEvent : validateEnvelope;
        this.sse = new SSEDecoder({ maxLineBytes: options.maxLineBytes, maxEventBytes: options.maxEventBytes }, EVENT_TYPES);
        this.maxBlocks = options.maxBlocks ?? 4096;
        if (!Number.isInteger(this.maxBlocks) || this.maxBlocks < 1) {
            throw new RangeError(`maxBlocks must be a whole number from 1, got ${this.maxBlocks}`);
        }
    }

    /** Decode the bytes that arrived; returns the events they completed, in order. */
    feed(chunk: Uint8Array): DecodedEvent[] {
        if (this.closed) {
            throw new Error("feed() after close()");
        }
        return this.events(this.sse.feed(chunk));
    }

    /** End of body: report an unfinished stream and return any last events. */
    close(): DecodedEvent[] {
        if (this.closed) {
            return [];
        }
        this.closed = true;
        this.sse.close(); // an event still open is discarded, so none comes out
        this.drainSSE(null);
        this.flushPending();
        const rule = this.lifecycle ? life.STREAM_UNFINISHED.get(this.state) : undefined;
        if (rule !== undefined) {
            if (!this.placed) {
                this.report(START_RULE, this.lastLine, "the body ended before stream.start");
            }
            if (!this.endRejected) { // else that rejection is the finding
                this.report(rule, this.lastLine, "the body ended without stream.end");
            }
        }
        return [];
    }

    /**
     * The events of a whole body, as they arrive: the body of a `fetch` response, or any
     * `ReadableStream` of bytes. The decoder is closed at the end of the body; when the caller
     * stops early, the stream is cancelled.
     */
    async *stream(body: ReadableStream<Uint8Array>): AsyncGenerator<DecodedEvent, void, undefined> {
        const reader = body.getReader();
        let finished = false;
        try {
            for (;;) {
                const { done, value } = await reader.read();
                if (done) {
                    break;
                }
                yield* this.feed(value);
            }
            finished = true;
        } finally {
            if (!finished) {
                await reader.cancel();
            }
            reader.releaseLock();
        }
        yield* this.close();
    }

    /** No error so far (warnings do not count). */
    get conforming(): boolean {
        return !this.diagnostics.some((d) => d.severity === "error");
    }

    // -- layers ---------------------------------------------------------------------------------

    /**
     * Report the SSE layer's findings on lines up to `through` (all when null), just before the
     * first event starting after them, so that they take the same place among the other
     * diagnostics however the body is cut into chunks.
     */
    private drainSSE(through: number | null): void {
        const found = this.sse.diagnostics;
        let taken = found.length;
        if (through !== null) {
            taken = 0;
            while (taken < found.length && found[taken].line <= through) {
                taken += 1;
            }
        }
        for (const diagnostic of found.splice(0, taken)) {
            this.add(diagnostic);
        }
    }

    /**
     * The hot loop. An event's text of a shape seen before is read without the JSON parser
     * (`readShape`), and is then known to be within the limits and to write no member name
     * twice; any other is parsed, and its shape learned. A valid event that continues an open
     * block in the expected order changes nothing but the next seq, so it skips the general
     * path: `steady` maps the index of each such block to what its events are. Its envelope is
     * checked inline: v is the version, and seq is the next seq, which makes it an integer in
     * range so long as that is above 1 and at most the largest.
     */
    private events(sseEvents: readonly SSEEvent[]): DecodedEvent[] {
        const out: DecodedEvent[] = [];
        const sseFound = this.sse.diagnostics;
        const steadyBlocks = this.steady;
        try {
            for (let i = 0; i < sseEvents.length; i++) {
                const { type, data, line } = sseEvents[i];
                if (sseFound.length > 0) {
                    this.drainSSE(line);
                }
                let parsed: unknown = NOT_PARSED;
                let sound = false;
                if (this.pending === null) {
                    parsed = readShape(type, data) ?? NOT_PARSED;
                    sound = parsed !== NOT_PARSED;
                    if (!sound) {
                        parsed = attempt(data); // the general path says why one is refused
                        if (this.learning > 0 && !(parsed instanceof Refused) && isObject(parsed)
                            && life.PLACES.has(type)) {
                            this.learning -= 1;
                            learnShape(type, data, true);
                        }
                    }
                    const event = parsed as Json;
                    const steady = steadyBlocks.size > 0 && typeof parsed === "object" && parsed !== null
                        ? steadyBlocks.get(event.index as number) : undefined;
                    if (steady !== undefined) {
                        const expected = this.expectedSeq;
                        if (steady.kind === type && event.type === type && event.seq === expected
                            && event.v === life.ENVELOPE_VERSION && expected > 1 && expected <= life.SEQ_MAX
                            && (steady.check === null || steady.check(event)) && (sound || duplicateName(data, event) === null)) {
                            this.expectedSeq = expected + 1;
                            steady.joining?.add(member(event, steady.joining.of.field));
                            out.push(event as DecodedEvent);
                            continue;
                        }
                    }
                }
                const event = this.general(type, data, line, parsed, sound);
                if (event !== null) {
                    out.push(event);
                }
            }
        } catch (error) {
            if (error instanceof LLMStreamError) {
                error.events = out;
            }
            throw error;
        }
        if (sseEvents.length > 0) {
            this.lastLine = sseEvents[sseEvents.length - 1].line;
        }
        return out;
    }

    private general(sseType: string, data: string, line: number, parsed: unknown, sound: boolean): DecodedEvent | null {
        const obj = this.parse(data, line, parsed, sound);
        const kind = obj === null ? undefined : obj.type;
        if (typeof kind !== "string") {
            this.unplaced(sseType);
        }
        if (obj === null) {
            return null;
        }
        const before = this.diagnostics.length;
        const event = this.event(obj, sseType, line);
        if (event !== null && this.diagnostics.length > before && typeof kind === "string" && CALLS.has(kind)
            && this.diagnostics.slice(before).some((d) => d.severity === "error")) {
            return null; // a tool call a check refused is not one to make
        }
        return event;
    }

    /** An event the lifecycle cannot place: when its event: line says it ends the stream, its
     * rejection is the finding, not a stream that then ended without one. */
    private unplaced(sseType: string): void {
        const place = life.PLACES.get(sseType);
        if (this.lifecycle && place !== undefined && LAST_PLACES.has(place)) {
            this.endRejected = true;
            this.steady.clear(); // so that whatever follows reaches the lifecycle
        }
    }

    /** The event's JSON object, joining an envelope split across two events (LS-SSE-3). */
    private parse(data: string, line: number, parsed: unknown, sound: boolean): Json | null {
        const obj = parsed === NOT_PARSED ? attempt(data) : parsed;
        if (obj instanceof Refused) {
            const error = obj.error;
            if (error instanceof JSONLimitError) {
                this.flushPending();
                this.expectedSeq += 1;
                this.report(error.rule, line, `data is refused: ${error.message}`);
                return null;
            }
            const pending = this.pending;
            if (pending === null) {
                this.pending = { data, line };
                return null;
            }
            this.pending = null;
            const text = `${pending.data}\n${data}`;
            let joined: unknown;
            try {
                joined = loads(text);
            } catch {
                this.notJson(pending.data, pending.line);
                this.pending = { data, line };
                return null;
            }
            if (isObject(joined)) {
                this.report("LS-SSE-3", pending.line, "one JSON envelope is split across "
                    + `the events at lines ${pending.line} and ${line}`);
                return this.unique(text, joined, line);
            }
            this.notJson(pending.data, pending.line);
            this.notJson(data, line);
            return null;
        }
        this.flushPending();
        if (!isObject(obj)) {
            this.expectedSeq += 1;
            this.report("LS-SSE-2", line, `data must be one JSON object, got ${jsonKind(obj)}`);
            return null;
        }
        return sound ? obj : this.unique(data, obj, line);
    }

    /** The object, unless a member name is written twice in it (decision D-DUPLICATE-KEYS). */
    private unique(text: string, obj: Json, line: number): Json | null {
        const name = duplicateName(text, obj);
        if (name === null) {
            return obj;
        }
        this.expectedSeq += 1;
        this.report("LS-SSE-6", line, `data has the member name ${JSON.stringify(name)} twice in one `
            + "object: every member name must be unique");
        return null;
    }

    private flushPending(): void {
        if (this.pending !== null) {
            this.notJson(this.pending.data, this.pending.line);
            this.pending = null;
        }
    }

    private notJson(data: string, line: number): void {
        this.expectedSeq += 1;
        const preview = data.length <= 60 ? data : `${data.slice(0, 57)}...`;
        this.report("LS-SSE-2", line, `data is not one complete JSON object: ${JSON.stringify(preview)}`);
    }

    /** Whether a member is an integer: any integral number, however written (decision
     * D-INTEGERS), which JSON.parse already reads as the integer it equals. */
    private isInt(value: unknown): value is number {
        return Number.isInteger(value);
    }

    private event(obj: Json, sseType: string, line: number): DecodedEvent | null {
        const kind = obj.type;
        const registered = typeof kind === "string" && life.PLACES.has(kind);
        if (typeof kind === "string" && kind !== sseType) {
            this.report("LS-ENV-4", line, `the event: field is ${JSON.stringify(sseType)} but the JSON type is ${JSON.stringify(kind)}`);
        }
        let valid = this.isValid(obj);
        if (!valid) {
            const errors = this.errors(obj);
            for (const error of errors) {
                this.report(error.rule, line, error.message);
            }
            // an event whose only findings are warnings (LS-SEC-6, say) is returned
            valid = errors.every((error) => severity(error.rule) === "warning");
        }
        if (typeof kind === "string" && !registered) {
            this.report("LS-TYPE-1", line, `${JSON.stringify(kind)} is not a registered event type`);
        }
        if (this.lifecycle) {
            if (typeof kind === "string") {
                this.sequence(obj, kind, line);
                this.lifecycleOf(obj, kind, line);
            } else {
                this.sequence(obj, "", line);
            }
        } else if (typeof kind === "string") {
            this.fieldChecks(obj, kind, line);
        }
        return valid ? (obj as DecodedEvent) : null;
    }

    private sequence(obj: Json, kind: string, line: number): void {
        const seq = obj.seq;
        if (!this.isInt(seq)) {
            this.expectedSeq += 1;
            return;
        }
        if (this.first && life.PLACES.get(kind) === "first") {
            if (seq !== 0) {
                this.report("LS-SEQ-1", line, `stream.start must have seq 0, got ${seq}`);
            }
        } else if (seq !== this.expectedSeq) {
            this.report("LS-SEQ-2", line, `seq is ${seq}, expected ${this.expectedSeq}`);
        }
        this.first = false;
        this.expectedSeq = seq + 1;
    }

    private lifecycleOf(obj: Json, kind: string, line: number): void {
        this.placed = true;
        this.endRejected = false;
        const place = life.PLACES.get(kind) ?? life.UNREGISTERED_PLACE;
        const state = this.state;
        const target = life.STREAM_TRANSITIONS.get(state)?.get(place);
        if (target === undefined) {
            const rule = life.STREAM_VIOLATIONS.get(state)?.get(place) as string;
            const why = (life.STREAM_STATES.get(state) ?? "").replace(/\.$/, "").toLowerCase();
            this.report(rule, line, `${kind} is not allowed in state ${state} (${why})`);
            this.fieldChecks(obj, kind, line); // a tool call out of place is checked all the same
            return;
        }
        if (target !== state) {
            this.state = target;
            this.steady.clear();
        }
        if (target === life.FAILED_STATE) {
            this.failed = true;
        }
        if (life.EXPECTED.has(kind)) { // counted only where a minimum is checked: bounded state
            this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
        }
        if (place === "block" || place === "block-end") {
            this.block(obj, kind, place, line);
        }
        this.fieldChecks(obj, kind, line);
        if (target === life.STREAM_FINAL) {
            this.atEnd(line);
        }
    }

    private block(obj: Json, kind: string, place: string, line: number): void {
        const index = obj.index;
        if (!this.isInt(index)) {
            return;
        }
        let state = this.blocks.get(index);
        if (state === undefined) {
            if (this.blocks.size >= this.maxBlocks) {
                this.report("LS-LIMIT-5", line, `block ${index} is one more than the ${this.maxBlocks} blocks a stream may open`);
                return;
            }
            state = life.BLOCK_INITIAL;
        }
        const target = life.BLOCK_TRANSITIONS.get(state)?.get(place);
        if (target === undefined) {
            const rule = life.BLOCK_VIOLATIONS.get(state)?.get(place) as string;
            const what = place === "block" ? "content" : "a second content.stop";
            this.report(rule, line, `${what} for block ${index} after its content.stop`);
            return;
        }
        this.blocks.set(index, target);
        if (target !== state) {
            this.steady.delete(index);
        }
        if (place === "block") {
            const blockKind = life.BLOCK_KINDS.get(kind);
            let established: string | undefined;
            if (blockKind !== undefined) {
                established = this.blockKinds.get(index);
                if (established === undefined) {
                    established = blockKind;
                    this.blockKinds.set(index, blockKind);
                }
                if (established !== blockKind) {
                    this.report(life.BLOCK_KIND_RULE, line, `${kind} in block ${index}, which holds ${established} content`);
                } else {
                    this.inOrder(obj, kind, index, line);
                }
            }
            const limit = life.PER_BLOCK.get(kind);
            if (limit !== undefined) {
                let counts = this.blockCounts.get(kind);
                if (counts === undefined) {
                    counts = new Map();
                    this.blockCounts.set(kind, counts);
                }
                const count = (counts.get(index) ?? 0) + 1;
                counts.set(index, count);
                if (count > limit) {
                    this.report(life.BLOCK_KIND_RULE, line, `block ${index} holds ${count} ${kind} events, at most ${limit}`);
                }
            }
            if (life.CLOSES_WITH.has(kind)) {
                this.closesWith.set(index, kind);
            } else if (STEADY_KINDS.has(kind) && established === blockKind && !this.completed.has(index)
                && life.STREAM_TRANSITIONS.get(this.state)?.get("block") === this.state) {
                // Fragments, only while their join is open and the event they build has not come.
                const joining = life.FRAGMENTS.has(kind) ? this.joining.get(index) ?? null : null;
                if (joining !== null ? !this.built.has(index) : !life.FRAGMENTS.has(kind)) {
                    const check = this.validates ? EVENT_CHECKS.get(kind) ?? null : null;
                    this.steady.set(index, { kind, check, joining });
                }
            }
        } else {
            const reason = member(obj, "stop_reason");
            const holder = this.closesWith.get(index);
            const wanted = holder === undefined ? reason : life.CLOSES_WITH.get(holder);
            if (!jsonEqual(reason ?? null, wanted ?? null)) {
                this.report(life.CLOSES_WITH_RULE, line, `block ${index} holds a ${holder}, so it closes `
                    + `with stop_reason ${quoted(wanted)}, not ${quoted(reason)}`);
            }
            const joining = this.joining.get(index);
            if (joining !== undefined) {
                this.joining.delete(index);
                const unless = joining.of.unlessStopReason;
                if (!jsonEqual(reason ?? null, unless)) {
                    const cut = unless !== null ? ` (only one cut off with stop_reason ${quoted(unless)} may)` : "";
                    this.report(joining.of.rule, line, `block ${index} holds ${joining.kind} fragments `
                        + `but no ${joining.of.event}${cut}`);
                }
            }
        }
    }

    /** The order within a block: nothing after the event that completes it, and fragments that
     * add up to the event they build (`COMPLETES_BLOCK`, `FRAGMENTS`). */
    private inOrder(obj: Json, kind: string, index: number, line: number): void {
        const completed = this.completed.get(index);
        if (completed !== undefined && kind !== completed) {
            this.report(life.COMPLETES_BLOCK.get(completed) as string, line, `${kind} in block ${index} after its ${completed}`);
        } else if (life.COMPLETES_BLOCK.has(kind)) {
            this.completed.set(index, kind);
            this.steady.delete(index);
        }
        const fragments = life.FRAGMENTS.get(kind);
        if (fragments !== undefined) {
            this.fragment(obj, kind, fragments, index, line);
        } else if (BUILT_BY.has(kind)) {
            this.build(obj, kind, index, line);
        }
    }

    private fragment(obj: Json, kind: string, fragments: life.Fragments, index: number, line: number): void {
        if (this.built.has(index)) {
            this.report(fragments.rule, line, `${kind} in block ${index} after its ${fragments.event}`);
            return;
        }
        let joining = this.joining.get(index);
        if (joining === undefined) {
            const carried = fragments.carries.map((name) => member(obj, name));
            if (carried.some((value) => value == null)) {
                const missing = fragments.carries.filter((_, i) => carried[i] == null);
                this.report(fragments.rule, line, `the first ${kind} of block ${index} carries no ${missing.join(" and no ")}`);
            }
            joining = new Joining(kind, fragments, carried);
            this.joining.set(index, joining);
        }
        joining.add(member(obj, fragments.field));
    }

    /** The event that the fragments of its block, if any, add up to. */
    private build(obj: Json, kind: string, index: number, line: number): void {
        this.built.add(index);
        this.steady.delete(index); // its fragments are over
        const joining = this.joining.get(index);
        if (joining === undefined) {
            return;
        }
        this.joining.delete(index);
        const { field, rule } = joining.of;
        if (!joining.addsUpTo(member(obj, field))) {
            this.report(rule, line, `${kind} ${field} is not its ${joining.kind} fragments joined in order`);
        }
        for (let i = 0; i < joining.carried.length; i++) {
            const name = joining.of.carries[i];
            const carried = joining.carried[i];
            const value = member(obj, name);
            if (typeof carried === "string" && value !== carried) {
                this.report(rule, line, `${kind} ${name} is ${quoted(value)}, but its ${joining.kind} `
                    + `fragments carry ${quoted(carried)}`);
            }
        }
    }

    /** The checks beyond the schema of an event's fields; those that compare it with the events
     * before it only with the lifecycle. */
    private fieldChecks(obj: Json, kind: string, line: number): void {
        const checks = life.FIELD_CHECKS.get(kind);
        if (checks !== undefined) {
            for (const entry of checks) {
                if (this.lifecycle || !ORDERED_CHECKS.has(entry[0])) {
                    this.fieldCheck(entry, kind, member(obj, entry[1]), line);
                }
            }
        }
    }

    private fieldCheck(entry: FieldCheck, kind: string, value: unknown, line: number): void {
        const [check, field, rule] = entry;
        if (check === "json-text") {
            const of = JSON_TEXT.get(entry) as string;
            if (typeof value === "string" && !isShaped(of, value)) {
                try {
                    loads(value);
                } catch {
                    this.report(rule, line, `${kind} ${field} is not JSON text`);
                    return;
                }
                if (this.learning > 0) {
                    this.learning -= 1;
                    learnShape(of, value, false);
                }
            }
        } else if (check === "unique") {
            let seen = this.seen.get(entry);
            if (seen === undefined) {
                seen = new Set();
                this.seen.set(entry, seen);
            }
            if (typeof value === "string" || this.isInt(value)) {
                if (seen.has(value)) {
                    this.report(rule, line, `${kind} ${field} ${quoted(value)} is used twice`);
                } else if (seen.size >= this.maxBlocks) {
                    this.report("LS-LIMIT-5", line, `${kind} ${field} ${quoted(value)} is one more than the ${this.maxBlocks} a stream may carry`);
                } else {
                    seen.add(value);
                }
            }
        } else if (check === "declared-tool") {
            if (this.tools !== null && typeof value === "string" && !this.tools.has(value)) {
                const declared = [...this.tools].sort().join(", ") || "none";
                this.report(rule, line, `tool ${quoted(value)} was not declared (declared: ${declared})`);
            }
        } else if (check === "echoes-request-metadata") {
            const wanted = this.requestMetadata === null ? undefined : member(this.requestMetadata, field);
            if (wanted != null && !jsonEqual(value ?? null, wanted)) {
                const found = value == null ? `carries no ${field}` : `${field} is ${quoted(value)}`;
                this.report(rule, line, `${kind} ${found}, but should echo the request's ${field} ${quoted(wanted)}`);
            }
        } else if (check === "non-decreasing" && this.isInt(value)) {
            const last = this.lastValue.get(entry);
            if (last !== undefined && value < last) {
                this.report(rule, line, `${kind} ${field} fell from ${last} to ${value}; usage events carry running totals`);
            }
            this.lastValue.set(entry, value);
        }
    }

    private atEnd(line: number): void {
        if (!(this.failed && life.UNFINISHED_BLOCKS_AFTER_FAILURE_ALLOWED)) {
            const unfinished: number[] = []; // sorted, few as they are, rather than every block
            for (const [index, state] of this.blocks) {
                if (life.BLOCK_UNFINISHED.has(state)) {
                    unfinished.push(index);
                }
            }
            for (const index of unfinished.sort((a, b) => a - b)) {
                const rule = life.BLOCK_UNFINISHED.get(this.blocks.get(index) as string) as string;
                this.report(rule, line, `block ${index} was never closed by content.stop`);
            }
        }
        for (const [kind, [minimum, rule]] of life.EXPECTED) {
            const count = this.counts.get(kind) ?? 0;
            if (count < minimum) {
                this.report(rule, line, `the stream carried ${count} ${kind} event(s), expected at least ${minimum}`);
            }
        }
    }

    // -- reporting ------------------------------------------------------------------------------

    private report(rule: string, line: number, message: string): void {
        this.add({ rule, line, message, severity: severity(rule) });
    }

    private add(diagnostic: Diagnostic): void {
        this.diagnostics.push(diagnostic);
        if (this.strict && diagnostic.severity === "error") {
            throw new LLMStreamError(diagnostic);
        }
    }
}

