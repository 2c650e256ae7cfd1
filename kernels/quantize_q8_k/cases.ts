// Conformance cases for quantize_q8_k: byte-identical to the Q8_K reference (llama.cpp's activation quantization
// for K-quant weights), including an all-zero block, ties that round to even, the clamp at 127 when the extreme
// value is negative, and a block whose largest magnitude appears with both signs.
import { type KernelCase, randomF32 } from "../case.js";
import { quantizeQ8_KRef } from "./quantize_q8_k.ref.js";

function quantizeCase(rows: number, k: number, special = false): KernelCase {
  return {
    name: `quantize_q8_k rows=${rows} k=${k}${special ? " (zeros, ties, clamp, sign ties)" : ""}`,
    tolerance: 0,
    build() {
      const x = randomF32(rows * k, 9 + rows * k, 3);
      if (special) {
        x.fill(0, 0, 256); // an all-zero block
        for (let i = 256; i < 512; i++) x[i] = (i - 384) * 0.5; // extreme -64: iscale 127/64, many exact ties
        x[520] = -7; x[530] = 7; // both signs of the largest magnitude: the first, -7, maps to -127 and 7 to 127
        x[768] = 5; x[769] = -5; // the first extreme is positive: 5 maps to -127 and -5 to 127
      }
      return {
        kernel: "quantize_q8_k",
        buffers: { x, xq: { bytes: rows * (k / 256) * 292 } },
        args: ["x", "xq", k],
        count: rows,
        expected: { xq: quantizeQ8_KRef(x) },
      };
    },
  };
}

export const cases: KernelCase[] = [
  quantizeCase(1, 256), quantizeCase(2, 1024, true), quantizeCase(5, 768), quantizeCase(16, 1024), quantizeCase(3, 3072), quantizeCase(2, 8192),
];
