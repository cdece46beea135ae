/**
 * Event texts of a shape seen before, read without the JSON parser.
 *
 * A stream writes thousands of events of one type in one shape: the same member names in the
 * same order, the same punctuation and spacing, only the values of some members changing. A
 * shape is learned from a text of it (`learnShape`) and kept for what the text is: an event
 * type, or a field of one whose value is JSON text (a tool call's arguments). A later text of
 * the same is then read (`readShape`) by one regular expression made from the shape, which
 * compares its punctuation, names and fixed values with the shape's and captures only the
 * values that change: strings, and integers of at most 15 digits. What is read is the object
 * `JSON.parse` gives for the text, the same members in the same order; a text that differs from
 * every shape of its kind in anything, or that holds a string the bindings refuse, is not read
 * and goes to the parser. Shapes are kept for every decoder, since what they say of a text does
 * not depend on the stream: at most `SHAPES_PER_TYPE` of each kind, the oldest making way.
 *
 * Only a text of the simplest kind gives a shape: objects nested at most `MAX_NESTING` deep,
 * each member name written once (and none `__proto__`), values that are strings, integers,
 * true, false, null or such objects. So a text read by a shape is within every limit of
 * `jsontext` (LS-LIMIT-3, LS-LIMIT-4), writes no member name twice (D-DUPLICATE-KEYS), holds
 * only integers written as integers (D-INTEGERS) and no unpaired surrogate: the checks the
 * decoder makes of a parsed text all hold for it by construction.
 *
 * A shape keeps the names, punctuation and fixed values of the text it was learned from, never
 * a value that changes: those are read from each text. Its pattern stays small enough for any
 * regular expression engine to compile quickly (`MAX_MEMBERS`, `MAX_PATTERN`), and a text whose
 * reading still runs out of the engine's backtracking stack (millions of escapes) goes to the
 * parser: what the decoder finds never depends on the shapes.
 */

import { LONE_SURROGATE, SURROGATE_ESCAPE } from "./jsontext.js";

/** How deep the objects of a shape may nest (the event itself is depth 1). */
const MAX_NESTING = 4;
/** Integers of at most this many digits are exact as numbers. */
const MAX_INTEGER_DIGITS = 15;
/** Members in all the objects of a shape, and characters in its pattern: beyond either, the
 * pattern takes the engine longer to compile than many texts take to parse, or more than it
 * can compile at all. */
const MAX_MEMBERS = 64;
const MAX_PATTERN = 1 << 14;
/** Shapes kept for one event type (or field); a new one takes the place of the oldest. */
const SHAPES_PER_TYPE = 4;
/** After this many texts of one event type (or field) in a row gave no shape, only one in
 * `RETRY_EVERY` is tried: a type whose texts are not of the simplest kind would otherwise cost
 * a try at every event. */
const FAILURES_PER_TYPE = 16;
const RETRY_EVERY = 1024;
/** Top-level members of an event whose value is the same in every event of its type, and is
 * compared as written rather than read: the envelope's version and the event's type. */
const FIXED_MEMBERS: ReadonlySet<string> = new Set(["v", "type"]);

const QUOTE = 34;
/** A JSON string's contents: characters other than a quote, a backslash or a control
 * character, and escapes; as a loop unrolled, so that no text makes it backtrack. */
const CONTENTS = String.raw`[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*`;
/** An integer written as JSON writes one, of at most `MAX_INTEGER_DIGITS` digits. */
const INTEGER = `(-?(?:0|[1-9][0-9]{0,${MAX_INTEGER_DIGITS - 1}}))`;
/** A string or an integer where the learner reads one (sticky: `lastIndex` says where). */
const STRING_HERE = new RegExp(`"(${CONTENTS})"`, "y");
const INTEGER_HERE = new RegExp(`${INTEGER}(?![.eE0-9])`, "y");

/** An object of a shape: a copy of `model` with the values read from the text put in. */
interface ObjectShape {
    /** Which of `copy`'s sites copies the model. */
    readonly site: number;
    /** The object's members in order, with the fixed values; the values that change are
     * placeholders of their kind ("" or 0), for no text's value is kept. */
    readonly model: Record<string, unknown>;
    /** The members whose value is read, each with its group in the shape's pattern and
     * whether it is a string (else an integer). */
    readonly names: readonly string[];
    readonly groups: readonly number[];
    readonly strings: readonly boolean[];
    /** The members that are objects, and their shapes. */
    readonly children: readonly (readonly [string, ObjectShape])[];
}

interface Shape {
    /** The whole text: the shape's punctuation, names and fixed values as written, a group for
     * each value that changes. */
    readonly pattern: RegExp;
    readonly root: ObjectShape;
}

/** The shapes learned, most recent last, by what they are of: an event type, or the field of
 * an event type whose value is JSON text (`JSON_TEXT` in the decoder). */
const known = new Map<string, Shape[]>();
/** How many objects' shapes have been learned, which numbers their sites. */
let objects = 0;
/** Whether new shapes are learned (`resetShapes`). */
let learning = true;
/** How many texts of each event type (or field) gave no shape, or were not tried, since the
 * last that gave one. */
const failures = new Map<string, number>();

/** The object of `text` when it has a shape learned for `of`; else null. */
export function readShape(of: string, text: string): Record<string, unknown> | null {
    const shapes = known.get(of);
    if (shapes === undefined) {
        return null;
    }
    for (let i = shapes.length - 1; i >= 0; i--) {
        const shape = shapes[i];
        const match = matchOf(shape.pattern, text);
        if (match !== null) {
            return build(shape.root, match);
        }
    }
    return null;
}

/** Whether `text` has a shape learned for `of`, and holds no surrogate escape: then it is JSON
 * text that `loads` takes, with no need to build its value. */
export function isShaped(of: string, text: string): boolean {
    const shapes = known.get(of);
    if (shapes === undefined || SURROGATE_ESCAPE.test(text)) {
        return false;
    }
    for (let i = shapes.length - 1; i >= 0; i--) {
        if (matchOf(shapes[i].pattern, text) !== null) {
            return true;
        }
    }
    return false;
}

/** The match of a shape's pattern in `text`; null when there is none, or when the engine ran
 * out of its backtracking stack on the text (a RangeError), which only a text of millions of
 * escapes makes it do: the parser reads that one. */
function matchOf(pattern: RegExp, text: string): RegExpExecArray | null {
    try {
        return pattern.exec(text);
    } catch {
        return null;
    }
}

/** Learn the shape of `text`, of `of` (an event type, or a field of one), that `readShape`
 * did not read, unless it is not of the simplest kind. `event` says that the text is an
 * event's, of type `of`: only then are its version and type fixed, and only a text whose type
 * is `of` gives a shape. */
export function learnShape(of: string, text: string, event: boolean): void {
    if (!learning) {
        return;
    }
    const failed = failures.get(of) ?? 0;
    const shape = failed < FAILURES_PER_TYPE || failed % RETRY_EVERY === 0 ? new Learner(text, event ? of : null).shape() : null;
    if (shape === null) {
        failures.set(of, failed + 1);
        return;
    }
    failures.delete(of);
    const shapes = known.get(of) ?? [];
    if (shapes.length >= SHAPES_PER_TYPE) {
        shapes.shift();
    }
    shapes.push(shape);
    known.set(of, shapes);
}

/** Forget every shape learned, and learn new ones only when `learn`: for tests that hold the
 * decoder's paths to each other. */
export function resetShapes(learn: boolean): void {
    known.clear();
    failures.clear();
    learning = learn;
}

/** The object a match of a shape's pattern stands for; null when one of its strings holds an
 * unpaired surrogate escape, which the bindings refuse (`loads`). */
function build(shape: ObjectShape, match: RegExpExecArray): Record<string, unknown> | null {
    const object = copy(shape.site, shape.model);
    const { names, groups, strings, children } = shape;
    for (let i = 0; i < names.length; i++) {
        const text = match[groups[i]];
        if (!strings[i]) {
            object[names[i]] = Number(text);
        } else if (!text.includes("\\")) {
            object[names[i]] = text;
        } else {
            const value = text.length <= SHORT ? unescape(text) : JSON.parse(`"${text}"`) as string;
            if (SURROGATE_ESCAPE.test(text) && LONE_SURROGATE.test(value)) {
                return null;
            }
            object[names[i]] = value;
        }
    }
    for (let i = 0; i < children.length; i++) {
        const [name, child] = children[i];
        const value = build(child, match);
        if (value === null) {
            return null;
        }
        object[name] = value;
    }
    return object;
}

/** Strings up to this long are unescaped by `unescape`, longer ones by the JSON parser, which
 * costs more to call but less for each escape. */
const SHORT = 32;
const ESCAPED: Readonly<Record<string, string>> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** The value of a JSON string's contents, whose escapes the pattern found to be JSON's. */
function unescape(text: string): string {
    let value = "";
    let from = 0;
    for (let at = text.indexOf("\\"); at >= 0; at = text.indexOf("\\", from)) {
        value += text.slice(from, at);
        const code = text.charAt(at + 1);
        if (code === "u") {
            value += String.fromCharCode(parseInt(text.slice(at + 2, at + 6), 16));
            from = at + 6;
        } else {
            value += ESCAPED[code] ?? code;
            from = at + 2;
        }
    }
    return value + text.slice(from);
}

/**
 * A copy of an object's model. V8 copies an object fastest at a site that has seen few kinds of
 * object, and several times slower at one that has seen many, so each object of a shape is
 * copied at a site of its own (sites taken in turn, so that sixteen shapes share none).
 */
function copy(site: number, model: Record<string, unknown>): Record<string, unknown> {
    switch (site) {
        case 0: return { ...model };
        case 1: return { ...model };
        case 2: return { ...model };
        case 3: return { ...model };
        case 4: return { ...model };
        case 5: return { ...model };
        case 6: return { ...model };
        case 7: return { ...model };
        case 8: return { ...model };
        case 9: return { ...model };
        case 10: return { ...model };
        case 11: return { ...model };
        case 12: return { ...model };
        case 13: return { ...model };
        case 14: return { ...model };
        default: return { ...model };
    }
}

/** Reads a text as a shape: a parser of the simplest kind of JSON object only. */
class Learner {
    private at = 0;
    /** Where the text not yet in the pattern starts. */
    private from = 0;
    private pattern = "^";
    private groups = 0;
    private members = 0;

    /** `type`: the type an event's text must have, or null for a text that is not an event's
     * (whose members are then all read). */
    constructor(private readonly text: string, private readonly type: string | null) {}

    shape(): Shape | null {
        this.space();
        const root = this.object(1);
        this.space();
        if (root === null || this.at !== this.text.length) {
            return null;
        }
        this.pattern += `${escape(this.text.slice(this.from))}$`;
        return this.pattern.length > MAX_PATTERN ? null : { pattern: new RegExp(this.pattern), root };
    }

    private object(depth: number): ObjectShape | null {
        const { text } = this;
        if (depth > MAX_NESTING || text.charCodeAt(this.at) !== 123) {
            return null;
        }
        this.at += 1;
        const model: Record<string, unknown> = {};
        const names: string[] = [];
        const groups: number[] = [];
        const strings: boolean[] = [];
        const children: [string, ObjectShape][] = [];
        for (;;) {
            this.space();
            const name = this.string();
            this.members += 1;
            if (name === null || name === "__proto__" || Object.hasOwn(model, name) || this.members > MAX_MEMBERS) {
                return null;
            }
            this.space();
            if (text.charCodeAt(this.at) !== 58) {
                return null;
            }
            this.at += 1;
            this.space();
            const code = text.charCodeAt(this.at);
            const start = this.at;
            let value: unknown;
            if (code === 123) {
                const child = this.object(depth + 1);
                if (child === null) {
                    return null;
                }
                children.push([name, child]);
                value = null;
            } else if (code === QUOTE) {
                value = this.string();
                if (value === null) {
                    return null;
                }
                if (depth === 1 && this.type !== null && FIXED_MEMBERS.has(name)) {
                    if (name === "type" && value !== this.type) {
                        return null; // its event: line disagrees, which is a finding of its own
                    }
                } else {
                    // Read in a lookahead, and matched again by reference: the engine never goes
                    // back into a string to try it shorter, which would cost a text that almost
                    // has the shape a step for each of its characters.
                    this.group(`(?=(${CONTENTS}))\\${this.groups + 1}`, start, 1);
                    names.push(name);
                    groups.push(this.groups);
                    strings.push(true);
                    value = "";
                }
            } else {
                value = this.word() ?? this.integer();
                if (value === undefined) {
                    return null;
                }
                if (typeof value === "number") {
                    this.group(INTEGER, start, 0);
                    names.push(name);
                    groups.push(this.groups);
                    strings.push(false);
                    value = 0;
                }
            }
            model[name] = value;
            this.space();
            const next = text.charCodeAt(this.at);
            this.at += 1;
            if (next === 125) {
                return { site: objects++ % 16, model, names, groups, strings, children };
            }
            if (next !== 44) {
                return null;
            }
        }
    }

    /** The value just read, from `start` to `at`, its delimiters `inner` characters on each
     * side, becomes a group of the pattern. */
    private group(pattern: string, start: number, inner: number): void {
        this.pattern += escape(this.text.slice(this.from, start + inner)) + pattern;
        this.from = this.at - inner;
        this.groups += 1;
    }

    /** true, false or null as written: the same in every text of the shape. */
    private word(): boolean | null | undefined {
        for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
            if (this.text.startsWith(word, this.at)) {
                this.at += word.length;
                return value;
            }
        }
        return undefined;
    }

    /** An integer written as one (no fraction, no exponent), of at most
     * `MAX_INTEGER_DIGITS` digits. */
    private integer(): number | undefined {
        const found = INTEGER_HERE;
        found.lastIndex = this.at;
        const match = found.exec(this.text);
        if (match === null) {
            return undefined;
        }
        this.at += match[0].length;
        return Number(match[1]);
    }

    /** A string's value, read past it; null when none is here or it is not JSON text that the
     * bindings take. */
    private string(): string | null {
        const found = STRING_HERE;
        found.lastIndex = this.at;
        const match = found.exec(this.text);
        if (match === null) {
            return null;
        }
        const value = JSON.parse(match[0]) as string;
        if (SURROGATE_ESCAPE.test(match[0]) && LONE_SURROGATE.test(value)) {
            return null;
        }
        this.at += match[0].length;
        return value;
    }

    private space(): void {
        for (;;) {
            const code = this.text.charCodeAt(this.at);
            if (code !== 32 && code !== 9 && code !== 10 && code !== 13) {
                return;
            }
            this.at += 1;
        }
    }
}

/** Text as a pattern that matches it alone. */
function escape(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
