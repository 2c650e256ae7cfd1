// WebGPU cases for layer normalisation: tiny and odd widths, SigLIP's 1152, rows off centre, many rows.
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { layerNormRef } from "./layer_norm.ref.js";

function layerNormCase(rows: number, n: number, eps: number, offset = 0): GpuKernelCase {
  return {
    name: `layer_norm rows=${rows} n=${n} eps=${eps}${offset ? ` offset=${offset}` : ""}`,
    tolerance: 1e-11, // f32 tree sums against the reference's f64 sums
    build() {
      const x = randomF32(rows * n, rows + n, 4);
      if (offset) for (let i = 0; i < x.length; i++) x[i] += offset;
      const weight = randomF32(n, 3 * n, 2);
      const bias = randomF32(n, 5 * n, 1);
      return {
        shader: { op: "layer_norm" },
        bindings: [
          { name: "x", contents: x }, { name: "weight", contents: weight }, { name: "bias", contents: bias },
          { name: "y", contents: { bytes: rows * n * 4 } },
        ],
        params: [["u32", n], ["f32", eps]],
        workgroups: [rows, 1],
        expected: { y: layerNormRef(x, weight, bias, rows, n, eps) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [
  layerNormCase(1, 8, 1e-6), layerNormCase(3, 13, 1e-5), layerNormCase(5, 72, 1e-6), layerNormCase(40, 64, 1e-6),
  layerNormCase(3, 1152, 1e-6), layerNormCase(2, 1152, 1e-6, 30),
];
