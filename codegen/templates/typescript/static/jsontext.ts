/**
 * Parsing JSON text exactly as JSON, and as the Python bindings do: the one parser every part of
 * the bindings uses.
 *
 * `JSON.parse` reads JSON as the standard says, with one leniency: a string may hold an unpaired
 * surrogate escape ("\ud800"), which is no Unicode text and which the Python bindings refuse, so
 * `loads` refuses it too. Such escapes are rare, so the value is walked only when the text holds
 * one.
 */

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** A lone surrogate: a high one not followed by a low one, or a low one without a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function wellFormed(value: unknown): boolean {
    if (typeof value === "string") {
        return !LONE_SURROGATE.test(value);
    }
    if (Array.isArray(value)) {
        return value.every(wellFormed);
    }
    if (value !== null && typeof value === "object") {
        return Object.entries(value).every(([key, member]) => wellFormed(key) && wellFormed(member));
    }
    return true;
}

/** Parse one JSON text; a SyntaxError when it is not JSON. */
export function loads(text: string): unknown {
    const value: unknown = JSON.parse(text);
    if (text.includes("\\u") && SURROGATE_ESCAPE.test(text) && !wellFormed(value)) {
        throw new SyntaxError("a string holds an unpaired surrogate");
    }
    return value;
}

/** Whether a value is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A member of a JSON object, never one inherited from Object.prototype. */
export function member(object: Record<string, unknown>, name: string): unknown {
    return Object.hasOwn(object, name) ? object[name] : undefined;
}

/** JSON equality: deep for arrays and objects, 1 equal to 1.0, true never equal to 1. */
export function jsonEqual(one: unknown, two: unknown): boolean {
    if (one === two) {
        return true;
    }
    if (Array.isArray(one)) {
        return Array.isArray(two) && one.length === two.length
            && one.every((item, index) => jsonEqual(item, two[index]));
    }
    if (isObject(one) && isObject(two)) {
        const keys = Object.keys(one);
        return keys.length === Object.keys(two).length
            && keys.every((key) => Object.hasOwn(two, key) && jsonEqual(one[key], two[key]));
    }
    return false;
}

/** Found in the text of every JSON number written with an exponent, or with a fraction (which a
 * number ends after: `,`, `}`, `]` or white space), and so in every text that has one; not in
 * the usual envelope, whose only dot is in `"v":"1.0"`. */
const FLOAT_HINT = /\d[eE][+-]?\d|\.\d+[eE,}\]\s]/;
const NO_MEMBERS: ReadonlySet<string> = new Set();

function skipSpace(text: string, at: number): number {
    while (at < text.length && " \t\r\n".includes(text.charAt(at))) {
        at += 1;
    }
    return at;
}

function stringEnd(text: string, at: number): number {
    at += 1;
    while (text.charCodeAt(at) !== 34) {
        at += text.charCodeAt(at) === 92 ? 2 : 1;
    }
    return at + 1;
}

function valueEnd(text: string, at: number): number {
    const first = text.charCodeAt(at);
    if (first === 34) {
        return stringEnd(text, at);
    }
    if (first !== 123 && first !== 91) {
        while (at < text.length && !",}] \t\r\n".includes(text.charAt(at))) {
            at += 1;
        }
        return at;
    }
    let depth = 0;
    do {
        const code = text.charCodeAt(at);
        if (code === 34) {
            at = stringEnd(text, at);
            continue;
        }
        depth += code === 123 || code === 91 ? 1 : code === 125 || code === 93 ? -1 : 0;
        at += 1;
    } while (depth > 0);
    return at;
}

/**
 * The members of a JSON object text whose values are numbers written with a fraction or an
 * exponent (`2.0`, `1e0`): JSON.parse makes them numbers like any other, but the lifecycle of
 * the Python bindings counts only a number written as an integer as one, so the decoder asks.
 * `text` must be JSON that JSON.parse read as an object.
 */
export function floatMembers(text: string): ReadonlySet<string> {
    if (!FLOAT_HINT.test(text)) {
        return NO_MEMBERS;
    }
    const found = new Set<string>();
    let at = skipSpace(text, 0) + 1;
    for (;;) {
        at = skipSpace(text, at);
        if (text.charCodeAt(at) !== 34) {
            return found;
        }
        const keyEnd = stringEnd(text, at);
        const key = JSON.parse(text.slice(at, keyEnd)) as string;
        at = skipSpace(text, skipSpace(text, keyEnd) + 1);
        const end = valueEnd(text, at);
        const value = text.slice(at, end);
        if (/^-?\d/.test(value) && /[.eE]/.test(value)) {
            found.add(key);
        } else {
            found.delete(key);
        }
        at = skipSpace(text, end) + 1;
    }
}
