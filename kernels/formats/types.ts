// The tensor element types loom reads (GGML's numbering) and their block layouts. Each type's encoding lives beside
// this file under its own name (f16.ts, bf16.ts, q8_0.ts, q4_0.ts, q4_1.ts, q5_0.ts, q5_1.ts, q4_k.ts, q5_k.ts, q6_k.ts,
// mxfp4.ts; q8_k.ts is the activation format K-quant kernels read, q8_1.ts the one Q4_1 / Q5_1 kernels read);
// quantize.ts dispatches on the type.
// NOTE: the numeric ids are GGML's and appear in GGUF files; never renumber them.

/** GGML tensor types that loom can read. */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
  MXFP4 = 39,
}

/** Elements per block and bytes per block for each type (scalars are blocks of one). */
export const BLOCK_LAYOUT: Readonly<Record<GgmlType, { blockElements: number; blockBytes: number }>> = {
  [GgmlType.F32]: { blockElements: 1, blockBytes: 4 },
  [GgmlType.F16]: { blockElements: 1, blockBytes: 2 },
  [GgmlType.BF16]: { blockElements: 1, blockBytes: 2 },
  [GgmlType.Q4_0]: { blockElements: 32, blockBytes: 18 },
  [GgmlType.Q4_1]: { blockElements: 32, blockBytes: 20 },
  [GgmlType.Q5_0]: { blockElements: 32, blockBytes: 22 },
  [GgmlType.Q5_1]: { blockElements: 32, blockBytes: 24 },
  [GgmlType.Q8_0]: { blockElements: 32, blockBytes: 34 },
  [GgmlType.Q4_K]: { blockElements: 256, blockBytes: 144 },
  [GgmlType.Q5_K]: { blockElements: 256, blockBytes: 176 },
  [GgmlType.Q6_K]: { blockElements: 256, blockBytes: 210 },
  [GgmlType.MXFP4]: { blockElements: 32, blockBytes: 17 },
};

/** Human-readable names of GGML types, including ones loom cannot read (for error messages). */
const GGML_TYPE_NAMES: Record<number, string> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 9: "Q8_1",
  10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 15: "Q8_K", 16: "IQ2_XXS",
  17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S", 20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S", 23: "IQ4_XS",
  24: "I8", 25: "I16", 26: "I32", 27: "I64", 28: "F64", 29: "IQ1_M", 30: "BF16", 34: "TQ1_0", 35: "TQ2_0",
  39: "MXFP4",
};

/** The name of a GGML type id, e.g. "Q8_0", or "type 99" when unknown. */
export function ggmlTypeName(type: number): string {
  return GGML_TYPE_NAMES[type] ?? `type ${type}`;
}

/** Whether loom can read tensors of this GGML type. */
export function isSupportedType(type: number): type is GgmlType {
  return Object.prototype.hasOwnProperty.call(BLOCK_LAYOUT, type);
}

/** Bytes taken by `elements` values of `type`; throws if elements is not a whole number of blocks. */
export function tensorByteLength(type: GgmlType, elements: number): number {
  const { blockElements, blockBytes } = BLOCK_LAYOUT[type];
  if (elements % blockElements !== 0) {
    throw new RangeError(`${elements} elements is not a multiple of the ${ggmlTypeName(type)} block size ${blockElements}`);
  }
  return (elements / blockElements) * blockBytes;
}
