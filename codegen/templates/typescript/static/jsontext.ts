/**
 * Parsing JSON text exactly as JSON, and as the Python bindings do: the one parser every part of
 * the bindings uses.
 *
 * `JSON.parse` reads JSON as the standard says, with one leniency: a string may hold an unpaired
 * surrogate escape ("\ud800"), which is no Unicode text and which the Python bindings refuse, so
 * `loads` refuses it too. Such escapes are rare, so the value is walked only when the text holds
 * one.
 *
 * Two limits hold for every text, as in the Python bindings (decision D-LIMITS): arrays and
 * objects nested at most `MAX_DEPTH` deep (LS-LIMIT-3), and no number whose integer part has
 * more than `MAX_DIGITS` digits (LS-LIMIT-4); text beyond either is refused with a
 * `JSONLimitError` that names the rule. `duplicateName` finds a member name written twice in an
 * object (decision D-DUPLICATE-KEYS), which JSON.parse reads with the last one winning.
 */

/** How deep arrays and objects may nest (the top-level object is depth 1). */
export const MAX_DEPTH = 128;
/** How many digits the integer part of a number may have. */
export const MAX_DIGITS = 4300;

/** JSON text beyond a limit of the bindings' parser; `rule` names the limit. */
export class JSONLimitError extends SyntaxError {
    constructor(readonly rule: string, message: string) {
        super(message);
        this.name = "JSONLimitError";
    }
}

/** An escape of a surrogate (high or low), without which a text's strings hold none. */
export const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** A lone surrogate: a high one not followed by a low one, or a low one without a high one. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

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

/** Parse one JSON text; a SyntaxError when it is not JSON, and its subclass `JSONLimitError` when
 * it is JSON beyond the limits. */
export function loads(text: string): unknown {
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch (error) {
        throw beyondLimits(text) ?? error;
    }
    const beyond = beyondLimits(text);
    if (beyond !== null) {
        throw beyond;
    }
    if (text.includes("\\u") && SURROGATE_ESCAPE.test(text) && !wellFormed(value)) {
        throw new SyntaxError("a string holds an unpaired surrogate");
    }
    return value;
}

/** The first limit the text goes beyond, nesting before digits, or null. Only a text with more
 * opening brackets than the depth limit can nest too deep, and only one longer than the digit
 * limit can hold too long a number, so most texts are cleared without being walked. */
function beyondLimits(text: string): JSONLimitError | null {
    if (text.length <= MAX_DIGITS && !moreBracketsThanDepth(text)) {
        return null;
    }
    let depth = 0;
    let longNumber = false;
    for (let at = 0; at < text.length; at++) {
        const code = text.charCodeAt(at);
        if (code === 34) {
            at = stringEnd(text, at) - 1;
        } else if (code === 123 || code === 91) {
            depth += 1;
            if (depth > MAX_DEPTH) {
                return new JSONLimitError("LS-LIMIT-3", `arrays and objects nest more than ${MAX_DEPTH} deep`);
            }
        } else if (code === 125 || code === 93) {
            depth -= 1;
        } else if (code >= 48 && code <= 57 && !longNumber) {
            // An integer part starts the number or follows its minus sign; a fraction's or an
            // exponent's digits (signed or not) follow a dot, an e, or a sign after an e.
            const before = at > 0 ? text.charAt(at - 1) : "";
            const exponentSign = (before === "+" || before === "-") && at > 1 && /[eE]/.test(text.charAt(at - 2));
            let end = at;
            while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) {
                end += 1;
            }
            longNumber = end - at > MAX_DIGITS && !exponentSign && !/[\w.]/.test(before);
            at = end - 1;
        }
    }
    return longNumber
        ? new JSONLimitError("LS-LIMIT-4", `a number's integer part has more than ${MAX_DIGITS} digits`)
        : null;
}

function moreBracketsThanDepth(text: string): boolean {
    if (text.length <= 2 * MAX_DEPTH) {
        return false;
    }
    let count = 0;
    for (const bracket of ["{", "["]) {
        for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
            count += 1;
            if (count > MAX_DEPTH) {
                return true;
            }
        }
    }
    return false;
}

function stringEnd(text: string, at: number): number {
    at += 1;
    while (at < text.length && text.charCodeAt(at) !== 34) {
        at += text.charCodeAt(at) === 92 ? 2 : 1;
    }
    return at + 1;
}

/**
 * The first member name written twice in an object of a JSON text (which JSON.parse read as
 * `value`), the objects taken in the order they end, inner ones first, as the Python bindings find
 * it; or null. First, cheaply: a text holds at least one colon a member, so as many colons as the
 * members of the object and of the objects directly in it leave no room for a member dropped.
 */
export function duplicateName(text: string, value: unknown): string | null {
    if (isObject(value)) {
        let members = 0;
        for (const name in value) {
            members += 1;
            const inner = value[name];
            if (isObject(inner)) {
                members += Object.keys(inner).length;
            }
        }
        let colons = 0;
        for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1)) {
            colons += 1;
        }
        if (colons === members) {
            return null;
        }
    }
    /** Per open array (null) or object (its names so far, and its first name seen twice). */
    const open: ({ names: Set<string>; twice: string | null } | null)[] = [];
    let expectName = false;
    for (let at = 0; at < text.length; at++) {
        const code = text.charCodeAt(at);
        if (code === 34) {
            const end = stringEnd(text, at);
            const object = open[open.length - 1];
            if (expectName && object) {
                const raw = text.slice(at + 1, end - 1);
                const name = raw.includes("\\") ? JSON.parse(text.slice(at, end)) as string : raw;
                if (object.names.has(name)) {
                    object.twice ??= name;
                } else {
                    object.names.add(name);
                }
            }
            expectName = false;
            at = end - 1;
        } else if (code === 123 || code === 91) {
            open.push(code === 123 ? { names: new Set(), twice: null } : null);
            expectName = code === 123;
        } else if (code === 125 || code === 93) {
            const closed = open.pop();
            if (closed && closed.twice !== null) {
                return closed.twice;
            }
        } else if (code === 44) {
            expectName = Boolean(open[open.length - 1]);
        }
    }
    return null;
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
