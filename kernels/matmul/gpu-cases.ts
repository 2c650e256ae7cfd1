// WebGPU cases for matmul: F32, F16 and BF16 weights against f32 activations, and Q8_0 and Q4_0 weights against
// Q8_0 activations (both in the GPU layout); tiny and odd shapes, row counts on both sides of the 8-row tile, the
// real model shapes, a vocabulary-sized n that folds the grid into y, and one part of a split weight writing its
// columns of a wider y. Each in the kernel the runner would pick: by columns (matmul*.wgsl), by columns with subgroup
// reductions (matmul*_subgroup.wgsl, on adapters with subgroups) or tiled (matmul_tiled*.wgsl).
import { splitMxfp4, splitQ4_0, splitQ8_0 } from "../webgpu/layouts.js";
import { type ShaderRef, grid } from "../webgpu/shaders.js";
import { GgmlType } from "../formats/types.js";
import { randomBf16, randomF16, randomF32, randomMxfp4, randomQ4_0, randomQ8_0 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { matmulFloatRef, matmulQuantRef, matmulMxfp4Ref } from "./matmul.ref.js";

type FloatType = "f32" | "f16" | "bf16";
const WEIGHT_TYPE: Record<FloatType, number> = { f32: 0, f16: 1, bf16: 2 };
const GGML_TYPES: Record<FloatType, GgmlType> = { f32: GgmlType.F32, f16: GgmlType.F16, bf16: GgmlType.BF16 };

/** Which matmul kernel a case runs: see the file comment. */
type Variant = "columns" | "subgroup" | "tiled";
const SUFFIX: Record<Variant, string> = { columns: "", subgroup: "_subgroup", tiled: "" };

/** The tiled kernels' grid: one workgroup per 64 x 64 tile of y. */
const tiles = (rows: number, n: number): [number, number] => [Math.ceil(n / 64), Math.ceil(rows / 64)];

function floatCase(type: FloatType, rows: number, k: number, n: number, threads = 64, part?: { stride: number; offset: number }, variant: Variant = "columns"): GpuKernelCase {
  const stride = part?.stride ?? n;
  const offset = part?.offset ?? 0;
  const tiled = variant === "tiled";
  return {
    requires: variant === "subgroup" ? "subgroups" : undefined,
    name: `matmul${variant === "columns" ? "" : ` ${variant}`} ${type} rows=${rows} k=${k} n=${n}${tiled ? "" : ` threads/column=${threads}`}${part ? ` columns ${offset}-${offset + n} of ${stride}` : ""}`,
    tolerance: 1e-11, // f32 partial sums in another order than the reference's f64
    build() {
      const x = randomF32(rows * k, 1 + rows + k);
      const values = type === "f32" ? randomF32(n * k, 7 + n, 1 / Math.sqrt(k)) : type === "f16" ? randomF16(n * k, 7 + n, 1 / Math.sqrt(k)) : randomBf16(n * k, 7 + n, 1 / Math.sqrt(k));
      const w = new Uint8Array(values.buffer);
      const { initial, y } = partOutput(matmulFloatRef(x, GGML_TYPES[type], w, rows, k, n), rows, n, stride, offset);
      return {
        shader: (tiled ? { op: "matmul", file: "matmul_tiled", constants: { WEIGHT_TYPE: WEIGHT_TYPE[type] } }
          : { op: "matmul", file: `matmul${SUFFIX[variant]}`, constants: { WEIGHT_TYPE: WEIGHT_TYPE[type], THREADS_PER_COLUMN: threads } }) as ShaderRef,
        bindings: [{ name: "x", contents: x }, { name: "w", contents: w }, { name: "y", contents: part ? initial : { bytes: rows * n * 4 } }],
        params: [["u32", rows], ["u32", k], ["u32", n], ["u32", stride], ["u32", offset]],
        workgroups: tiled ? tiles(rows, n) : grid(n, 64 / threads),
        expected: { y },
      };
    },
  };
}

/** A y `stride` wide of random values, and what it must hold once `product` ([rows, n]) is written at column `offset`. */
function partOutput(product: Float32Array, rows: number, n: number, stride: number, offset: number): { initial: Float32Array; y: Float32Array } {
  const initial = randomF32(rows * stride, 5);
  const y = initial.slice();
  for (let r = 0; r < rows; r++) y.set(product.subarray(r * n, (r + 1) * n), r * stride + offset);
  return { initial, y };
}

/**
 * Q8_0 or Q4_0 weights; with `part`, W is one part of a weight split by rows that writes columns
 * [offset, offset + n) of a y `stride` wide (the other columns must stay as they were).
 */
function quantCase(type: "q8_0" | "q4_0", rows: number, k: number, n: number, threads = 64, part?: { stride: number; offset: number }, variant: Variant = "columns"): GpuKernelCase {
  const stride = part?.stride ?? n;
  const offset = part?.offset ?? 0;
  const tiled = variant === "tiled";
  return {
    requires: variant === "subgroup" ? "subgroups" : undefined,
    name: `matmul${variant === "columns" ? "" : ` ${variant}`} ${type} rows=${rows} k=${k} n=${n}${tiled ? "" : ` threads/column=${threads}`}${part ? ` columns ${offset}-${offset + n} of ${stride}` : ""}`,
    tolerance: 1e-11, // integer block dots are exact; the f32 sum of scaled blocks rounds
    build() {
      const blocks = n * (k / 32);
      const xq = randomQ8_0(rows * (k / 32), 3 + rows + k);
      const w = type === "q8_0" ? randomQ8_0(blocks, 11 + n) : randomQ4_0(blocks, 11 + n);
      const x = splitQ8_0(xq, rows * (k / 32));
      const weights = type === "q8_0" ? splitQ8_0(w, blocks) : splitQ4_0(w, blocks);
      const { initial, y } = partOutput(matmulQuantRef(xq, w, type, rows, k, n), rows, n, stride, offset);
      return {
        shader: (tiled ? { op: "matmul", file: "matmul_tiled_quant", constants: { WEIGHT_TYPE: type === "q8_0" ? 0 : 1 } }
          : { op: "matmul", file: `matmul_quant${SUFFIX[variant]}`, constants: { WEIGHT_TYPE: type === "q8_0" ? 0 : 1, THREADS_PER_COLUMN: threads } }) as ShaderRef,
        bindings: [
          { name: "x_quants", contents: x.quants }, { name: "x_scales", contents: x.scales },
          { name: "w_quants", contents: weights.quants }, { name: "w_scales", contents: weights.scales },
          { name: "y", contents: part ? initial : { bytes: rows * n * 4 } },
        ],
        params: [["u32", rows], ["u32", k], ["u32", n], ["u32", stride], ["u32", offset]],
        workgroups: tiled ? tiles(rows, n) : grid(n, 64 / threads),
        expected: { y },
      };
    },
  };
}

/**
 * MXFP4 weights (gpt-oss's experts) converted at load to the Q8_0 layout (splitMxfp4), through the Q8_0 kernels,
 * against ggml's MXFP4 dot. Normal scales only: a GPU may flush e 0 and 1's subnormal ones.
 */
function mxfp4Case(rows: number, k: number, n: number, variant: Variant = "columns"): GpuKernelCase {
  const tiled = variant === "tiled";
  const threads = 8;
  return {
    requires: variant === "subgroup" ? "subgroups" : undefined,
    name: `matmul${variant === "columns" ? "" : ` ${variant}`} mxfp4 (as q8_0) rows=${rows} k=${k} n=${n}`,
    tolerance: 1e-11, // integer block dots are exact; the f32 sum of scaled blocks rounds
    build() {
      const blocks = n * (k / 32);
      const xq = randomQ8_0(rows * (k / 32), 5 + rows + k);
      const w = randomMxfp4(blocks, 13 + n, false);
      const x = splitQ8_0(xq, rows * (k / 32));
      const weights = splitMxfp4(w, blocks);
      return {
        shader: (tiled ? { op: "matmul", file: "matmul_tiled_quant", constants: { WEIGHT_TYPE: 0 } }
          : { op: "matmul", file: `matmul_quant${SUFFIX[variant]}`, constants: { WEIGHT_TYPE: 0, THREADS_PER_COLUMN: threads } }) as ShaderRef,
        bindings: [
          { name: "x_quants", contents: x.quants }, { name: "x_scales", contents: x.scales },
          { name: "w_quants", contents: weights.quants }, { name: "w_scales", contents: weights.scales },
          { name: "y", contents: { bytes: rows * n * 4 } },
        ],
        params: [["u32", rows], ["u32", k], ["u32", n], ["u32", n], ["u32", 0]],
        workgroups: tiled ? tiles(rows, n) : grid(n, 64 / threads),
        expected: { y: matmulMxfp4Ref(xq, w, rows, k, n) },
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

/** [rows, k, n, threads per column]; k a multiple of 8, as the subgroup float kernel needs. */
const subgroupFloatShapes: Array<[number, number, number, number]> = [
  [1, 8, 3, 8], [9, 64, 37, 8], [3, 128, 5, 16], [5, 64, 33, 32], [1, 576, 1536, 16], [16, 576, 1536, 16], [3, 1024, 3072, 64],
];
const subgroupQuantShapes: Array<[number, number, number, number]> = [
  [1, 32, 1, 8], [9, 64, 37, 8], [5, 96, 13, 16], [9, 160, 10, 32], [1, 1024, 3072, 64], [16, 576, 1536, 8], [2, 256, 151936, 8],
];

export const cases: GpuKernelCase[] = [
  mxfp4Case(1, 64, 64), mxfp4Case(5, 2880, 40), mxfp4Case(40, 64, 96, "tiled"), mxfp4Case(3, 128, 64, "subgroup"),
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => floatShapes.map(([rows, k, n]) => floatCase(type, rows, k, n))),
  ...(["q8_0", "q4_0"] as const).flatMap((type) => quantShapes.map(([rows, k, n]) => quantCase(type, rows, k, n))),
  // Several columns per workgroup (the runner's choice for short rows), with a partial last workgroup.
  floatCase("f32", 9, 64, 37, 8), floatCase("f16", 3, 128, 5, 16), floatCase("bf16", 1, 13, 9, 8),
  quantCase("q8_0", 9, 64, 37, 8), quantCase("q8_0", 2, 256, 151936, 8), quantCase("q4_0", 9, 64, 37, 8),
  // A later part of a split weight.
  floatCase("f16", 2, 64, 21, 8, { stride: 50, offset: 29 }),
  // The tiled kernels (prefill and large batches): partial tiles on both sides, k not a multiple of the 32-wide slice,
  // an odd number of quant blocks, real shapes, and a later part of a split weight.
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => [floatCase(type, 65, 576, 130, 64, undefined, "tiled"), floatCase(type, 33, 13, 9, 64, undefined, "tiled")]),
  floatCase("f16", 128, 1024, 192, 64, undefined, "tiled"), floatCase("bf16", 100, 64, 37, 64, { stride: 80, offset: 40 }, "tiled"),
  ...(["q8_0", "q4_0"] as const).flatMap((type) => [quantCase(type, 70, 96, 70, 64, undefined, "tiled"), quantCase(type, 64, 576, 128, 64, undefined, "tiled"),
    quantCase(type, 129, 64, 33, 64, undefined, "tiled")]),
  quantCase("q8_0", 200, 1024, 96, 64, undefined, "tiled"), quantCase("q4_0", 65, 64, 40, 64, { stride: 100, offset: 60 }, "tiled"),
  quantCase("q8_0", 3, 64, 40, 8, { stride: 100, offset: 60 }), quantCase("q4_0", 9, 96, 13, 64, { stride: 29, offset: 16 }),
  // The subgroup kernels: columns within one subgroup (8 threads) and spread over several (16 to 64), row counts on
  // both sides of the row tile, real shapes, a vocabulary-sized n and a later part of a split weight.
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => subgroupFloatShapes.map(([rows, k, n, threads]) => floatCase(type, rows, k, n, threads, undefined, "subgroup"))),
  ...(["q8_0", "q4_0"] as const).flatMap((type) => subgroupQuantShapes.map(([rows, k, n, threads]) => quantCase(type, rows, k, n, threads, undefined, "subgroup"))),
  floatCase("f16", 2, 64, 21, 8, { stride: 50, offset: 29 }, "subgroup"), quantCase("q4_0", 3, 64, 40, 16, { stride: 100, offset: 60 }, "subgroup"),
];
