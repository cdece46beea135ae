/**
 * Events to the exact bytes of draft section 5.1: `event:` line, one `data:` line, blank line.
 *
 * The JSON is compact and keeps non-ASCII text as UTF-8, byte for byte what the Python bindings'
 * encoder writes for the same event; `Encoder` numbers the events of one stream, which is the one
 * thing a server gets wrong most easily.
 */

import { ENVELOPE_VERSION } from "./lifecycle.js";

const encoder = new TextEncoder();

function finite(_key: string, value: unknown): unknown {
    if (typeof value === "number" && !Number.isFinite(value)) {
        throw new RangeError(`${value} is not a JSON number`);
    }
    return value;
}

/** One complete event as it goes on the wire; the event's own v, seq and order are kept. */
export function encodeEvent(event: Readonly<Record<string, unknown>>): Uint8Array {
    const kind = event.type;
    if (typeof kind !== "string" || kind === "" || /[\r\n]/.test(kind)) {
        throw new TypeError(`an event needs a one-line string type, got ${JSON.stringify(kind)}`);
    }
    return encoder.encode(`event: ${kind}\ndata: ${JSON.stringify(event, finite)}\n\n`);
}

/** Numbers the events of one stream from 0 and encodes them (sans-IO: returns bytes). */
export class Encoder {
    seq = 0;

    /** Encode `event` with `v` and the next `seq` put first, replacing any it carried. */
    encode(event: Readonly<Record<string, unknown>>): Uint8Array {
        const { v: _v, seq: _seq, type, ...fields } = event;
        const data = encodeEvent({ v: ENVELOPE_VERSION, seq: this.seq, type, ...fields });
        this.seq += 1;
        return data;
    }

    /** Encode an event of type `kind` with `fields`: `encoder.event("usage", {...})`. */
    event(kind: string, fields: Readonly<Record<string, unknown>> = {}): Uint8Array {
        return this.encode({ ...fields, type: kind });
    }
}
