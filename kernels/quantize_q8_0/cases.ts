// Conformance cases for quantize_q8_0: byte-identical to the GGUF encoder (llama.cpp's activation quantization),
// including all-zero blocks, ties that round to even and values at the clamp; quantize_q8_0_wide the same values
// in the batched matmul's layout.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { q8_0WideBytes, quantizeQ8_0Ref, widenQ8_0 } from "./quantize_q8_0.ref.js";

function quantizeCase(rows: number, k: number, special = false, wide = false): KernelCase {
  const kernel = wide ? "quantize_q8_0_wide" : "quantize_q8_0";
  return {
    name: `${kernel} rows=${rows} k=${k}${special ? " (zeros, ties, extremes)" : ""}`,
    tolerance: 0,
    build(): CaseSetup {
      const x = randomF32(rows * k, 5 + rows * k, 3);
      if (special) {
        x.fill(0, 0, 32); // an all-zero block
        for (let i = 32; i < 64; i++) x[i] = (i - 48) * 0.5; // amax 7.5: many exact .5 ties after scaling
        for (let i = 64; i < 96 && i < x.length; i++) x[i] = i % 2 ? 1e-30 : -3e38; // tiny and huge
      }
      if (wide) {
        return {
          kernel,
          buffers: { x, xw: { bytes: q8_0WideBytes(rows, k) } },
          args: ["x", "xw", k, rows],
          count: rows,
          expected: { xw: widenQ8_0(quantizeQ8_0Ref(x), rows, k) },
        };
      }
      return {
        kernel,
        buffers: { x, xq: { bytes: rows * (k / 32) * 34 } },
        args: ["x", "xq", k],
        count: rows,
        expected: { xq: quantizeQ8_0Ref(x) },
      };
    },
  };
}

const shapes: Array<[rows: number, k: number, special?: boolean]> = [[1, 32], [3, 96, true], [5, 576], [16, 1024], [2, 8192], [64, 2048], [7, 64]];

export const cases: KernelCase[] = [
  ...shapes.map(([rows, k, special]) => quantizeCase(rows, k, special)),
  // The wide layout: the same quants as int16, four rows per unit; partial last groups (1, 2, 3 rows) zero-padded.
  ...shapes.map(([rows, k, special]) => quantizeCase(rows, k, special, true)),
];
