/**
 * Layer 1 of the decoder (draft section 5.1): bytes to Server-Sent Events, sans-IO.
 *
 * The rules are WHATWG HTML's "event stream interpretation", to the letter, with the limits and
 * diagnostics of the Python bindings' SSE layer: a line longer than `maxLineBytes` (LS-LIMIT-1)
 * or an event with more than `maxEventBytes` of data (LS-LIMIT-2) is reported and its event
 * dropped, a line that is not UTF-8 is read with U+FFFD and reported (LS-SSE-1), and a body that
 * ends inside an event says so (LS-SSE-5). Line numbers count from the top of the body. Whatever
 * the chunking, the events and the diagnostics are the same.
 *
 * A chunk's complete lines are decoded in one call and, when they are valid UTF-8 and short
 * enough that no limit can be reached, read as text; only otherwise are they taken one by one as
 * bytes. The bytes of an unterminated last line wait in a buffer of the decoder's own, and so
 * do the lines of an event whose blank line has not come (when they hold no CR), as the Python
 * layer holds them back: the next chunk's lines are copied after them, so that an event cut
 * anywhere is still decoded in one call and read whole.
 */

import type { Diagnostic, Severity } from "./diagnostics.js";

/** One dispatched event, with the line it starts on so that later layers can point at it. */
export interface SSEEvent {
    readonly type: string;
    readonly data: string;
    readonly id: string;
    readonly retry: number | null;
    readonly line: number;
}

export interface SSELimits {
    /** The longest line, in bytes (1 MiB by default). */
    readonly maxLineBytes?: number;
    /** The most data one event may carry, in bytes (8 MiB by default). */
    readonly maxEventBytes?: number;
}

const LF = 10;
const CR = 13;
const COLON = 58;
const BOM = [0xef, 0xbb, 0xbf];
/** A larger chunk is taken in slices of this size, so that the work on one stays bounded. */
const SLICE = 1 << 16;
const EMPTY = new Uint8Array(0);
/** Lines of at least this many bytes are long text for decoding (`SSEDecoder.decode`). */
const LONG = 1024;

/** A CR that is not the start of a CRLF. */
const LONE_CR = /\r(?!\n)/;

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** ICU's converter, used only as a stream (see `SSEDecoder.decode`), and made when first
 * needed. Every decoder shares it: it is given complete lines only, which end on a character
 * boundary, so it holds nothing back from one call to the next. */
let streaming: TextDecoder | null = null;
/** The last long run of lines that a decoder read as text was ASCII. */
let lastLongWasAscii = true;
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

function concat(one: Uint8Array, two: Uint8Array): Uint8Array {
    const joined = new Uint8Array(one.length + two.length);
    joined.set(one);
    joined.set(two, one.length);
    return joined;
}

/** The last index of `byte` in `bytes` at or after `from`, or -1: a loop, which costs less than
 * a typed array's search (and the view that would need) when `byte` is near the end or the
 * bytes are few, as they are where this looks. */
function lastIndex(bytes: Uint8Array, byte: number, from: number): number {
    for (let i = bytes.length - 1; i >= from; i--) {
        if (bytes[i] === byte) {
            return i;
        }
    }
    return -1;
}

/** The first line end (LF or CR) at or after `from`, or -1. */
function lineEnd(bytes: Uint8Array, from: number): number {
    const lf = bytes.indexOf(LF, from);
    const cr = bytes.subarray(from, lf < 0 ? bytes.length : lf).indexOf(CR);
    return cr < 0 ? lf : from + cr;
}

/** The event type written in `text` from `from` to `end`: the string of `known` it is, when
 * it is one, so that the layers after compare it and look it up as the same string, its hash
 * computed once, rather than as a copy of it each time; else a copy. Nothing a stream sends is
 * kept beyond its events. */
function typeAt(text: string, from: number, end: number, known: readonly string[]): string {
    const length = end - from;
    for (let i = 0; i < known.length; i++) {
        const type = known[i];
        if (type.length === length && text.startsWith(type, from)) {
            return type;
        }
    }
    return text.slice(from, end);
}

function utf8Length(text: string): number {
    let length = text.length;
    for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 0x80) {
            // Two bytes up to U+07FF, three for the rest of the BMP, four for a surrogate pair.
            length += code < 0x800 || (code >= 0xd800 && code < 0xe000) ? 1 : 2;
        }
    }
    return length;
}

/**
 * Turns the bytes of a `text/event-stream` body into events, in any chunking. Problems go to
 * `diagnostics` rather than throwing, because a checker must see every one of them and a client
 * usually still wants the events that are intact.
 */
export class SSEDecoder {
    readonly diagnostics: Diagnostic[] = [];
    private readonly maxLine: number;
    private readonly maxEvent: number;
    /** A run of complete lines no longer than this can reach no limit. */
    private readonly fastMax: number;
    private closed = false;
    /** Bytes held back until we know whether the body starts with a BOM; null once we do. */
    private head: Uint8Array | null = EMPTY;
    /** The previous chunk ended in CR, so an LF at the start of this one ends no line. */
    private skipLF = false;
    /** Length so far of an over-long line being skipped, -1 when there is none. */
    private overlong = -1;
    private overlongComment = false;
    /** The bytes held back, the first `held` of `buffer`: `pending` bytes of complete lines,
     * with no CR and no blank line, then the unterminated last line. */
    private buffer = EMPTY;
    private held = 0;
    private pending = 0;
    /** Lines completed so far. */
    private lines = 0;
    // WHATWG's buffers, and what the limits and diagnostics need to know about them.
    private type = "";
    private data: string[] = [];
    /** Bytes of data so far, counting the LF after each line: exact once `exact`, before that
     * an upper bound (three bytes a UTF-16 unit), which spares counting until it matters. */
    private size = 0;
    private exact = false;
    private id = "";
    private retry: number | null = null;
    /** The current event's first line that is not a comment. */
    private start = 1;
    /** The current event lost a line to a limit and will be dropped. */
    private spoiled = false;

    /** `types`: the event types the caller looks up, each given as that string when read. */
    constructor(limits: SSELimits = {}, private readonly types: readonly string[] = []) {
        this.maxLine = limits.maxLineBytes ?? 1 << 20;
        this.maxEvent = limits.maxEventBytes ?? 8 << 20;
        this.fastMax = Math.min(this.maxLine, this.maxEvent + 1);
    }

    /** Take the next chunk of the body; return the events it completes. */
    feed(chunk: Uint8Array): SSEEvent[] {
        const events: SSEEvent[] = [];
        if (this.closed) {
            throw new Error("SSEDecoder.feed() called after close()");
        }
        if (this.head === null && !this.skipLF && this.overlong < 0 && this.held === 0
            && chunk[chunk.length - 1] === LF && chunk.length <= SLICE) {
            this.apply(chunk, events); // the commonest chunk: whole lines
            return events;
        }
        if (chunk.length <= SLICE) {
            this.feedSlice(chunk, events);
            return events;
        }
        for (let at = 0; at < chunk.length; at += SLICE) {
            this.feedSlice(chunk.subarray(at, at + SLICE), events);
        }
        return events;
    }

    /** End the body. An event still open is discarded (WHATWG), so this returns no events. */
    close(): SSEEvent[] {
        if (this.closed) {
            return [];
        }
        this.closed = true;
        if (this.head !== null && this.head.length > 0) {
            this.append(this.head);
        }
        if (this.overlong >= 0) {
            this.endOverlong();
        } else {
            if (this.pending > 0) {
                this.apply(this.buffer.subarray(0, this.pending), []); // no blank line: no event
            }
            if (this.held > this.pending) {
                // WHATWG drops an unterminated line unread; it is read only to report on it.
                this.checkedLine(this.buffer.subarray(this.pending, this.held), this.lines + 1);
            }
        }
        if (!this.spoiled && (this.data.length > 0 || this.type !== "")) {
            this.report(
                "LS-SSE-5",
                this.start,
                `the body ends inside the event starting at line ${this.start}, with no blank `
                    + "line after it, so the event was discarded",
                "warning",
            );
        }
        return [];
    }

    private feedSlice(data: Uint8Array, events: SSEEvent[]): void {
        if (this.head !== null) {
            data = this.head.length === 0 ? data : concat(this.head, data);
            if (data.length < 3 && data.every((byte, i) => byte === BOM[i])) {
                this.head = data;
                return;
            }
            this.head = null;
            if (data[0] === BOM[0] && data[1] === BOM[1] && data[2] === BOM[2]) {
                data = data.subarray(3);
            }
        }
        if (this.skipLF && data.length > 0) {
            this.skipLF = false;
            if (data[0] === LF) {
                data = data.subarray(1);
            }
        }
        if (this.overlong >= 0) {
            data = this.skipOverlong(data);
        }
        let end = lastIndex(data, LF, 0);
        const cr = lastIndex(data, CR, end + 1); // a CR before the last LF ends no later line
        if (cr >= 0) {
            end = cr;
        }
        if (end < 0) {
            if (data.length > 0) {
                this.hold(data, events);
            }
            return;
        }
        let region = end + 1 === data.length ? data : data.subarray(0, end + 1);
        if (end + 1 === data.length && data[end] === CR) {
            this.skipLF = true;
        }
        // The lines after the last blank line wait for the rest of their event, unless one holds
        // a CR or they are many. A blank line written with LFs ends an event however the lines
        // before it end, so only the lines held need to be free of CR (the lines read now may
        // hold one: searching them for it would cost more than reading them).
        let now = this.eventEnd(region);
        if (this.held + region.length - now > SLICE || lastIndex(region, CR, now) >= 0) {
            now = region.length;
        }
        const later = now === region.length ? EMPTY : region.subarray(now);
        if (now < region.length) {
            region = region.subarray(0, now);
        }
        if (region.length > 0) {
            if (this.held > 0) {
                // The lines held back are read with those of this chunk.
                this.append(region);
                region = this.buffer.subarray(0, this.held);
                this.held = 0;
                this.pending = 0;
            }
            this.apply(region, events);
            if (this.buffer.length > 2 * SLICE) {
                this.buffer = EMPTY; // after a long line, not kept for the short ones
            }
        }
        if (later.length > 0) {
            this.append(later);
            this.pending = this.held;
        }
        if (end + 1 < data.length) {
            this.hold(data.subarray(end + 1), events);
        }
    }

    /** Where the lines of `region` (complete) that finish an event end: just after the LF of
     * its last blank line written with LFs, or 0 when it has none; the region's end when a line
     * after that one ends with CRLF, since no line with a CR is held. */
    private eventEnd(region: Uint8Array): number {
        for (let i = region.length - 1; i >= 0; i--) {
            if (region[i] !== LF) {
                continue;
            }
            // Before the region is a line end, or the start of the body, unless a line is held.
            if (i > 0 ? region[i - 1] === LF : this.held === this.pending) {
                return i + 1;
            }
            if (i > 0 && region[i - 1] === CR) {
                return region.length;
            }
        }
        return 0;
    }

    /** Add bytes after those held, in a buffer that grows as needed. */
    private append(bytes: Uint8Array): void {
        const needed = this.held + bytes.length;
        if (needed > this.buffer.length) {
            const grown = new Uint8Array(Math.max(needed, 2 * this.buffer.length, 256));
            grown.set(this.buffer.subarray(0, this.held));
            this.buffer = grown;
        }
        this.buffer.set(bytes, this.held);
        this.held = needed;
    }

    /** Apply complete lines: as text when they are UTF-8 and short enough that no limit can be
     * reached, else one by one as bytes, each checked and reported. */
    private apply(region: Uint8Array, events: SSEEvent[]): void {
        const text = region.length <= this.fastMax ? this.decode(region) : null;
        if (text === null) {
            this.checked(region, events);
        } else {
            this.text(text, events);
        }
    }

    /**
     * Complete lines as text, or null when they are not UTF-8. Node has two UTF-8 decoders: the
     * one-call path, fastest on ASCII and on short text, and ICU's, used for a stream, twice as
     * fast on long text that is not ASCII. Complete lines end on a character boundary, so both
     * give the same text; a long run of lines takes the one that suited the last long run that
     * any decoder read, so that each of many short streams starts with the right one.
     */
    private decode(region: Uint8Array): string | null {
        const long = region.length >= LONG;
        const stream = long && !lastLongWasAscii;
        let text: string;
        try {
            if (stream) {
                streaming ??= new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
                text = streaming.decode(region, { stream: true });
            } else {
                text = strict.decode(region);
            }
        } catch {
            if (stream) {
                streaming = null;
            }
            return null;
        }
        if (long) {
            lastLongWasAscii = text.length === region.length;
        }
        return text;
    }

    /** Keep the start of an unterminated line, or start skipping it if it is too long (after
     * reading the lines held back before it). */
    private hold(data: Uint8Array, events: SSEEvent[]): void {
        const length = this.held - this.pending + data.length;
        if (length > this.maxLine) {
            if (this.pending > 0) {
                this.apply(this.buffer.subarray(0, this.pending), events);
            }
            this.overlong = length;
            this.overlongComment = (this.held > this.pending ? this.buffer[this.pending] : data[0]) === COLON;
            this.held = 0;
            this.pending = 0;
        } else {
            this.append(data);
        }
    }

    /** Drop the rest of an over-long line; return what follows its end. */
    private skipOverlong(data: Uint8Array): Uint8Array {
        let end = lineEnd(data, 0);
        if (end < 0) {
            this.overlong += data.length;
            return EMPTY;
        }
        this.overlong += end;
        this.endOverlong();
        if (data[end] === CR) {
            if (end + 1 === data.length) {
                this.skipLF = true;
            } else if (data[end + 1] === LF) {
                end += 1;
            }
        }
        return data.subarray(end + 1);
    }

    private endOverlong(): void {
        this.lines += 1;
        this.tooLong(this.lines, this.overlong, this.overlongComment);
        this.overlong = -1;
    }

    /** Report line `n`; unless it is a comment, its event cannot be whole, so drop it. */
    private tooLong(n: number, length: number, comment: boolean): void {
        this.report("LS-LIMIT-1", n, `line ${n} is ${length} bytes long, over the limit of ${this.maxLine}`);
        if (!comment) {
            this.spoil();
        } else if (this.start === n) {
            this.start = n + 1;
        }
    }

    private spoil(): void {
        this.spoiled = true;
        this.data = [];
        this.size = 0;
        this.exact = false;
    }

    private report(rule: string, line: number, message: string, severity: Severity = "error"): void {
        this.diagnostics.push({ rule, line, message, severity });
    }

    /**
     * Apply complete lines that are valid UTF-8 and within every limit. The usual event, an
     * `event:` line and one `data:` line (or the `data:` line alone), is taken whole.
     */
    private text(text: string, events: SSEEvent[]): void {
        // Lines that end with CRLF are read in place; a CR alone is a line end too, and then
        // every line end is made an LF first.
        let crlf = false;
        if (text.includes("\r")) {
            if (LONE_CR.test(text)) {
                text = text.replace(/\r\n?/g, "\n");
            } else {
                crlf = true;
            }
        }
        let n = this.lines;
        let at = 0;
        while (at < text.length) {
            const end = text.indexOf("\n", at);
            const stop = crlf && end > at && text.charCodeAt(end - 1) === CR ? end - 1 : end;
            if (n + 1 === this.start) {
                // Between events: the usual shapes skip the buffers.
                let type = "message";
                let dataAt = at;
                let dataEnd = end;
                let dataStop = stop;
                if (text.startsWith("event: ", at)) {
                    type = stop === at + 7 ? "message" : typeAt(text, at + 7, stop, this.types);
                    dataAt = end + 1;
                    dataEnd = text.indexOf("\n", dataAt);
                    dataStop = crlf && dataEnd > dataAt && text.charCodeAt(dataEnd - 1) === CR ? dataEnd - 1 : dataEnd;
                }
                const blank = text.charCodeAt(dataEnd + 1) === LF ? 1
                    : crlf && text.charCodeAt(dataEnd + 1) === CR && text.charCodeAt(dataEnd + 2) === LF ? 2 : 0;
                if (blank > 0 && text.startsWith("data: ", dataAt)) {
                    const data = text.slice(dataAt + 6, dataStop);
                    events.push({ type, data, id: this.id, retry: this.retry, line: n + 1 });
                    this.retry = null;
                    n += dataAt === at ? 2 : 3;
                    this.start = n + 1;
                    at = dataEnd + 1 + blank;
                    continue;
                }
            }
            n += 1;
            if (stop === at) {
                this.blank(n, events);
            } else {
                this.field(text.slice(at, stop), n);
            }
            at = end + 1;
        }
        this.lines = n;
    }

    /** Apply complete lines one by one, checking each for the limits and for UTF-8. */
    private checked(region: Uint8Array, events: SSEEvent[]): void {
        let n = this.lines;
        let at = 0;
        while (at < region.length) {
            const end = lineEnd(region, at);
            n += 1;
            if (end === at) {
                this.blank(n, events);
            } else {
                this.checkedLine(region.subarray(at, end), n);
            }
            at = end + 1;
            if (region[end] === CR && region[at] === LF) {
                at += 1;
            }
        }
        this.lines = n;
    }

    private checkedLine(raw: Uint8Array, n: number): void {
        if (raw.length > this.maxLine) {
            this.tooLong(n, raw.length, raw[0] === COLON);
            return;
        }
        let line: string;
        try {
            line = strict.decode(raw);
        } catch {
            // Replaced as WHATWG's decoder does: each maximal invalid subpart by one U+FFFD.
            line = lenient.decode(raw);
            this.report("LS-SSE-1", n, `line ${n} is not valid UTF-8; its invalid bytes were read as U+FFFD`);
        }
        this.field(line, n);
    }

    /** Apply the non-blank line `n`: a comment or a field. */
    private field(line: string, n: number): void {
        const colon = line.indexOf(":");
        if (colon === 0) {
            if (this.start === n) {
                this.start = n + 1;
            }
            return;
        }
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
        if (name === "data") {
            if (this.spoiled) {
                return;
            }
            this.data.push(value);
            this.size += (this.exact ? utf8Length(value) : 3 * value.length) + 1;
            if (this.size > this.maxEvent + 1 && !this.exact) {
                this.exact = true;
                this.size = this.data.reduce((sum, part) => sum + utf8Length(part) + 1, 0);
            }
            if (this.size > this.maxEvent + 1) {
                this.report(
                    "LS-LIMIT-2",
                    n,
                    `the event starting at line ${this.start} has more than ${this.maxEvent} `
                        + `bytes of data (the limit) by line ${n}, so it was discarded`,
                );
                this.spoil();
            }
        } else if (name === "event") {
            this.type = value;
        } else if (name === "id") {
            if (!value.includes("\0")) {
                this.id = value;
            }
        } else if (name === "retry" && /^[0-9]+$/.test(value)) {
            this.retry = Number(value);
        }
    }

    /** Dispatch the current event at the blank line `n`, if it has data and is whole. */
    private blank(n: number, events: SSEEvent[]): void {
        if (this.data.length > 0) {
            const data = this.data.length === 1 ? this.data[0] : this.data.join("\n");
            events.push({ type: this.type || "message", data, id: this.id, retry: this.retry, line: this.start });
            this.retry = null;
            this.data = [];
            this.size = 0;
            this.exact = false;
        }
        this.type = "";
        this.start = n + 1;
        this.spoiled = false;
    }
}

/** The UTF-8 bytes of a text: for callers that feed strings. */
export function utf8(text: string): Uint8Array {
    return encoder.encode(text);
}
