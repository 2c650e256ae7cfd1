// Conformance cases for rope_shift and rope_shift_f16: negative and positive deltas, spans crossing blocks, tiny and
// model head shapes, partial rotary dims (f16), subnormal and extreme halves.
import { type CaseSetup, type KernelCase, randomF16, randomF32 } from "../case.js";
import { ropeShiftF16Ref, ropeShiftRef } from "./rope_shift.ref.js";

function shiftCase(count: number, kvHeads: number, headDim: number, blockSize: number, delta: number, withFactors: boolean, f16 = false, rotaryDim = headDim): KernelCase {
  const kernel = f16 ? "rope_shift_f16" : "rope_shift";
  return {
    name: `${kernel} count=${count} kvHeads=${kvHeads} headDim=${headDim}${rotaryDim !== headDim ? ` rotaryDim=${rotaryDim}` : ""} blockSize=${blockSize} delta=${delta}${withFactors ? " freqFactors" : ""}`,
    // f16: the kernel and the reference round the same f32 rotation to halves (byte-identical when measured); an
    // f32 ulp of difference (cos/sin of two f64 libms) could flip a rounding, so allow rare one-ulp differences
    // (NMSE over the halves' bit patterns) but nothing like a wrong rotation.
    tolerance: f16 ? 1e-12 : 1e-13,
    build(): CaseSetup {
      const blocks = Math.ceil((count + 5) / blockSize) + 2;
      // Physical blocks in a shuffled order, as a real block table has them.
      const blockTable = Int32Array.from({ length: blocks }, (_, i) => (i * 7 + 3) % blocks);
      const elements = blocks * blockSize * kvHeads * headDim;
      const seed = count + headDim + delta;
      const kCache = f16 ? randomF16(elements, seed, 2) : randomF32(elements, seed, 2);
      const factors = withFactors ? Float32Array.from({ length: rotaryDim / 2 }, (_, i) => 1 + (i % 3) * 2.5) : undefined;
      const thetaScale = Math.fround(Math.pow(10000, -2 / rotaryDim));
      const start = 5;
      const expected = kCache instanceof Uint16Array
        ? ropeShiftF16Ref(kCache, blockTable, start, count, kvHeads, headDim, rotaryDim, blockSize, delta, factors, thetaScale)
        : ropeShiftRef(Float32Array.from(kCache), blockTable, start, count, kvHeads, headDim, rotaryDim, blockSize, delta, factors, thetaScale);
      return {
        kernel,
        buffers: factors ? { kCache, blockTable, factors } : { kCache, blockTable },
        args: ["kCache", "blockTable", start, kvHeads, headDim, rotaryDim, blockSize, delta, factors ? "factors" : 0, thetaScale, 1, 0, 0, 0],
        count,
        expected: { kCache: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [
  shiftCase(1, 1, 8, 4, -3, false), shiftCase(9, 2, 8, 4, 7, false), shiftCase(40, 8, 128, 16, -25, true),
  shiftCase(33, 3, 64, 16, 1000, false),
  shiftCase(1, 1, 8, 4, -3, false, true), shiftCase(9, 2, 8, 4, 7, false, true), shiftCase(40, 8, 128, 16, -25, true, true),
  shiftCase(33, 3, 64, 16, 1000, false, true), shiftCase(17, 2, 64, 16, 40, false, true, 36),
];
