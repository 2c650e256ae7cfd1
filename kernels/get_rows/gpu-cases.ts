// WebGPU cases for the embedding lookup: F32, F16 (subnormals, infinities and signed zeros), BF16 and Q8_0 in the
// GPU layout, byte-identical to the GGUF decoder; repeated and out-of-order ids.
import { splitQ8_0 } from "../../engine/backends/webgpu/layouts.js";
import { grid } from "../../engine/backends/webgpu/shaders.js";
import { GgmlType } from "../../engine/model/dtypes.js";
import { randomBf16, randomF16, randomF32, randomInts, randomQ8_0 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { getRowsRef } from "./get_rows.ref.js";

type RowsType = "f32" | "f16" | "bf16" | "q8_0";
const WEIGHT_TYPE = { f32: 0, f16: 1, bf16: 2 } as const;

function getRowsCase(type: RowsType, vocab: number, k: number, rows: number): GpuKernelCase {
  return {
    name: `get_rows ${type} vocab=${vocab} k=${k} rows=${rows}`,
    tolerance: 0,
    build() {
      const seed = vocab + k;
      const values = type === "f32" ? randomF32(vocab * k, seed) : type === "f16" ? randomF16(vocab * k, seed, 2, true) : type === "bf16" ? randomBf16(vocab * k, seed) : randomQ8_0(vocab * (k / 32), seed);
      const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
      const ids = randomInts(rows, rows, vocab);
      if (rows > 2) { ids[1] = ids[0]; ids[2] = vocab - 1; }
      const ggml = { f32: GgmlType.F32, f16: GgmlType.F16, bf16: GgmlType.BF16, q8_0: GgmlType.Q8_0 }[type];
      const out = { name: "out", contents: { bytes: rows * k * 4 } };
      const expected = { out: getRowsRef(ggml, bytes, ids, k) };
      const params: Array<["u32", number]> = [["u32", rows], ["u32", k]];
      const workgroups = grid(rows * k, 256);
      if (type === "q8_0") {
        const { quants, scales } = splitQ8_0(bytes, vocab * (k / 32));
        return { shader: { op: "get_rows", file: "get_rows_q8_0" }, bindings: [{ name: "quants", contents: quants }, { name: "scales", contents: scales }, { name: "ids", contents: ids }, out], params, workgroups, expected };
      }
      return { shader: { op: "get_rows", constants: { WEIGHT_TYPE: WEIGHT_TYPE[type] } }, bindings: [{ name: "table", contents: bytes }, { name: "ids", contents: ids }, out], params, workgroups, expected };
    },
  };
}

export const cases: GpuKernelCase[] = [
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => [getRowsCase(type, 7, 13, 3), getRowsCase(type, 300, 64, 9)]),
  getRowsCase("q8_0", 7, 32, 3), getRowsCase("q8_0", 300, 64, 9), getRowsCase("q8_0", 1000, 576, 17),
];
