// Conformance cases for layer_norm: odd and tiny widths, a head-sized row, SigLIP's 1152, rows off centre, in place.
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { layerNormRef } from "./layer_norm.ref.js";

function layerNormCase(rows: number, n: number, eps: number, inPlace = false, offset = 0): KernelCase {
  return {
    name: `layer_norm rows=${rows} n=${n} eps=${eps}${offset ? ` offset=${offset}` : ""}${inPlace ? " in place" : ""}`,
    // The reference follows ggml's scalar path; the kernel adds in f64 in another order, so a rare f32 rounding of
    // the mean or the variance may differ by an ulp.
    tolerance: 1e-13,
    build(): CaseSetup {
      const x = randomF32(rows * n, rows + n, 4);
      // A large common offset (activations far from zero) makes the centred variance matter.
      if (offset) for (let i = 0; i < x.length; i++) x[i] += offset;
      const weight = randomF32(n, 3 * n, 2);
      const bias = randomF32(n, 5 * n, 1);
      const expected = layerNormRef(x, weight, bias, rows, n, eps);
      return {
        kernel: "layer_norm",
        buffers: inPlace ? { x, weight, bias } : { x, weight, bias, y: { bytes: rows * n * 4 } },
        args: ["x", "weight", "bias", inPlace ? "x" : "y", n, eps],
        count: rows,
        expected: inPlace ? { x: expected } : { y: expected },
      };
    },
  };
}

export const cases: KernelCase[] = [
  layerNormCase(1, 8, 1e-6), layerNormCase(3, 13, 1e-5), layerNormCase(5, 72, 1e-6), layerNormCase(6, 64, 1e-6, true),
  layerNormCase(9, 1152, 1e-6), layerNormCase(4, 1152, 1e-6, true, 30), layerNormCase(17, 64, 1e-5, false, -7),
];
