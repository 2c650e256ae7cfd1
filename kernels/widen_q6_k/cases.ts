// Conformance cases for widening Q6_K to a byte per quant: byte-identical to the reference (kernels/formats/q6_k-bytes.ts).
import { type KernelCase, randomKQuant } from "../case.js";
import { widenedQ6_K } from "../formats/q6_k-bytes.js";

function widenCase(blocks: number): KernelCase {
  return {
    name: `widen_q6_k blocks=${blocks}`,
    tolerance: 0,
    build() {
      const w = randomKQuant("q6_k", blocks, blocks);
      const expected = widenedQ6_K(w);
      return {
        kernel: "widen_q6_k",
        buffers: { w, widened: { bytes: expected.byteLength } },
        args: ["w", "widened"],
        count: blocks,
        expected: { widened: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [1, 3, 17, 1024].map(widenCase);
