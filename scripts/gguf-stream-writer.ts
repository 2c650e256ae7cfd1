// Writes a GGUF v3 file whose tensor bytes are produced lazily, one chunk at a time, so a generator never holds
// a whole model in memory (engine/model/gguf/writer.ts takes every tensor's bytes up front).
// NOTE: the byte layout must match engine/model/gguf/writer.ts: v3, metadata in order, 32-byte aligned data.
import { closeSync, openSync, writeSync } from "node:fs";
import { type GgmlType, tensorByteLength } from "../engine/model/dtypes.js";
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufValueType } from "../engine/model/gguf/format.js";
import type { GgufTypedValue } from "../engine/model/gguf/writer.js";

/** A tensor whose GGML bytes are produced when it is written. */
export interface StreamedGgufTensor {
  name: string;
  /** GGML order: shape[0] is the row length. */
  shape: number[];
  type: GgmlType;
  /** Yields the tensor's bytes in order; called once. */
  chunks: () => Iterable<Uint8Array>;
}

const SCALAR_TYPES = {
  u8: [GgufValueType.U8, 1], i8: [GgufValueType.I8, 1], u16: [GgufValueType.U16, 2], i16: [GgufValueType.I16, 2],
  u32: [GgufValueType.U32, 4], i32: [GgufValueType.I32, 4], f32: [GgufValueType.F32, 4], f64: [GgufValueType.F64, 8],
  u64: [GgufValueType.U64, 8], i64: [GgufValueType.I64, 8], bool: [GgufValueType.BOOL, 1], string: [GgufValueType.STRING, 0],
} as const;

type ScalarName = keyof typeof SCALAR_TYPES;

/** Appends little-endian values to one growing buffer. */
class HeaderBytes {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;
  /** The bytes written so far. */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
  private reserve(bytes: number): number {
    if (this.length + bytes > this.buffer.length) {
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + bytes));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const at = this.length;
    this.length += bytes;
    return at;
  }
  zeros(count: number): void {
    this.reserve(count); // Buffer.alloc zero-fills
  }
  // NOTE: reserve() may replace this.buffer, so each method takes the offset before touching the buffer.
  u32(value: number): void {
    const at = this.reserve(4);
    this.buffer.writeUInt32LE(value, at);
  }
  u64(value: number | bigint): void {
    const at = this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), at);
  }
  string(text: string): void {
    const byteLength = Buffer.byteLength(text, "utf8");
    this.u64(byteLength);
    const at = this.reserve(byteLength);
    this.buffer.write(text, at, "utf8");
  }
  scalar(type: ScalarName, value: unknown): void {
    if (type === "string") return this.string(value as string);
    const at = this.reserve(SCALAR_TYPES[type][1]);
    const b = this.buffer;
    switch (type) {
      case "bool": b.writeUInt8(value ? 1 : 0, at); break;
      case "u8": b.writeUInt8(value as number, at); break;
      case "i8": b.writeInt8(value as number, at); break;
      case "u16": b.writeUInt16LE(value as number, at); break;
      case "i16": b.writeInt16LE(value as number, at); break;
      case "u32": b.writeUInt32LE(value as number, at); break;
      case "i32": b.writeInt32LE(value as number, at); break;
      case "f32": b.writeFloatLE(value as number, at); break;
      case "f64": b.writeDoubleLE(value as number, at); break;
      case "u64": b.writeBigUInt64LE(BigInt(value as number), at); break;
      case "i64": b.writeBigInt64LE(BigInt(value as number), at); break;
    }
  }
}

/** Encodes the header (magic through tensor infos, padded to the alignment); returns it and each tensor's data offset. */
function encodeHeader(metadata: ReadonlyArray<[string, GgufTypedValue]>, tensors: readonly StreamedGgufTensor[]): { header: HeaderBytes; offsets: number[]; sizes: number[] } {
  const header = new HeaderBytes();
  header.u32(GGUF_MAGIC);
  header.u32(3);
  header.u64(tensors.length);
  header.u64(metadata.length);
  for (const [key, entry] of metadata) {
    header.string(key);
    if (entry.type === "array") {
      header.u32(GgufValueType.ARRAY);
      header.u32(SCALAR_TYPES[entry.itemType][0]);
      header.u64(entry.value.length);
      for (let i = 0; i < entry.value.length; i++) header.scalar(entry.itemType, entry.value[i]);
    } else {
      header.u32(SCALAR_TYPES[entry.type][0]);
      header.scalar(entry.type, entry.value);
    }
  }
  const offsets: number[] = [];
  const sizes: number[] = [];
  let offset = 0;
  for (const tensor of tensors) {
    const size = tensorByteLength(tensor.type, tensor.shape.reduce((a, b) => a * b, 1));
    header.string(tensor.name);
    header.u32(tensor.shape.length);
    for (const dim of tensor.shape) header.u64(dim);
    header.u32(tensor.type);
    header.u64(offset);
    offsets.push(offset);
    sizes.push(size);
    offset = Math.ceil((offset + size) / GGUF_DEFAULT_ALIGNMENT) * GGUF_DEFAULT_ALIGNMENT;
  }
  header.zeros((GGUF_DEFAULT_ALIGNMENT - (header.length % GGUF_DEFAULT_ALIGNMENT)) % GGUF_DEFAULT_ALIGNMENT);
  return { header, offsets, sizes };
}

/** Total bytes of the tensor data section, for progress reports. */
export function ggufDataBytes(tensors: readonly Pick<StreamedGgufTensor, "shape" | "type">[]): number {
  return tensors.reduce((sum, t) => sum + tensorByteLength(t.type, t.shape.reduce((a, b) => a * b, 1)), 0);
}

/**
 * Writes a GGUF v3 file, pulling each tensor's bytes from its `chunks()` in order.
 * Throws if a tensor yields more or fewer bytes than its shape and type need.
 */
export function writeGgufStreaming(
  path: string,
  metadata: ReadonlyArray<[string, GgufTypedValue]>,
  tensors: readonly StreamedGgufTensor[],
  onTensorWritten?: (name: string, bytes: number) => void,
): void {
  const { header, offsets, sizes } = encodeHeader(metadata, tensors);
  const fd = openSync(path, "w");
  try {
    writeSync(fd, header.bytes());
    let position = 0;
    tensors.forEach((tensor, i) => {
      if (offsets[i] > position) writeSync(fd, Buffer.alloc(offsets[i] - position));
      let written = 0;
      for (const chunk of tensor.chunks()) {
        written += chunk.length;
        if (written > sizes[i]) break;
        writeSync(fd, chunk);
      }
      if (written !== sizes[i]) {
        throw new RangeError(`GGUF tensor '${tensor.name}' produced ${written > sizes[i] ? `more than ${sizes[i]}` : written} bytes; shape [${tensor.shape}] needs ${sizes[i]}`);
      }
      position = offsets[i] + sizes[i];
      onTensorWritten?.(tensor.name, sizes[i]);
    });
  } finally {
    closeSync(fd);
  }
}
