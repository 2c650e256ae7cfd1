// Conformance cases for quantize_q8_0: byte-identical to the GGUF encoder (llama.cpp's activation quantization),
// including all-zero blocks, ties that round to even and values at the clamp.
import { type KernelCase, randomF32 } from "../case.js";
import { quantizeQ8_0Ref } from "./quantize_q8_0.ref.js";

function quantizeCase(rows: number, k: number, special = false): KernelCase {
  return {
    name: `quantize_q8_0 rows=${rows} k=${k}${special ? " (zeros, ties, extremes)" : ""}`,
    tolerance: 0,
    build() {
      const x = randomF32(rows * k, 5 + rows * k, 3);
      if (special) {
        x.fill(0, 0, 32); // an all-zero block
        for (let i = 32; i < 64; i++) x[i] = (i - 48) * 0.5; // amax 7.5: many exact .5 ties after scaling
        for (let i = 64; i < 96 && i < x.length; i++) x[i] = i % 2 ? 1e-30 : -3e38; // tiny and huge
      }
      return {
        kernel: "quantize_q8_0",
        buffers: { x, xq: { bytes: rows * (k / 32) * 34 } },
        args: ["x", "xq", k],
        count: rows,
        expected: { xq: quantizeQ8_0Ref(x) },
      };
    },
  };
}

export const cases: KernelCase[] = [
  quantizeCase(1, 32), quantizeCase(3, 96, true), quantizeCase(5, 576), quantizeCase(16, 1024), quantizeCase(2, 8192), quantizeCase(64, 2048),
];
