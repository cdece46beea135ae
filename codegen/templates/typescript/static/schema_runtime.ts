/**
 * What the generated validators call: JSON Schema's reading of types, equality and lengths, and
 * the words their messages use, the same as the Python validators'.
 */

export { jsonEqual as equal, isObject } from "./jsontext.js";
import { jsonEqual, isObject } from "./jsontext.js";

/** How a message names the JSON type of a value. */
export function kind(value: unknown): string {
    if (value === null) {
        return "null";
    }
    switch (typeof value) {
        case "boolean":
            return "a boolean";
        case "number":
            return Number.isInteger(value) ? "an integer" : "a number";
        case "string":
            return "a string";
        default:
            return Array.isArray(value) ? "an array" : isObject(value) ? "an object" : `a ${typeof value}`;
    }
}

/** A property name as a JSON pointer segment (RFC 6901). */
export function esc(key: string): string {
    return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** How a message names a value: its JSON pointer, or "the value" at the root. */
export function at(pointer: string): string {
    return pointer || "the value";
}

/** The length of a text in code points, as JSON Schema (and Python) count it. */
export function strlen(text: string): number {
    let length = text.length;
    for (let i = 0; i < text.length - 1; i++) {
        const code = text.charCodeAt(i);
        if (code >= 0xd800 && code < 0xdc00) {
            const next = text.charCodeAt(i + 1);
            if (next >= 0xdc00 && next < 0xe000) {
                length -= 1;
                i += 1;
            }
        }
    }
    return length;
}

/** True if value is JSON-equal to one of options. */
export function among(value: unknown, options: readonly unknown[]): boolean {
    return options.some((option) => jsonEqual(value, option));
}

function canonical(value: unknown): string {
    if (Array.isArray(value)) {
        return `[${value.map(canonical).join(",")}]`;
    }
    if (isObject(value)) {
        const keys = Object.keys(value).sort();
        return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
    }
    return JSON.stringify(value);
}

/** uniqueItems: no two items JSON-equal. */
export function unique(items: readonly unknown[]): boolean {
    return new Set(items.map(canonical)).size === items.length;
}

/** A finite double as an integer mantissa and a power of two: value = mantissa * 2 ** exponent. */
function decompose(value: number): [bigint, number] {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, value);
    const high = view.getUint32(0);
    const biased = (high >>> 20) & 0x7ff;
    let mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(view.getUint32(4));
    if (biased !== 0) {
        mantissa |= 1n << 52n;
    }
    return [value < 0 ? -mantissa : mantissa, (biased || 1) - 1075];
}

/**
 * True unless value is a multiple of a fractional divisor, as the Python validators decide it:
 * the quotient in floating point is integral; when it overflows, exactly.
 */
export function notMultiple(value: number, divisor: number): boolean {
    const quotient = value / divisor;
    if (Number.isFinite(quotient) || !Number.isFinite(value)) {
        return !Number.isInteger(quotient);
    }
    const [top, topExponent] = decompose(value);
    const [bottom, bottomExponent] = decompose(divisor);
    const shift = topExponent - bottomExponent;
    const numerator = shift >= 0 ? top << BigInt(shift) : top;
    const denominator = shift >= 0 ? bottom : bottom << BigInt(-shift);
    return numerator % denominator !== 0n;
}
