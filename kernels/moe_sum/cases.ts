// Conformance cases for the mixture-of-experts output sum on the CPU: one slot, a decode step, a prefill of many
// tokens, a width with a scalar tail, the slots' rows scattered over the grouped expert outputs; a -0 product alone.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { moeSumRef } from "./moe_sum.ref.js";

function moeSumCase(tokens: number, k: number, width: number, negativeZero = false): KernelCase {
  return {
    name: `moe_sum tokens=${tokens} k=${k} width=${width}${negativeZero ? " -0" : ""}`,
    // One rounding per product and per sum, in the same order: byte-identical.
    tolerance: 0,
    build(): CaseSetup {
      const slots = tokens * k;
      const expertOut = negativeZero ? new Float32Array(slots * width).fill(-0) : randomF32(slots * width, slots + width, 3);
      // A permutation of the slots, as grouping by expert gives.
      const rows = Int32Array.from({ length: slots }, (_, s) => (s * 7 + 3) % slots);
      const weights = Float32Array.from({ length: slots }, (_, s) => 0.05 + ((s * 13) % 17) / 20);
      return {
        kernel: "moe_sum",
        buffers: { expertOut, rows, weights, out: { bytes: tokens * width * 4 } },
        args: ["expertOut", "rows", "weights", "out", k, width],
        count: tokens,
        expected: { out: moeSumRef(expertOut, rows, weights, tokens, k, width) },
      };
    },
  };
}

export const cases: KernelCase[] = [
  moeSumCase(1, 1, 64), moeSumCase(1, 4, 64), moeSumCase(3, 2, 98), moeSumCase(40, 8, 2880), moeSumCase(2, 3, 8, true),
];
