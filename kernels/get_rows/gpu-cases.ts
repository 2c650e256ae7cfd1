// WebGPU cases for the embedding lookup: F32, F16 (subnormals, infinities and signed zeros), BF16, Q8_0 and Q4_0 in
// the GPU layout, byte-identical to the GGUF decoder; repeated and out-of-order ids; one part of a table split by
// rows, which writes only the rows whose ids it holds.
import { splitQ4_0, splitQ8_0 } from "../webgpu/layouts.js";
import { grid } from "../webgpu/shaders.js";
import { GgmlType } from "../formats/types.js";
import { randomBf16, randomF16, randomF32, randomInts, randomQ4_0, randomQ8_0 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { getRowsRef } from "./get_rows.ref.js";

type RowsType = "f32" | "f16" | "bf16" | "q8_0" | "q4_0";
const WEIGHT_TYPE = { f32: 0, f16: 1, bf16: 2 } as const;
const GGML = { f32: GgmlType.F32, f16: GgmlType.F16, bf16: GgmlType.BF16, q8_0: GgmlType.Q8_0, q4_0: GgmlType.Q4_0 };

function tableValues(type: RowsType, vocab: number, k: number, seed: number): Uint8Array {
  const values = type === "f32" ? randomF32(vocab * k, seed) : type === "f16" ? randomF16(vocab * k, seed, 2, true) : type === "bf16" ? randomBf16(vocab * k, seed)
    : type === "q8_0" ? randomQ8_0(vocab * (k / 32), seed) : randomQ4_0(vocab * (k / 32), seed);
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

/** With `part`, the bound table is rows [first, first + count) of the vocab-row table. */
function getRowsCase(type: RowsType, vocab: number, k: number, rows: number, part?: { first: number; count: number }): GpuKernelCase {
  return {
    name: `get_rows ${type} vocab=${vocab} k=${k} rows=${rows}${part ? ` part ids ${part.first}-${part.first + part.count}` : ""}`,
    tolerance: 0,
    build() {
      const bytes = tableValues(type, vocab, k, vocab + k);
      const ids = randomInts(rows, rows, vocab);
      if (rows > 2) { ids[1] = ids[0]; ids[2] = vocab - 1; }
      const reference = getRowsRef(GGML[type], bytes, ids, k);
      const first = part?.first ?? 0;
      const count = part?.count ?? vocab;
      const rowBytes = bytes.byteLength / vocab;
      const table = bytes.subarray(first * rowBytes, (first + count) * rowBytes);
      // Rows another part holds keep what the output held (here: random values).
      const initial = randomF32(rows * k, 9);
      const expected = initial.slice();
      ids.forEach((id, t) => { if (id >= first && id < first + count) expected.set(reference.subarray(t * k, (t + 1) * k), t * k); });
      const out = { name: "out", contents: part ? initial : { bytes: rows * k * 4 } };
      const params: Array<["u32", number]> = [["u32", rows], ["u32", k], ["u32", first], ["u32", count]];
      const workgroups = grid(rows * k, 256);
      if (type === "q8_0" || type === "q4_0") {
        const blocks = count * (k / 32);
        const { quants, scales } = type === "q8_0" ? splitQ8_0(table, blocks) : splitQ4_0(table, blocks);
        return { shader: { op: "get_rows", file: "get_rows_quant", constants: { WEIGHT_TYPE: type === "q8_0" ? 0 : 1 } }, bindings: [{ name: "quants", contents: quants }, { name: "scales", contents: scales }, { name: "ids", contents: ids }, out], params, workgroups, expected: { out: expected } };
      }
      return { shader: { op: "get_rows", constants: { WEIGHT_TYPE: WEIGHT_TYPE[type] } }, bindings: [{ name: "table", contents: table }, { name: "ids", contents: ids }, out], params, workgroups, expected: { out: expected } };
    },
  };
}

export const cases: GpuKernelCase[] = [
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => [getRowsCase(type, 7, 13, 3), getRowsCase(type, 300, 64, 9)]),
  ...(["q8_0", "q4_0"] as const).flatMap((type) => [getRowsCase(type, 7, 32, 3), getRowsCase(type, 300, 64, 9), getRowsCase(type, 1000, 576, 17)]),
  getRowsCase("f16", 300, 64, 40, { first: 100, count: 150 }), getRowsCase("q4_0", 300, 64, 40, { first: 0, count: 120 }),
  getRowsCase("q8_0", 300, 64, 40, { first: 250, count: 50 }),
];
