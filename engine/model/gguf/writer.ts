// Writes GGUF v3 files: used by the random-model generator and by tests that build small fixtures.
import { closeSync, openSync, writeSync } from "node:fs";
import { type GgmlType, tensorByteLength } from "../../../kernels/formats/types.js";
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufValueType, SCALAR_BYTES } from "./format.js";

/** A metadata value with its GGUF type spelled out (GGUF distinguishes u32 from i32 from f32). */
export type GgufTypedValue =
  | { type: "u8" | "i8" | "u16" | "i16" | "u32" | "i32" | "f32" | "f64"; value: number }
  | { type: "u64" | "i64"; value: number | bigint }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "array"; itemType: "u8" | "i8" | "u16" | "i16" | "u32" | "i32" | "f32" | "f64" | "u64" | "i64"; value: ArrayLike<number> }
  | { type: "array"; itemType: "string"; value: readonly string[] }
  | { type: "array"; itemType: "bool"; value: readonly boolean[] };

/** A tensor to write: raw bytes already in the GGML layout of `type`. */
export interface GgufTensorInput {
  name: string;
  /** GGML order: shape[0] is the row length. */
  shape: number[];
  type: GgmlType;
  data: Uint8Array;
}

const TYPE_IDS = {
  u8: GgufValueType.U8, i8: GgufValueType.I8, u16: GgufValueType.U16, i16: GgufValueType.I16,
  u32: GgufValueType.U32, i32: GgufValueType.I32, f32: GgufValueType.F32, f64: GgufValueType.F64,
  u64: GgufValueType.U64, i64: GgufValueType.I64, bool: GgufValueType.BOOL, string: GgufValueType.STRING,
} as const;

/** Accumulates header bytes in one growing buffer (headers with 150k-token vocabularies stay fast). */
class ByteSink {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  /** Makes room for n more bytes and returns where they go. NOTE: may replace this.buffer; read it afterwards. */
  private reserve(n: number): number {
    if (this.length + n > this.buffer.length) {
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + n));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  bytes(): Buffer { return this.buffer.subarray(0, this.length); }

  push(bytes: Uint8Array): void {
    const at = this.reserve(bytes.length);
    this.buffer.set(bytes, at);
  }

  u32(v: number): void { this.scalar("u32", v); }
  u64(v: number | bigint): void { this.scalar("u64", v); }

  string(s: string): void {
    const length = Buffer.byteLength(s, "utf8");
    this.u64(length);
    const at = this.reserve(length);
    this.buffer.write(s, at, "utf8");
  }

  scalar(type: keyof typeof TYPE_IDS, v: number | bigint | boolean | string): void {
    if (type === "string") return this.string(v as string);
    const at = this.reserve(SCALAR_BYTES[TYPE_IDS[type]]!);
    const b = this.buffer;
    switch (type) {
      case "bool": b.writeUInt8(v ? 1 : 0, at); break;
      case "u8": b.writeUInt8(v as number, at); break;
      case "i8": b.writeInt8(v as number, at); break;
      case "u16": b.writeUInt16LE(v as number, at); break;
      case "i16": b.writeInt16LE(v as number, at); break;
      case "u32": b.writeUInt32LE(v as number, at); break;
      case "i32": b.writeInt32LE(v as number, at); break;
      case "f32": b.writeFloatLE(v as number, at); break;
      case "f64": b.writeDoubleLE(v as number, at); break;
      case "u64": b.writeBigUInt64LE(BigInt(v as number | bigint), at); break;
      case "i64": b.writeBigInt64LE(BigInt(v as number | bigint), at); break;
    }
  }
}

/** A tensor's directory entry: what the header records about it. */
export type GgufTensorEntry = Pick<GgufTensorInput, "name" | "shape" | "type">;

/** Metadata entries copied as they are encoded in another GGUF file (its bytes from 24 to `metadataEnd`). */
export interface EncodedMetadata {
  count: number;
  bytes: Uint8Array;
}

/**
 * Encodes a GGUF v3 header (magic through tensor directory, padded to the 32-byte alignment) and returns it with
 * each tensor's offset and byte length in the data section. Data written at those offsets completes the file.
 * `copied` entries, when given, come first, byte for byte (a split's first part keeps its model's metadata exactly).
 */
export function encodeGgufHeader(metadata: ReadonlyArray<[string, GgufTypedValue]>, tensors: readonly GgufTensorEntry[], copied?: EncodedMetadata): { header: Buffer; offsets: number[]; sizes: number[] } {
  const header = new ByteSink();
  header.u32(GGUF_MAGIC);
  header.u32(3);
  header.u64(tensors.length);
  header.u64(metadata.length + (copied?.count ?? 0));
  if (copied) header.push(copied.bytes);
  for (const [key, entry] of metadata) {
    header.string(key);
    if (entry.type === "array") {
      header.u32(GgufValueType.ARRAY);
      header.u32(TYPE_IDS[entry.itemType]);
      header.u64(entry.value.length);
      for (let i = 0; i < entry.value.length; i++) header.scalar(entry.itemType, entry.value[i]);
    } else {
      header.u32(TYPE_IDS[entry.type]);
      header.scalar(entry.type, entry.value);
    }
  }
  let offset = 0;
  const offsets: number[] = [];
  const sizes: number[] = [];
  for (const tensor of tensors) {
    const size = tensorByteLength(tensor.type, tensor.shape.reduce((a, b) => a * b, 1));
    header.string(tensor.name);
    header.u32(tensor.shape.length);
    for (const d of tensor.shape) header.u64(d);
    header.u32(tensor.type);
    header.u64(offset);
    offsets.push(offset);
    sizes.push(size);
    offset = Math.ceil((offset + size) / GGUF_DEFAULT_ALIGNMENT) * GGUF_DEFAULT_ALIGNMENT;
  }
  header.push(new Uint8Array((GGUF_DEFAULT_ALIGNMENT - (header.length % GGUF_DEFAULT_ALIGNMENT)) % GGUF_DEFAULT_ALIGNMENT));
  return { header: header.bytes(), offsets, sizes };
}

/**
 * Writes a GGUF v3 file with the given metadata (in order) and tensors (data aligned to 32 bytes).
 * Throws if a tensor's byte length does not match its shape and type.
 */
export function writeGguf(path: string, metadata: ReadonlyArray<[string, GgufTypedValue]>, tensors: readonly GgufTensorInput[]): void {
  const { header, offsets, sizes } = encodeGgufHeader(metadata, tensors);
  tensors.forEach((tensor, i) => {
    if (sizes[i] !== tensor.data.length) {
      throw new RangeError(`tensor '${tensor.name}': ${tensor.data.length} bytes given, shape [${tensor.shape}] needs ${sizes[i]}`);
    }
  });
  const fd = openSync(path, "w");
  try {
    writeSync(fd, header);
    let written = 0;
    tensors.forEach((tensor, i) => {
      if (offsets[i] > written) writeSync(fd, Buffer.alloc(offsets[i] - written));
      writeSync(fd, tensor.data);
      written = offsets[i] + tensor.data.length;
    });
  } finally {
    closeSync(fd);
  }
}

/** Shorthands for typed metadata values. */
export const gguf = {
  u32: (value: number): GgufTypedValue => ({ type: "u32", value }),
  i32: (value: number): GgufTypedValue => ({ type: "i32", value }),
  f32: (value: number): GgufTypedValue => ({ type: "f32", value }),
  bool: (value: boolean): GgufTypedValue => ({ type: "bool", value }),
  string: (value: string): GgufTypedValue => ({ type: "string", value }),
  strings: (value: readonly string[]): GgufTypedValue => ({ type: "array", itemType: "string", value }),
  i32s: (value: ArrayLike<number>): GgufTypedValue => ({ type: "array", itemType: "i32", value }),
  f32s: (value: ArrayLike<number>): GgufTypedValue => ({ type: "array", itemType: "f32", value }),
};
