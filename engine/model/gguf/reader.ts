// Reads a GGUF file's header (metadata and tensor directory) by range; tensor data is left on disk
// so that loaders can read each tensor straight into its final buffer.
import { closeSync, fstatSync, readSync } from "node:fs";
import { ModelFileError } from "../errors.js";
import { openForReading } from "../file-io.js";
import { BLOCK_LAYOUT, type GgmlType, ggmlTypeName, isSupportedType, tensorByteLength } from "../../../kernels/formats/types.js";
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufValueType, SCALAR_BYTES, type GgufValue } from "./format.js";

/** One tensor's directory entry. */
export interface GgufTensorInfo {
  name: string;
  /** GGML order: shape[0] is the fastest-varying (row length). */
  shape: number[];
  type: GgmlType;
  /** Absolute byte offset of the tensor's data in the file. */
  fileOffset: number;
  byteLength: number;
}

/** The parsed header of a GGUF file. */
export interface GgufHeader {
  path: string;
  version: number;
  fileSize: number;
  metadata: Map<string, GgufValue>;
  /** Byte offset where the metadata entries end and the tensor directory begins (they start at byte 24). */
  metadataEnd: number;
  tensors: GgufTensorInfo[];
  /** Absolute offset where tensor data begins. */
  dataOffset: number;
}

// Bounds that keep a corrupt header from asking for absurd allocations.
const MAX_STRING_BYTES = 1 << 26;
const MAX_DIMS = 4;

/** Buffered little-endian reader over a file descriptor that never reads past the file's end. */
class HeaderCursor {
  private chunk = Buffer.alloc(1 << 20);
  private chunkStart = 0;
  private chunkEnd = 0;
  position = 0;
  // ignoreBOM keeps a leading U+FEFF: Gemma's vocabulary has "\uFEFF//" beside "//".
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  constructor(
    private readonly fd: number,
    readonly fileSize: number,
    private readonly path: string,
  ) {}

  fail(problem: string): never {
    throw new ModelFileError(this.path, problem);
  }

  /** Returns a buffer whose [offset, offset + n) holds the next n bytes, and advances. */
  private take(n: number, what: string): { buffer: Buffer; offset: number } {
    if (this.position + n > this.fileSize) {
      this.fail(`truncated GGUF header: ${what} at byte ${this.position} runs past the end of the ${this.fileSize}-byte file`);
    }
    if (this.position < this.chunkStart || this.position + n > this.chunkEnd) {
      if (n > this.chunk.length) this.chunk = Buffer.alloc(n);
      const wanted = Math.min(this.chunk.length, this.fileSize - this.position);
      let got = 0;
      while (got < wanted) {
        const read = readSync(this.fd, this.chunk, got, wanted - got, this.position + got);
        if (read === 0) break;
        got += read;
      }
      this.chunkStart = this.position;
      this.chunkEnd = this.position + got;
      if (got < n) this.fail(`could not read ${what} at byte ${this.position}`);
    }
    const offset = this.position - this.chunkStart;
    this.position += n;
    return { buffer: this.chunk, offset };
  }

  u8(what: string): number { const { buffer, offset } = this.take(1, what); return buffer.readUInt8(offset); }
  u32(what: string): number { const { buffer, offset } = this.take(4, what); return buffer.readUInt32LE(offset); }
  u64(what: string): number {
    const { buffer, offset } = this.take(8, what);
    const value = buffer.readBigUInt64LE(offset);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} is ${value}, which is not a plausible size`);
    return Number(value);
  }

  string(what: string): string {
    const length = this.u64(`length of ${what}`);
    if (length > MAX_STRING_BYTES || length > this.fileSize - this.position) {
      this.fail(`${what} claims ${length} bytes, more than the file holds`);
    }
    const { buffer, offset } = this.take(length, what);
    try {
      return this.decoder.decode(buffer.subarray(offset, offset + length));
    } catch {
      return this.fail(`${what} is not valid UTF-8`);
    }
  }

  scalar(type: GgufValueType, what: string): number | bigint | boolean {
    const width = SCALAR_BYTES[type];
    if (width === undefined) this.fail(`${what} has unknown value type ${type}`);
    const { buffer, offset } = this.take(width, what);
    switch (type) {
      case GgufValueType.U8: return buffer.readUInt8(offset);
      case GgufValueType.I8: return buffer.readInt8(offset);
      case GgufValueType.U16: return buffer.readUInt16LE(offset);
      case GgufValueType.I16: return buffer.readInt16LE(offset);
      case GgufValueType.U32: return buffer.readUInt32LE(offset);
      case GgufValueType.I32: return buffer.readInt32LE(offset);
      case GgufValueType.F32: return buffer.readFloatLE(offset);
      case GgufValueType.F64: return buffer.readDoubleLE(offset);
      case GgufValueType.BOOL: return buffer.readUInt8(offset) !== 0;
      case GgufValueType.U64: return narrow(buffer.readBigUInt64LE(offset));
      case GgufValueType.I64: return narrow(buffer.readBigInt64LE(offset));
      default: return this.fail(`${what} has unknown value type ${type}`);
    }
  }

  value(type: number, what: string, depth = 0): GgufValue {
    if (type === GgufValueType.STRING) return this.string(what);
    if (type !== GgufValueType.ARRAY) return this.scalar(type, what);
    if (depth > 2) this.fail(`${what} nests arrays too deeply`);
    const itemType = this.u32(`item type of ${what}`);
    const count = this.u64(`length of ${what}`);
    const width = SCALAR_BYTES[itemType as GgufValueType];
    // Each item takes at least one byte (strings at least eight), so the count is bounded by what remains.
    const minimumItemBytes = itemType === GgufValueType.STRING ? 8 : (width ?? 1);
    if (count * minimumItemBytes > this.fileSize - this.position) {
      this.fail(`${what} claims ${count} items, more than the file holds`);
    }
    if (itemType === GgufValueType.STRING) {
      const items: string[] = new Array(count);
      for (let i = 0; i < count; i++) items[i] = this.string(`${what}[${i}]`);
      return items;
    }
    if (itemType === GgufValueType.ARRAY) {
      const items: GgufValue[] = [];
      for (let i = 0; i < count; i++) items.push(this.value(GgufValueType.ARRAY, `${what}[${i}]`, depth + 1));
      return items;
    }
    if (width === undefined) this.fail(`${what} has unknown item type ${itemType}`);
    return this.numericArray(itemType as GgufValueType, count, width, what);
  }

  private numericArray(type: GgufValueType, count: number, width: number, what: string): GgufValue {
    const bytes = new Uint8Array(count * width);
    let done = 0;
    const step = 1 << 20;
    while (done < bytes.length) {
      const n = Math.min(step, bytes.length - done);
      const { buffer, offset } = this.take(n, what);
      bytes.set(buffer.subarray(offset, offset + n), done);
      done += n;
    }
    const b = bytes.buffer;
    switch (type) {
      case GgufValueType.U8: return bytes;
      case GgufValueType.I8: return new Int8Array(b);
      case GgufValueType.U16: return new Uint16Array(b);
      case GgufValueType.I16: return new Int16Array(b);
      case GgufValueType.U32: return new Uint32Array(b);
      case GgufValueType.I32: return new Int32Array(b);
      case GgufValueType.F32: return new Float32Array(b);
      case GgufValueType.F64: return new Float64Array(b);
      case GgufValueType.U64: return new BigUint64Array(b);
      case GgufValueType.I64: return new BigInt64Array(b);
      case GgufValueType.BOOL: return Array.from(bytes, (v) => v !== 0);
      default: return this.fail(`${what} has unknown item type ${type}`);
    }
  }
}

function narrow(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value;
}

/**
 * Reads the header of a GGUF v2 or v3 file: metadata and the tensor directory, validated against the file size.
 * Throws {@link ModelFileError} naming the file for truncated, corrupt or unsupported files.
 */
export function readGgufHeader(path: string): GgufHeader {
  const fd = openForReading(path);
  try {
    const fileSize = fstatSync(fd).size;
    const cursor: HeaderCursor = new HeaderCursor(fd, fileSize, path);
    if (fileSize < 24) cursor.fail(`not a GGUF file: only ${fileSize} bytes`);
    const magic = cursor.u32("magic");
    if (magic !== GGUF_MAGIC) cursor.fail("not a GGUF file: the first four bytes are not 'GGUF'");
    const version = cursor.u32("version");
    if (version !== 2 && version !== 3) cursor.fail(`GGUF version ${version} is not supported (loom reads versions 2 and 3)`);
    const tensorCount = cursor.u64("tensor count");
    const metadataCount = cursor.u64("metadata count");
    if (tensorCount > fileSize / 24 || metadataCount > fileSize / 12) {
      cursor.fail(`header claims ${tensorCount} tensors and ${metadataCount} metadata entries, more than the file can hold`);
    }

    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < metadataCount; i++) {
      const key = cursor.string(`metadata key #${i}`);
      const type = cursor.u32(`value type of '${key}'`);
      metadata.set(key, cursor.value(type, `metadata '${key}'`));
    }
    const metadataEnd = cursor.position;

    const alignmentValue = metadata.get("general.alignment") ?? GGUF_DEFAULT_ALIGNMENT;
    const alignment = typeof alignmentValue === "number" ? alignmentValue : NaN;
    if (!Number.isInteger(alignment) || alignment <= 0 || alignment % 8 !== 0) {
      cursor.fail(`general.alignment ${String(alignmentValue)} is not a positive multiple of 8`);
    }

    const pending: Array<Omit<GgufTensorInfo, "fileOffset"> & { relativeOffset: number }> = [];
    for (let i = 0; i < tensorCount; i++) {
      const name = cursor.string(`tensor #${i} name`);
      const dims = cursor.u32(`dimension count of tensor '${name}'`);
      if (dims < 1 || dims > MAX_DIMS) cursor.fail(`tensor '${name}' has ${dims} dimensions (1 to ${MAX_DIMS} allowed)`);
      const shape: number[] = [];
      for (let d = 0; d < dims; d++) shape.push(cursor.u64(`dimension ${d} of tensor '${name}'`));
      const type = cursor.u32(`type of tensor '${name}'`);
      const relativeOffset = cursor.u64(`offset of tensor '${name}'`);
      if (!isSupportedType(type)) {
        cursor.fail(`tensor '${name}' has type ${ggmlTypeName(type)}, which loom does not support (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, MXFP4)`);
      }
      const elements = shape.reduce((a, b) => a * b, 1);
      if (!Number.isSafeInteger(elements) || elements > fileSize * 8) cursor.fail(`tensor '${name}' shape [${shape}] is larger than the file`);
      let byteLength: number;
      try {
        byteLength = tensorByteLength(type, elements);
      } catch (error) {
        cursor.fail(`tensor '${name}': ${(error as Error).message}`);
      }
      const { blockElements } = BLOCK_LAYOUT[type];
      if (shape[0] % blockElements !== 0) {
        cursor.fail(`tensor '${name}' rows of ${shape[0]} are not a multiple of the ${ggmlTypeName(type)} block size ${blockElements}`);
      }
      pending.push({ name, shape, type, byteLength, relativeOffset });
    }

    const dataOffset = Math.ceil(cursor.position / alignment) * alignment;
    const tensors: GgufTensorInfo[] = pending.map(({ relativeOffset, ...tensor }) => {
      const fileOffset = dataOffset + relativeOffset;
      if (relativeOffset % alignment !== 0) cursor.fail(`tensor '${tensor.name}' offset ${relativeOffset} is not aligned to ${alignment}`);
      if (fileOffset + tensor.byteLength > fileSize) {
        cursor.fail(`truncated: tensor '${tensor.name}' needs bytes ${fileOffset}..${fileOffset + tensor.byteLength} but the file has ${fileSize}`);
      }
      return { ...tensor, fileOffset };
    });
    return { path, version, fileSize, metadata, metadataEnd, tensors, dataOffset };
  } finally {
    closeSync(fd);
  }
}
