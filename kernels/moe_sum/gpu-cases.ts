// WebGPU cases for the mixture-of-experts output sum: one slot, a decode step, a prefill of many tokens, with the
// slots' rows scattered over the grouped expert outputs.
import { grid } from "../webgpu/shaders.js";
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { moeSumRef } from "./moe_sum.ref.js";

function moeSumCase(tokens: number, k: number, width: number): GpuKernelCase {
  return {
    name: `moe_sum tokens=${tokens} k=${k} width=${width}`,
    // One rounding per product and per sum, in the same order; only a fused multiply-add may round differently.
    tolerance: 1e-13,
    build() {
      const slots = tokens * k;
      const expertOut = randomF32(slots * width, slots + width, 3);
      // A permutation of the slots, as grouping by expert gives.
      const rows = Int32Array.from({ length: slots }, (_, s) => (s * 7 + 3) % slots);
      const weights = Float32Array.from({ length: slots }, (_, s) => 0.05 + ((s * 13) % 17) / 20);
      return {
        shader: { op: "moe_sum" },
        bindings: [
          { name: "expertOut", contents: expertOut }, { name: "rows", contents: rows }, { name: "weights", contents: weights },
          { name: "out", contents: { bytes: tokens * width * 4 } },
        ],
        params: [["u32", tokens], ["u32", k], ["u32", width]],
        workgroups: grid(tokens * width, 256),
        expected: { out: moeSumRef(expertOut, rows, weights, tokens, k, width) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [moeSumCase(1, 1, 64), moeSumCase(1, 4, 64), moeSumCase(3, 2, 96), moeSumCase(40, 8, 2880)];
