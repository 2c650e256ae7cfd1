// Conformance cases for get_rows: every type (packed Q8_0x4 / Q4_0x4, the K-quants and widened Q6_K included),
// byte-identical to the decoder (f16 subnormals, infinities and signed zeros included), repeated and out-of-order ids.
import { GgmlType } from "../formats/types.js";
import { type KernelCase, randomBf16, randomF16, randomF32, randomInts, randomKQuant, randomLegacyQuant, randomQ4_0, randomQ8_0 } from "../case.js";
import { widenedQ6_K } from "../formats/q6_k-bytes.js";
import { repackX4Ref } from "../repack_x4/repack_x4.ref.js";
import { getRowsRef } from "./get_rows.ref.js";

type RowsType = "f32" | "f16" | "bf16" | "q8_0" | "q4_0" | "q8_0x4" | "q4_0x4" | "q4_k" | "q5_k" | "q6_k" | "q6_k_bytes" | "q4_1" | "q5_0" | "q5_1";

function weights(type: RowsType, vocab: number, k: number, seed: number): { ggml: GgmlType; bytes: Uint8Array } {
  const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  switch (type) {
    case "f32": return { ggml: GgmlType.F32, bytes: asBytes(randomF32(vocab * k, seed)) };
    case "f16": return { ggml: GgmlType.F16, bytes: asBytes(randomF16(vocab * k, seed, 2, true)) };
    case "bf16": return { ggml: GgmlType.BF16, bytes: asBytes(randomBf16(vocab * k, seed)) };
    case "q8_0": case "q8_0x4": return { ggml: GgmlType.Q8_0, bytes: randomQ8_0(vocab * (k / 32), seed) };
    case "q4_0": case "q4_0x4": return { ggml: GgmlType.Q4_0, bytes: randomQ4_0(vocab * (k / 32), seed) };
    case "q4_1": return { ggml: GgmlType.Q4_1, bytes: randomLegacyQuant(type, vocab * (k / 32), seed) };
    case "q5_0": return { ggml: GgmlType.Q5_0, bytes: randomLegacyQuant(type, vocab * (k / 32), seed) };
    case "q5_1": return { ggml: GgmlType.Q5_1, bytes: randomLegacyQuant(type, vocab * (k / 32), seed) };
    case "q4_k": return { ggml: GgmlType.Q4_K, bytes: randomKQuant(type, vocab * (k / 256), seed) };
    case "q5_k": return { ggml: GgmlType.Q5_K, bytes: randomKQuant(type, vocab * (k / 256), seed) };
    case "q6_k": case "q6_k_bytes": return { ggml: GgmlType.Q6_K, bytes: randomKQuant("q6_k", vocab * (k / 256), seed) };
  }
}

function getRowsCase(type: RowsType, vocab: number, k: number, rows: number): KernelCase {
  return {
    name: `get_rows_${type} vocab=${vocab} k=${k} rows=${rows}`,
    tolerance: 0,
    build() {
      const { ggml, bytes } = weights(type, vocab, k, vocab + k);
      const ids = randomInts(rows, rows, vocab);
      if (rows > 2) { ids[1] = ids[0]; ids[2] = vocab - 1; }
      const w = type.endsWith("x4") ? repackX4Ref(bytes, vocab, k, type.startsWith("q8") ? 32 : 16) : type === "q6_k_bytes" ? widenedQ6_K(bytes) : bytes;
      return {
        kernel: `get_rows_${type}`,
        buffers: { w, ids, out: { bytes: rows * k * 4 } },
        args: ["w", "ids", "out", k],
        count: rows,
        expected: { out: getRowsRef(ggml, bytes, ids, k) },
      };
    },
  };
}

export const cases: KernelCase[] = [
  ...(["f32", "f16", "bf16"] as const).flatMap((type) => [getRowsCase(type, 7, 8, 3), getRowsCase(type, 33, 172, 5), getRowsCase(type, 1000, 576, 16)]),
  ...(["q8_0", "q4_0", "q8_0x4", "q4_0x4"] as const).flatMap((type) => [getRowsCase(type, 5, 32, 3), getRowsCase(type, 1001, 1024, 16)]),
  ...(["q4_1", "q5_0", "q5_1"] as const).flatMap((type) => [getRowsCase(type, 5, 32, 3), getRowsCase(type, 1001, 1152, 16), getRowsCase(type, 300, 896, 7)]),
  ...(["q4_k", "q5_k", "q6_k", "q6_k_bytes"] as const).flatMap((type) => [getRowsCase(type, 5, 256, 3), getRowsCase(type, 1001, 1024, 16)]),
];
