// WebGPU cases for matmul: F32, F16 and BF16 weights against f32 activations, and Q8_0 weights against Q8_0
// activations (both in the GPU layout); tiny and odd shapes, row counts on both sides of the 8-row tile, the real
// model shapes, and a vocabulary-sized n that folds the grid into y.
import { splitQ8_0 } from "../../engine/backends/webgpu/layouts.js";
import { grid } from "../../engine/backends/webgpu/shaders.js";
import { GgmlType } from "../../engine/model/dtypes.js";
import { randomBf16, randomF16, randomF32, randomQ8_0 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { matmulFloatRef, matmulQuantRef } from "./matmul.ref.js";

type FloatType = "f32" | "f16" | "bf16";
const WEIGHT_TYPE: Record<FloatType, number> = { f32: 0, f16: 1, bf16: 2 };
const GGML_TYPES: Record<FloatType, GgmlType> = { f32: GgmlType.F32, f16: GgmlType.F16, bf16: GgmlType.BF16 };

function floatCase(type: FloatType, rows: number, k: number, n: number, threads = 64): GpuKernelCase {
  return {
    name: `matmul ${type} rows=${rows} k=${k} n=${n} threads/column=${threads}`,
    tolerance: 1e-11, // f32 partial sums in another order than the reference's f64
    build() {
      const x = randomF32(rows * k, 1 + rows + k);
      const values = type === "f32" ? randomF32(n * k, 7 + n, 1 / Math.sqrt(k)) : type === "f16" ? randomF16(n * k, 7 + n, 1 / Math.sqrt(k)) : randomBf16(n * k, 7 + n, 1 / Math.sqrt(k));
      const w = new Uint8Array(values.buffer);
      return {
        shader: { op: "matmul", constants: { WEIGHT_TYPE: WEIGHT_TYPE[type], THREADS_PER_COLUMN: threads } },
        bindings: [{ name: "x", contents: x }, { name: "w", contents: w }, { name: "y", contents: { bytes: rows * n * 4 } }],
        params: [["u32", rows], ["u32", k], ["u32", n]],
        workgroups: grid(n, 64 / threads),
        expected: { y: matmulFloatRef(x, GGML_TYPES[type], w, rows, k, n) },
      };
    },
  };
}

function q8Case(rows: number, k: number, n: number, threads = 64): GpuKernelCase {
  return {
    name: `matmul q8_0 rows=${rows} k=${k} n=${n} threads/column=${threads}`,
    tolerance: 1e-11, // integer block dots are exact; the f32 sum of scaled blocks rounds
    build() {
      const xq = randomQ8_0(rows * (k / 32), 3 + rows + k);
      const w = randomQ8_0(n * (k / 32), 11 + n);
      const x = splitQ8_0(xq, rows * (k / 32));
      const weights = splitQ8_0(w, n * (k / 32));
      return {
        shader: { op: "matmul", file: "matmul_q8_0", constants: { THREADS_PER_COLUMN: threads } },
        bindings: [
          { name: "x_quants", contents: x.quants }, { name: "x_scales", contents: x.scales },
          { name: "w_quants", contents: weights.quants }, { name: "w_scales", contents: weights.scales },
          { name: "y", contents: { bytes: rows * n * 4 } },
        ],
        params: [["u32", rows], ["u32", k], ["u32", n]],
        workgroups: grid(n, 64 / threads),
        expected: { y: matmulQuantRef(xq, w, "q8_0", rows, k, n) },
      };
    },
  };
}

const floatShapes: Array<[number, number, number]> = [
  [1, 8, 3], [1, 172, 7], [3, 172, 5], [2, 13, 9], [5, 64, 33], [9, 64, 17], [1, 576, 1536], [16, 576, 1536], [3, 1024, 3072],
];
const quantShapes: Array<[number, number, number]> = [
  [1, 32, 1], [2, 64, 5], [5, 96, 13], [9, 160, 10], [1, 576, 1536], [16, 576, 1536], [1, 1024, 3072], [1, 64, 151936],
];

export const cases: GpuKernelCase[] = [
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => floatShapes.map(([rows, k, n]) => floatCase(type, rows, k, n))),
  ...quantShapes.map(([rows, k, n]) => q8Case(rows, k, n)),
  // Several columns per workgroup (the runner's choice for short rows), with a partial last workgroup.
  floatCase("f32", 9, 64, 37, 8), floatCase("f16", 3, 128, 5, 16), floatCase("bf16", 1, 13, 9, 8),
  q8Case(9, 64, 37, 8), q8Case(2, 256, 151936, 8),
];
