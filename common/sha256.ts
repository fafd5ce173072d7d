/**
 * SHA-256 of a string's UTF-8 bytes, in hex: the transcript's chain hash and the inline-read key.
 *
 * Kept here as one self-contained function rather than taken from @noble/hashes, which it matches
 * bit for bit (test/unit/core/sha256.test.ts checks it against node:crypto). In Temporal's reusable
 * workflow context every workflow evaluates the bundle's modules anew, so a library's hash class and
 * its import objects get a different hidden class in each workflow; the optimised hash code met a
 * "wrong map" in each one and was thrown away, and a reply of twenty 240 KB reads spent 14 s of
 * workflow CPU hashing 5 MB. This function touches no object but typed arrays and numbers, so its
 * optimised code holds in every workflow. Pure and synchronous: runs in the sandbox and the worker.
 */

/** The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of `text` encoded as UTF-8, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  const data = new TextEncoder().encode(text);
  const length = data.length;
  // The message, a 1 bit, zeros, and its length in bits as a 64-bit big-endian number, in 64-byte blocks.
  const blocks = new Uint8Array((((length + 8) >>> 6) + 1) << 6);
  blocks.set(data);
  blocks[length] = 0x80;
  const end = blocks.length;
  const bitsHigh = Math.floor(length / 0x20000000);
  const bitsLow = (length << 3) >>> 0;
  blocks[end - 8] = bitsHigh >>> 24;
  blocks[end - 7] = bitsHigh >>> 16;
  blocks[end - 6] = bitsHigh >>> 8;
  blocks[end - 5] = bitsHigh;
  blocks[end - 4] = bitsLow >>> 24;
  blocks[end - 3] = bitsLow >>> 16;
  blocks[end - 2] = bitsLow >>> 8;
  blocks[end - 1] = bitsLow;

  const w = new Uint32Array(64);
  let h0 = 0x6a09e667 | 0;
  let h1 = 0xbb67ae85 | 0;
  let h2 = 0x3c6ef372 | 0;
  let h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0;
  let h5 = 0x9b05688c | 0;
  let h6 = 0x1f83d9ab | 0;
  let h7 = 0x5be0cd19 | 0;
  for (let offset = 0; offset < end; offset += 64) {
    for (let i = 0; i < 16; i++) {
      const j = offset + i * 4;
      w[i] = (blocks[j]! << 24) | (blocks[j + 1]! << 16) | (blocks[j + 2]! << 8) | blocks[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const w15 = w[i - 15]!;
      const w2 = w[i - 2]!;
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const sigma1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + sigma1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const sigma0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (sigma0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  return hex8(h0) + hex8(h1) + hex8(h2) + hex8(h3) + hex8(h4) + hex8(h5) + hex8(h6) + hex8(h7);
}

/** A 32-bit word as 8 hex digits. */
function hex8(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}
