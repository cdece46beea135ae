/**
 * SHA-256 (FIPS 180-4), fed incrementally: the decoder keeps the fragments of a tool call as the
 * hash of their text joined, so that a block takes the same memory however long they run.
 * WebCrypto digests only whole buffers, and asynchronously, so the bindings carry their own.
 */

const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const rotate = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

export class Sha256 {
    private readonly state = new Uint32Array([
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]);
    private readonly block = new Uint8Array(64);
    private readonly words = new Uint32Array(64);
    private filled = 0;
    private length = 0;

    /** Add bytes to the message. */
    update(data: Uint8Array): this {
        this.length += data.length;
        let at = 0;
        while (at < data.length) {
            const take = Math.min(64 - this.filled, data.length - at);
            this.block.set(data.subarray(at, at + take), this.filled);
            this.filled += take;
            at += take;
            if (this.filled === 64) {
                this.compress();
                this.filled = 0;
            }
        }
        return this;
    }

    /** The hash of everything added, as 64 hexadecimal digits; the hash takes no more input. */
    hexDigest(): string {
        const bits = this.length * 8;
        this.update(new Uint8Array([0x80]));
        while (this.filled !== 56) {
            this.update(new Uint8Array([0]));
        }
        const tail = new Uint8Array(8);
        new DataView(tail.buffer).setUint32(0, Math.floor(bits / 0x100000000));
        new DataView(tail.buffer).setUint32(4, bits >>> 0);
        this.update(tail);
        return Array.from(this.state, (word) => word.toString(16).padStart(8, "0")).join("");
    }

    private compress(): void {
        const w = this.words;
        const view = new DataView(this.block.buffer);
        for (let i = 0; i < 16; i++) {
            w[i] = view.getUint32(i * 4);
        }
        for (let i = 16; i < 64; i++) {
            const s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >>> 3);
            const s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >>> 10);
            w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
        }
        let [a, b, c, d, e, f, g, h] = this.state;
        for (let i = 0; i < 64; i++) {
            const t1 = (h + (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25))
                + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
            const t2 = ((rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22))
                + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
            h = g; g = f; f = e; e = (d + t1) >>> 0;
            d = c; c = b; b = a; a = (t1 + t2) >>> 0;
        }
        const s = this.state;
        s[0] = (s[0] + a) >>> 0; s[1] = (s[1] + b) >>> 0;
        s[2] = (s[2] + c) >>> 0; s[3] = (s[3] + d) >>> 0;
        s[4] = (s[4] + e) >>> 0; s[5] = (s[5] + f) >>> 0;
        s[6] = (s[6] + g) >>> 0; s[7] = (s[7] + h) >>> 0;
    }
}
