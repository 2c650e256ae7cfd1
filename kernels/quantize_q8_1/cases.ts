// Conformance cases for quantize_q8_1: byte-identical to the Q8_1 encoder (llama.cpp's activation quantization for
// Q4_1 / Q5_1 weights), including all-zero blocks, ties that round to even and values at the clamp.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { quantizeQ8_1Ref } from "./quantize_q8_1.ref.js";

function quantizeCase(rows: number, k: number, special = false): KernelCase {
  return {
    name: `quantize_q8_1 rows=${rows} k=${k}${special ? " (zeros, ties, extremes)" : ""}`,
    tolerance: 0,
    build(): CaseSetup {
      const x = randomF32(rows * k, 5 + rows * k, 3);
      if (special) {
        x.fill(0, 0, 32);
        for (let i = 32; i < 64; i++) x[i] = (i - 48) * 0.5;
        for (let i = 64; i < 96 && i < x.length; i++) x[i] = i % 2 ? 1e-30 : -3e38;
      }
      return {
        kernel: "quantize_q8_1",
        buffers: { x, xq: { bytes: rows * (k / 32) * 36 } },
        args: ["x", "xq", k],
        count: rows,
        expected: { xq: quantizeQ8_1Ref(x) },
      };
    },
  };
}

const shapes: Array<[rows: number, k: number, special?: boolean]> = [[1, 32], [3, 96, true], [5, 576], [16, 1024], [2, 8192], [7, 64], [4, 896]];

export const cases: KernelCase[] = shapes.map(([rows, k, special]) => quantizeCase(rows, k, special));
