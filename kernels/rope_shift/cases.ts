// Conformance cases for rope_shift: negative and positive deltas, spans crossing blocks, tiny and model head shapes.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { ropeShiftRef } from "./rope_shift.ref.js";

function shiftCase(count: number, kvHeads: number, headDim: number, blockSize: number, delta: number, withFactors: boolean): KernelCase {
  return {
    name: `rope_shift count=${count} kvHeads=${kvHeads} headDim=${headDim} blockSize=${blockSize} delta=${delta}${withFactors ? " freqFactors" : ""}`,
    tolerance: 1e-13,
    build(): CaseSetup {
      const blocks = Math.ceil((count + 5) / blockSize) + 2;
      // Physical blocks in a shuffled order, as a real block table has them.
      const blockTable = Int32Array.from({ length: blocks }, (_, i) => (i * 7 + 3) % blocks);
      const kCache = randomF32(blocks * blockSize * kvHeads * headDim, count + headDim + delta, 2);
      const factors = withFactors ? Float32Array.from({ length: headDim / 2 }, (_, i) => 1 + (i % 3) * 2.5) : undefined;
      const thetaScale = Math.fround(Math.pow(10000, -2 / headDim));
      const start = 5;
      const expected = ropeShiftRef(Float32Array.from(kCache), blockTable, start, count, kvHeads, headDim, headDim, blockSize, delta, factors, thetaScale);
      return {
        kernel: "rope_shift",
        buffers: factors ? { kCache, blockTable, factors } : { kCache, blockTable },
        args: ["kCache", "blockTable", start, kvHeads, headDim, headDim, blockSize, delta, factors ? "factors" : 0, thetaScale],
        count,
        expected: { kCache: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [
  shiftCase(1, 1, 8, 4, -3, false), shiftCase(9, 2, 8, 4, 7, false), shiftCase(40, 8, 128, 16, -25, true),
  shiftCase(33, 3, 64, 16, 1000, false),
];
