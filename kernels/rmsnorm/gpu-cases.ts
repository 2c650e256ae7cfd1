// WebGPU cases for RMS normalisation: head-sized rows (QK norm), odd widths, model widths, many rows.
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { rmsnormRef } from "./rmsnorm.ref.js";

function rmsnormCase(rows: number, d: number, eps: number): GpuKernelCase {
  return {
    name: `rmsnorm rows=${rows} d=${d} eps=${eps}`,
    tolerance: 1e-11, // f32 tree sum against the reference's f64 sum
    build() {
      const x = randomF32(rows * d, rows + d, 4);
      const weight = randomF32(d, 3 * d, 2);
      return {
        shader: { op: "rmsnorm" },
        bindings: [{ name: "x", contents: x }, { name: "weight", contents: weight }, { name: "y", contents: { bytes: rows * d * 4 } }],
        params: [["u32", d], ["f32", eps]],
        workgroups: [rows, 1],
        expected: { y: rmsnormRef(x, weight, rows, d, eps) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [
  rmsnormCase(1, 8, 1e-5), rmsnormCase(3, 13, 1e-6), rmsnormCase(5, 172, 1e-5), rmsnormCase(16 * 8, 128, 1e-6),
  rmsnormCase(1, 576, 1e-5), rmsnormCase(7, 1024, 1e-6), rmsnormCase(2, 2048, 1e-5), rmsnormCase(64, 1024, 1e-6),
];
