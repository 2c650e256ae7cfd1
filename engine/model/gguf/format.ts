// GGUF on-disk constants shared by the reader and the writer.
// Spec: ggml's docs/gguf.md. Little-endian throughout.

/** "GGUF" read as a little-endian u32. */
export const GGUF_MAGIC = 0x46554747;
/** Tensor data starts at a multiple of this unless `general.alignment` says otherwise. */
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** GGUF metadata value type ids. */
export enum GgufValueType {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
}

/** Byte width of each fixed-size scalar value type. */
export const SCALAR_BYTES: Partial<Record<GgufValueType, number>> = {
  [GgufValueType.U8]: 1, [GgufValueType.I8]: 1, [GgufValueType.BOOL]: 1,
  [GgufValueType.U16]: 2, [GgufValueType.I16]: 2,
  [GgufValueType.U32]: 4, [GgufValueType.I32]: 4, [GgufValueType.F32]: 4,
  [GgufValueType.U64]: 8, [GgufValueType.I64]: 8, [GgufValueType.F64]: 8,
};

/**
 * A metadata value as read: numbers (64-bit integers as numbers when safe, else bigint), strings, booleans,
 * string arrays, typed arrays for numeric arrays, and nested arrays.
 */
export type GgufValue =
  | number
  | bigint
  | boolean
  | string
  | string[]
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array
  | BigInt64Array | BigUint64Array
  | boolean[]
  | GgufValue[];
