// The tensor element types loom reads (GGML's numbering), their block layouts, and scalar conversions.
// NOTE: the numeric ids are GGML's and appear in GGUF files; never renumber them.

/** GGML tensor types that loom can read. */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q8_0 = 8,
  Q4_K = 12,
  Q6_K = 14,
  BF16 = 30,
}

/** Elements per block and bytes per block for each type (scalars are blocks of one). */
export const BLOCK_LAYOUT: Readonly<Record<GgmlType, { blockElements: number; blockBytes: number }>> = {
  [GgmlType.F32]: { blockElements: 1, blockBytes: 4 },
  [GgmlType.F16]: { blockElements: 1, blockBytes: 2 },
  [GgmlType.BF16]: { blockElements: 1, blockBytes: 2 },
  [GgmlType.Q4_0]: { blockElements: 32, blockBytes: 18 },
  [GgmlType.Q8_0]: { blockElements: 32, blockBytes: 34 },
  [GgmlType.Q4_K]: { blockElements: 256, blockBytes: 144 },
  [GgmlType.Q6_K]: { blockElements: 256, blockBytes: 210 },
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

const conversionView = new DataView(new ArrayBuffer(4));

/** IEEE half (as its 16 bits) to a float, exactly. */
export function f16ToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** A float to IEEE half bits, rounding to nearest even (as GGML's GGML_FP32_TO_FP16 does). */
export function f32ToF16(value: number): number {
  conversionView.setFloat32(0, value);
  return f32BitsToF16(conversionView.getUint32(0));
}

/** The IEEE half bits of the float whose 32 bits are `x`, rounding to nearest even (for typed-array loops). */
export function f32BitsToF16(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  let e = exponent - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let rounded = mantissa >> shift;
    const rest = mantissa & ((1 << shift) - 1);
    if (rest > half || (rest === half && (rounded & 1))) rounded++;
    return sign | rounded;
  }
  let rounded = mantissa >> 13;
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (rounded & 1))) {
    rounded++;
    if (rounded === 0x400) {
      rounded = 0;
      e++;
      if (e >= 31) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | rounded;
}

/** bfloat16 bits to a float, exactly. */
export function bf16ToF32(bits: number): number {
  conversionView.setUint32(0, (bits & 0xffff) << 16);
  return conversionView.getFloat32(0);
}

/** A float to bfloat16 bits, rounding to nearest even (NaN stays NaN), as GGML does. */
export function f32ToBf16(value: number): number {
  conversionView.setFloat32(0, value);
  return f32BitsToBf16(conversionView.getUint32(0));
}

/** The bfloat16 bits of the float whose 32 bits are `x` (for typed-array loops). */
export function f32BitsToBf16(x: number): number {
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 64) & 0xffff;
  return ((x + (0x7fff + ((x >>> 16) & 1))) >>> 16) & 0xffff;
}
