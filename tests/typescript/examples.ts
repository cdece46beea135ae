/**
 * The spec's captured streams for the Node tests: every .sse and .http file under spec/examples,
 * a whole HTTP response without its head.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Capture {
    readonly file: string;
    readonly body: Uint8Array;
}

/** The project root: the nearest folder above this file that holds spec/examples. */
export function projectRoot(): string {
    let folder = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(folder, "spec", "examples"))) {
        const parent = dirname(folder);
        if (parent === folder) {
            throw new Error("no spec/examples above this file");
        }
        folder = parent;
    }
    return folder;
}

/** A body without the status line and headers of a whole HTTP response (up to a blank line). */
function body(content: Uint8Array): Uint8Array {
    if (new TextDecoder("latin1").decode(content.subarray(0, 5)) !== "HTTP/") {
        return content;
    }
    const text = new TextDecoder("latin1").decode(content);
    const blank = /\r?\n\r?\n/.exec(text);
    return blank === null ? new Uint8Array(0) : content.subarray(blank.index + blank[0].length);
}

export function captures(): Capture[] {
    const folder = join(projectRoot(), "spec", "examples");
    return readdirSync(folder, { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".sse") || file.endsWith(".http"))
        .sort()
        .map((file) => ({ file, body: body(readFileSync(join(folder, file))) }));
}

/** A deterministic stream of numbers in [0, 1), for chunkings that are the same on every run. */
export function random(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
