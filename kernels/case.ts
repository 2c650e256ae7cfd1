// The shape of a conformance case (what every kernels/<op>/cases.ts exports) and seeded test-data generators.
// The harness (conformance.test.ts) places a case's buffers in WebAssembly memory, runs the kernel whole and
// split, and compares what it wrote with the plain-TypeScript reference's expectation.
import { f16ToF32, f32ToF16 } from "./formats/f16.js";

/** Host-side contents of a buffer. */
export type HostArray = Float32Array | Int32Array | Uint32Array | Uint16Array | Uint8Array;

/** A buffer of a case: its initial contents, or just a size (outputs and scratch, filled with a NaN pattern). */
export type CaseBuffer = HostArray | { bytes: number };

/** Everything needed to run one case and check it. */
export interface CaseSetup {
  /** The WebAssembly export to run. */
  kernel: string;
  /** Buffers by name, placed in memory in this order. */
  buffers: Record<string, CaseBuffer>;
  /** Arguments before the split range: a string is the byte offset of the buffer of that name. */
  args: Array<string | number>;
  /** Length of the range the kernel splits (its last two parameters); absent for kernels run once. */
  count?: number;
  /** Split boundaries fall on multiples of this (default 1). */
  grain?: number;
  /** Expected final contents of every buffer the kernel writes, from the reference. */
  expected: Record<string, HostArray>;
  /**
   * Contents that depend on where the buffers were placed (tables of byte pointers into other buffers): called
   * with every buffer's byte offset after placement; each returned array is written over the buffer of its name.
   */
  link?: (pointers: Record<string, number>) => Record<string, HostArray>;
}

/** One conformance case. */
export interface KernelCase {
  /** Shown as the test name, e.g. "matmul_q8_0 rows=1 k=576 n=1536". */
  name: string;
  /** Largest normalised mean squared error allowed; 0 demands byte-identical output. */
  tolerance: number;
  /** Generates inputs and the reference's expected outputs (called once, when the case runs). */
  build(): CaseSetup;
}

/** A deterministic generator of uniform numbers in [0, 1) (a 32-bit LCG; quality is ample for test data). */
export function random(seed: number): () => number {
  let state = (seed * 2654435761) >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** n floats uniform in [-scale, scale). */
export function randomF32(n: number, seed: number, scale = 1): Float32Array {
  const next = random(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (next() * 2 - 1) * scale;
  return out;
}

/** n int32 uniform in [0, limit). */
export function randomInts(n: number, seed: number, limit: number): Int32Array {
  const next = random(seed);
  return Int32Array.from({ length: n }, () => Math.floor(next() * limit));
}

/**
 * n IEEE halves of weights uniform in [-scale, scale) (finite; small weights give subnormal halves), with the
 * special values ±0, the largest and smallest subnormal and, when `specials`, ±infinity sprinkled in.
 */
export function randomF16(n: number, seed: number, scale = 1, specials = false): Uint16Array {
  const next = random(seed);
  const out = new Uint16Array(n);
  const extra = specials ? [0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0x7c00, 0xfc00] : [0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff];
  for (let i = 0; i < n; i++) out[i] = next() < 0.01 ? extra[Math.floor(next() * extra.length)] : f32ToF16((next() * 2 - 1) * scale);
  return out;
}

/** n bfloat16 values of floats uniform in [-scale, scale). */
export function randomBf16(n: number, seed: number, scale = 1): Uint16Array {
  const bits = new Uint32Array(randomF32(n, seed, scale).buffer);
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = bits[i] >>> 16;
  return out;
}

/**
 * A random f16 block scale: normal magnitudes 2^-12 .. 2^-4, negative when `signed` (Q4_0), and 2% subnormal when
 * `subnormals` (exact but slow in the fast kernels' conversion; benchmarks turn them off to match real weights).
 */
function randomScale(next: () => number, signed: boolean, subnormals: boolean): number {
  if (subnormals && next() < 0.02) return Math.floor(next() * 0x3ff) + 1;
  const magnitude = f32ToF16(2 ** (-4 - next() * 8));
  return signed && next() < 0.5 ? magnitude | 0x8000 : magnitude;
}

/** `blocks` Q8_0 blocks with random quants in [-127, 127] and random scales (see randomScale). */
export function randomQ8_0(blocks: number, seed: number, subnormals = true): Uint8Array {
  const next = random(seed);
  const out = new Uint8Array(blocks * 34);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    view.setUint16(b * 34, randomScale(next, false, subnormals), true);
    for (let i = 0; i < 32; i++) view.setInt8(b * 34 + 2 + i, Math.floor(next() * 255) - 127);
  }
  return out;
}

/** `blocks` Q4_0 blocks with random nibbles and random (possibly negative) scales (see randomScale). */
export function randomQ4_0(blocks: number, seed: number, subnormals = true): Uint8Array {
  const next = random(seed);
  const out = new Uint8Array(blocks * 18);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    view.setUint16(b * 18, randomScale(next, true, subnormals), true);
    for (let i = 0; i < 16; i++) out[b * 18 + 2 + i] = Math.floor(next() * 256);
  }
  return out;
}

/**
 * `blocks` MXFP4 blocks (17 bytes: e, 16 bytes of codes) with random codes and e drawn from `exponents`, by default
 * 117..125 (scales 2^-11 .. 2^-3, as real weights have) and, when `subnormals`, 2% at e 0, 1 or 2 (E8M0_half's
 * subnormal f32 scales).
 */
export function randomMxfp4(blocks: number, seed: number, subnormals = true, exponents?: readonly number[]): Uint8Array {
  const next = random(seed);
  const out = new Uint8Array(blocks * 17);
  for (let b = 0; b < blocks; b++) {
    out[b * 17] = exponents ? exponents[Math.floor(next() * exponents.length)]
      : subnormals && next() < 0.02 ? Math.floor(next() * 3) : 117 + Math.floor(next() * 9);
    for (let i = 1; i < 17; i++) out[b * 17 + i] = Math.floor(next() * 256);
  }
  return out;
}

/** Bytes per block of Q4_1, Q5_0 and Q5_1, and where their scales sit (d, then m for Q4_1 / Q5_1). */
const LEGACY_BYTES = { q4_1: 20, q5_0: 22, q5_1: 24 } as const;

/**
 * `blocks` Q4_1, Q5_0 or Q5_1 blocks: random quant bytes (nibbles and fifth bits), a random scale d (see randomScale)
 * and, for Q4_1 / Q5_1, a random signed minimum m of order -16 d (as a min/max fit of centred weights gives).
 */
export function randomLegacyQuant(type: "q4_1" | "q5_0" | "q5_1", blocks: number, seed: number, subnormals = true): Uint8Array {
  const next = random(seed);
  const bytes = LEGACY_BYTES[type];
  const out = new Uint8Array(blocks * bytes);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    for (let i = 2; i < bytes; i++) out[b * bytes + i] = Math.floor(next() * 256);
    const d = randomScale(next, type === "q5_0", subnormals);
    view.setUint16(b * bytes, d, true);
    if (type !== "q5_0") view.setUint16(b * bytes + 2, f32ToF16(-f16ToF32(d) * (type === "q4_1" ? 8 : 16) * (0.5 + next())), true);
  }
  return out;
}

/** Bytes per super-block of the K-quant weight types. */
const K_QUANT_BYTES = { q4_k: 144, q5_k: 176, q6_k: 210 } as const;

/**
 * `blocks` K-quant super-blocks of random bytes (every pattern of quants, packed scales and fifth bits is a valid
 * block) with random positive f16 d and dmin (see randomScale); Q6_K's int8 sub-block scales take both signs.
 */
export function randomKQuant(type: "q4_k" | "q5_k" | "q6_k", blocks: number, seed: number, subnormals = true): Uint8Array {
  const next = random(seed);
  const blockBytes = K_QUANT_BYTES[type];
  const out = new Uint8Array(blocks * blockBytes);
  const view = new DataView(out.buffer);
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(next() * 256);
  for (let b = 0; b < blocks; b++) {
    if (type === "q6_k") {
      view.setUint16(b * blockBytes + 208, randomScale(next, false, subnormals), true);
    } else {
      view.setUint16(b * blockBytes, randomScale(next, false, subnormals), true);
      view.setUint16(b * blockBytes + 2, randomScale(next, false, subnormals), true);
    }
  }
  return out;
}
