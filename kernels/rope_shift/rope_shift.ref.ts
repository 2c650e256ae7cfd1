// Reference re-rotation of paged cached keys by a position delta (see rope_shift.as.ts), f32 and f16 caches.
import { f16ToF32, f32ToF16 } from "../formats/f16.js";
import { ropeNeoxRef } from "../rope_neox/rope_neox.ref.js";

/** Rotates, in place (and returns), the keys of positions [start, start + count) of a paged K pool by `delta`. */
export function ropeShiftRef(
  kCache: Float32Array, blockTable: Int32Array, start: number, count: number, kvHeads: number, headDim: number,
  rotaryDim: number, blockSize: number, delta: number, freqFactors: Float32Array | undefined, thetaScale: number,
): Float32Array {
  const rowFloats = kvHeads * headDim;
  for (let position = start; position < start + count; position++) {
    const slot = blockTable[Math.floor(position / blockSize)] * blockSize + (position % blockSize);
    ropeNeoxRef(kCache.subarray(slot * rowFloats, (slot + 1) * rowFloats), Int32Array.of(delta), freqFactors, 1, kvHeads, headDim, rotaryDim, thetaScale);
  }
  return kCache;
}

/**
 * As ropeShiftRef on a pool of IEEE halves: the shifted keys widened to f32, rotated, rounded back to nearest even.
 * Returns a new pool; keys outside the span are left bit for bit.
 */
export function ropeShiftF16Ref(
  kCache: Uint16Array, blockTable: Int32Array, start: number, count: number, kvHeads: number, headDim: number,
  rotaryDim: number, blockSize: number, delta: number, freqFactors: Float32Array | undefined, thetaScale: number,
): Uint16Array {
  const floats = ropeShiftRef(Float32Array.from(kCache, f16ToF32), blockTable, start, count, kvHeads, headDim, rotaryDim, blockSize, delta, freqFactors, thetaScale);
  const out = Uint16Array.from(kCache);
  const rowHalves = kvHeads * headDim;
  for (let position = start; position < start + count; position++) {
    const slot = blockTable[Math.floor(position / blockSize)] * blockSize + (position % blockSize);
    for (let i = slot * rowHalves; i < (slot + 1) * rowHalves; i++) out[i] = f32ToF16(floats[i]);
  }
  return out;
}
