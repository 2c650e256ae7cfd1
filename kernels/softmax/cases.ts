// Conformance cases for softmax: single elements, odd widths, -inf entries (masked), vocabulary-sized rows.
import { type KernelCase, randomF32 } from "../case.js";
import { softmaxRef } from "./softmax.ref.js";

function softmaxCase(rows: number, n: number, range: number, masked = false): KernelCase {
  return {
    name: `softmax rows=${rows} n=${n} range=±${range}${masked ? " masked" : ""}`,
    tolerance: 1e-12,
    build() {
      const x = randomF32(rows * n, rows * n, range);
      if (masked) for (let i = 0; i < x.length; i += 3) if (i % n !== 0) x[i] = -Infinity;
      return { kernel: "softmax", buffers: { x }, args: ["x", n], count: rows, expected: { x: softmaxRef(x, rows, n) } };
    },
  };
}

export const cases: KernelCase[] = [
  softmaxCase(1, 1, 1), softmaxCase(3, 7, 5), softmaxCase(5, 172, 20, true), softmaxCase(16, 1024, 10), softmaxCase(2, 151936, 30),
];
