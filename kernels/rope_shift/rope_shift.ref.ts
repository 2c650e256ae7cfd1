// Reference re-rotation of paged cached keys by a position delta (see rope_shift.as.ts).
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
