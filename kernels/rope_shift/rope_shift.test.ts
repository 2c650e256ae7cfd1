// RoPE re-rotation exactness: keys rotated for position p and then shifted by delta must equal keys rotated for
// p + delta directly from the same pre-RoPE values, within f32 tolerance (the section-pruning cache relies on it);
// in an f16 cache (kv_store_f16, rope_shift_f16), within the two roundings to half the relocated keys went through.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WasmRuntime } from "../wasm/runtime.js";
import { llama3RopeFreqFactors, ropeThetaScale } from "../rope-frequencies.js";
import { f16ToF32 } from "../formats/f16.js";
import { randomF32 } from "../case.js";

let runtime: WasmRuntime;
beforeAll(async () => { runtime = await WasmRuntime.create({ threads: 2 }); });
afterAll(async () => { await runtime.dispose(); });

function relocate(kvHeads: number, headDim: number, count: number, from: number, to: number, factors?: Float32Array, f16 = false): number {
  const blockSize = 16;
  const rowFloats = kvHeads * headDim;
  const blocks = Math.ceil((Math.max(from, to) + count) / blockSize);
  const table = Int32Array.from({ length: blocks }, (_, i) => blocks - 1 - i); // physical order reversed
  const preRope = randomF32(count * rowFloats, count + from + to, 3);
  const thetaScale = ropeThetaScale(500000, headDim);
  const mark = runtime.mark();
  try {
    const factorPointer = factors ? runtime.upload(factors) : 0;
    const tablePointer = runtime.upload(table);
    const positions = (start: number) => runtime.upload(Int32Array.from({ length: count }, (_, i) => start + i));
    // Keys as cached at their old positions, then scattered into the paged pool at those positions.
    const old = runtime.upload(preRope);
    runtime.call("rope_neox", old, positions(from), factorPointer, count, kvHeads, headDim, headDim, thetaScale, 1, 0, 0, 0, 1, 0, count);
    const elementBytes = f16 ? 2 : 4;
    const pool = runtime.alloc(blocks * blockSize * rowFloats * elementBytes);
    const values = runtime.alloc(count * rowFloats * 4);
    runtime.call(f16 ? "kv_store_f16" : "kv_store", old, values, pool, runtime.alloc(blocks * blockSize * rowFloats * elementBytes), tablePointer, positions(to), count, rowFloats, blockSize);
    // Re-rotate in place by the delta, as relocation does after copying the span to its new positions.
    runtime.parallel(f16 ? "rope_shift_f16" : "rope_shift", [pool, tablePointer, to, kvHeads, headDim, headDim, blockSize, to - from, factorPointer, thetaScale, 1, 0, 0, 0], count);
    // Keys computed directly at the new positions.
    const direct = runtime.upload(preRope);
    runtime.call("rope_neox", direct, positions(to), factorPointer, count, kvHeads, headDim, headDim, thetaScale, 1, 0, 0, 0, 1, 0, count);
    const expected = runtime.f32(direct, count * rowFloats);
    const poolView = f16 ? Float32Array.from(runtime.u16(pool, blocks * blockSize * rowFloats), f16ToF32) : runtime.f32(pool, blocks * blockSize * rowFloats);
    let worst = 0;
    for (let i = 0; i < count; i++) {
      const position = to + i;
      const slot = table[Math.floor(position / blockSize)] * blockSize + (position % blockSize);
      for (let j = 0; j < rowFloats; j++) worst = Math.max(worst, Math.abs(poolView[slot * rowFloats + j] - expected[i * rowFloats + j]));
    }
    return worst;
  } finally {
    runtime.release(mark);
  }
}

/**
 * Angles are f32, so an angle near position P carries up to ~P * 2^-24 radians of rounding on either path; keys of
 * magnitude up to 3 may then differ by about 3 * P * 2^-23. A wrong rotation would differ by O(1).
 */
const tolerance = (maxPosition: number) => 4 * 3 * maxPosition * 2 ** -23;

describe("rope_shift relocation", () => {
  it("matches keys computed directly at the new positions when moving a span earlier", () => {
    expect(relocate(8, 128, 40, 300, 37)).toBeLessThan(tolerance(340));
  });
  it("matches when moving later, with Llama 3 frequency factors, across many blocks", () => {
    const factors = llama3RopeFreqFactors({ factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 }, 500000, 64);
    expect(relocate(4, 64, 70, 10, 2000, factors)).toBeLessThan(tolerance(2070));
  });
  it("is exact for a zero delta", () => {
    expect(relocate(2, 8, 5, 9, 9)).toBe(0);
  });
  it("matches in an f16 cache within two roundings to half (stored, then shifted)", () => {
    // Keys are below 8 in magnitude (3 * sqrt(2)), so one rounding to half errs by at most 2^-9; the rotation
    // carries the first rounding's error pair into one component by up to sqrt(2) times, then the second adds.
    const twoRoundings = (1 + Math.SQRT2) * 2 ** -9;
    const factors = llama3RopeFreqFactors({ factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 }, 500000, 64);
    expect(relocate(8, 128, 40, 300, 37, undefined, true)).toBeLessThan(twoRoundings + tolerance(340));
    expect(relocate(4, 64, 70, 10, 2000, factors, true)).toBeLessThan(twoRoundings + tolerance(2070));
    expect(relocate(2, 8, 5, 9, 9, undefined, true)).toBeLessThanOrEqual(2 ** -9); // one rounding only
  });
});
