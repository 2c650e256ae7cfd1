// Which WGSL matmul kernel computes y = x W^T for a weight on the device, and its dispatches: by columns for a few
// rows (decode), tiled from TILED_MIN_ROWS rows (prefill, a vision encoder's patches); one dispatch per weight part.
import type { ShaderRef } from "../../../kernels/webgpu/shaders.js";
import { grid } from "../../../kernels/webgpu/shaders.js";
import type { DispatchParam } from "../../../kernels/webgpu/step-encoder.js";
import { FLOAT_WEIGHT_TYPES, type GpuWeight, QUANT_WEIGHT_TYPES, type WeightPart } from "./gpu-weights.js";

/**
 * Invocations per output column of a matmul whose rows hold `units` loads (values, or Q8_0 blocks): enough to keep
 * each busy for about eight loads, from 8 (the row tile) to the 64 of a workgroup. Short rows then pack several
 * columns into a workgroup instead of leaving most invocations idle.
 */
export function threadsPerColumn(units: number): number {
  return Math.min(64, Math.max(8, 2 ** Math.floor(Math.log2(Math.max(1, units / 8)))));
}

/**
 * The by-columns matmul pipeline for a weight: its type, threads per column from its row length, and the subgroup
 * kernel (16-byte loads, shuffle reductions) when the device has usable subgroups and the row length suits its loads.
 */
export function matmulShader(weight: { type: GpuWeight["type"]; shape: number[] }, subgroups: boolean): ShaderRef {
  const k = weight.shape[0]!;
  const quant = QUANT_WEIGHT_TYPES[weight.type];
  const suffix = subgroups ? "_subgroup" : "";
  if (quant) return { op: "matmul", file: `matmul_quant${suffix}`, constants: { WEIGHT_TYPE: quant === "q8_0" ? 0 : 1, THREADS_PER_COLUMN: threadsPerColumn(k / 32) } };
  const type = FLOAT_WEIGHT_TYPES[weight.type]!;
  const perLoad = type === 0 ? 4 : 8; // values in one vec4 of words
  if (subgroups && k % perLoad === 0) return { op: "matmul", file: "matmul_subgroup", constants: { WEIGHT_TYPE: type, THREADS_PER_COLUMN: threadsPerColumn(k / perLoad) } };
  return { op: "matmul", constants: { WEIGHT_TYPE: type, THREADS_PER_COLUMN: threadsPerColumn(k) } };
}

/**
 * From this many rows a matmul runs tiled (matmul_tiled*.wgsl: 64 x 64 tiles of y, each weight value loaded once per
 * 64 rows) instead of by columns (each weight value loaded once per 8 rows).
 */
export const TILED_MIN_ROWS = 32;

/** The tiled matmul pipeline for a weight's type. */
export function tiledShader(weight: { type: GpuWeight["type"] }): ShaderRef {
  const quant = QUANT_WEIGHT_TYPES[weight.type];
  if (quant) return { op: "matmul", file: "matmul_tiled_quant", constants: { WEIGHT_TYPE: quant === "q8_0" ? 0 : 1 } };
  return { op: "matmul", file: "matmul_tiled", constants: { WEIGHT_TYPE: FLOAT_WEIGHT_TYPES[weight.type]! } };
}

/** The dispatches of one matmul: its pipeline, whether it reads Q8_0-quantized activations, and one dispatch per part. */
export interface MatmulPlan {
  shader: ShaderRef;
  /** The kernel reads the input quantized to Q8_0 (xQuants, xScales), not as f32. */
  quantized: boolean;
  parts: Array<{ part: WeightPart; params: DispatchParam[]; workgroups: [number, number] }>;
}

/**
 * y = x W^T for `rows` rows of x into y from row `outRow` on: the kernel (tiled from TILED_MIN_ROWS rows, else by
 * columns) and each part's parameters (rows, k, the part's rows, y's row stride, the column its row 0 writes) and
 * workgroups. The bindings are the caller's: [x, part.data, y], or [xQuants, xScales, part.quants, part.scales, y].
 */
export function matmulPlan(weight: GpuWeight, rows: number, subgroups: boolean, outRow = 0): MatmulPlan {
  const k = weight.shape[0]!;
  const n = weight.shape[1]!;
  const tiled = rows >= TILED_MIN_ROWS;
  const shader = tiled ? tiledShader(weight) : matmulShader(weight, subgroups);
  return {
    shader,
    quantized: QUANT_WEIGHT_TYPES[weight.type] !== undefined,
    parts: weight.parts.map((part) => ({
      part,
      params: [["u32", rows], ["u32", k], ["u32", part.rows], ["u32", n], ["u32", outRow * n + part.firstRow]],
      workgroups: tiled ? [Math.ceil(part.rows / 64), Math.ceil(rows / 64)] : grid(part.rows, 64 / shader.constants!.THREADS_PER_COLUMN!),
    })),
  };
}
