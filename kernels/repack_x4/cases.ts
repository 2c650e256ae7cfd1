// Conformance cases for the four-row repacking: byte-identical to the reference layout, padding rows included.
import { type KernelCase, randomQ4_0, randomQ8_0 } from "../case.js";
import { repackX4Ref } from "./repack_x4.ref.js";

function repackCase(type: "q8_0" | "q4_0", n: number, k: number): KernelCase {
  return {
    name: `repack_${type}x4 n=${n} k=${k}`,
    tolerance: 0,
    build() {
      const quantBytes = type === "q8_0" ? 32 : 16;
      const w = type === "q8_0" ? randomQ8_0(n * (k / 32), n + k) : randomQ4_0(n * (k / 32), n + k);
      const expected = repackX4Ref(w, n, k, quantBytes);
      return {
        kernel: `repack_${type}x4`,
        buffers: { w, packed: { bytes: expected.byteLength } },
        args: ["w", "packed", n, k],
        count: Math.ceil(n / 4),
        expected: { packed: expected },
      };
    },
  };
}

export const cases: KernelCase[] = (["q8_0", "q4_0"] as const).flatMap((type) =>
  [[1, 32], [5, 64], [8, 96], [13, 576], [1536, 576]].map(([n, k]) => repackCase(type, n, k)),
);
