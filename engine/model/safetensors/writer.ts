// Writes safetensors files and sharded Hugging Face sets (model-0000i-of-0000n.safetensors + model.safetensors.index.json).
// Tensor bytes may be produced lazily, chunk by chunk, so a writer never holds a whole model in memory.
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Element types loom writes to safetensors (the safetensors spelling). */
export type SafetensorsDtype = "F32" | "F16" | "BF16";

/** Bytes per element of each writable dtype. */
export const SAFETENSORS_DTYPE_BYTES: Readonly<Record<SafetensorsDtype, number>> = { F32: 4, F16: 2, BF16: 2 };

/** A tensor to write: little-endian bytes in row-major (PyTorch) order. */
export interface SafetensorsTensorInput {
  name: string;
  dtype: SafetensorsDtype;
  /** PyTorch order: the last dimension is contiguous. */
  shape: readonly number[];
  /** The bytes, whole, or a function yielding them in order as chunks (called once, when the tensor is written). */
  data: Uint8Array | (() => Iterable<Uint8Array>);
}

/** Options for a Hugging Face model directory's weights. */
export interface SafetensorsModelOptions {
  /** Start a new shard before a tensor that would take the current one past this many bytes; omit for one file. */
  shardBytes?: number;
  /** String pairs for each file's `__metadata__` (default `{ format: "pt" }`, which transformers expects). */
  metadata?: Record<string, string>;
  /** Called after each tensor is written, with the running byte count and the total. */
  onTensorWritten?: (name: string, bytesWritten: number, totalBytes: number) => void;
}

/** The files written for a model directory. */
export interface SafetensorsModelFiles {
  /** Weight file names, relative to the directory, in order. */
  files: string[];
  /** `model.safetensors.index.json` when the weights were sharded, else null. */
  indexFile: string | null;
  /** Sum of all tensor bytes (the index's `metadata.total_size`). */
  totalBytes: number;
}

/** Byte length of a tensor of this dtype and shape. */
export function safetensorsByteLength(dtype: SafetensorsDtype, shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1) * SAFETENSORS_DTYPE_BYTES[dtype];
}

/**
 * The encoded header of a safetensors file holding `tensors` in the given order: the 8-byte little-endian
 * length followed by the JSON, padded with spaces so the data section starts 8-byte aligned.
 */
export function encodeSafetensorsHeader(tensors: readonly Omit<SafetensorsTensorInput, "data">[], metadata: Record<string, string> = { format: "pt" }): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const tensor of tensors) {
    if (tensor.name === "__metadata__" || Object.prototype.hasOwnProperty.call(header, tensor.name)) {
      throw new RangeError(`safetensors: duplicate or reserved tensor name '${tensor.name}'`);
    }
    if (!(tensor.dtype in SAFETENSORS_DTYPE_BYTES)) throw new RangeError(`safetensors: tensor '${tensor.name}' has unsupported dtype ${tensor.dtype}`);
    const bytes = safetensorsByteLength(tensor.dtype, tensor.shape);
    header[tensor.name] = { dtype: tensor.dtype, shape: [...tensor.shape], data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const padded = Math.ceil((8 + json.length) / 8) * 8 - 8;
  const out = Buffer.alloc(8 + padded, 0x20);
  out.writeBigUInt64LE(BigInt(padded), 0);
  json.copy(out, 8);
  return out;
}

/** Writes one safetensors file. Throws if a tensor's bytes do not match its dtype and shape. */
export function writeSafetensors(path: string, tensors: readonly SafetensorsTensorInput[], metadata?: Record<string, string>, onTensorWritten?: (name: string, bytes: number) => void): void {
  const header = encodeSafetensorsHeader(tensors, metadata);
  const fd = openSync(path, "w");
  try {
    writeSync(fd, header);
    for (const tensor of tensors) {
      const expected = safetensorsByteLength(tensor.dtype, tensor.shape);
      let written = 0;
      const chunks = tensor.data instanceof Uint8Array ? [tensor.data] : tensor.data();
      for (const chunk of chunks) {
        written += chunk.length;
        if (written > expected) break;
        writeSync(fd, chunk);
      }
      if (written !== expected) {
        const produced = written > expected ? `more than ${expected}` : String(written);
        throw new RangeError(`safetensors: tensor '${tensor.name}' produced ${produced} bytes; shape [${tensor.shape}] ${tensor.dtype} needs ${expected}`);
      }
      onTensorWritten?.(tensor.name, expected);
    }
  } finally {
    closeSync(fd);
  }
}

/** Splits tensors into shards of at most `shardBytes` each (a tensor larger than that gets a shard of its own). */
function planShards(tensors: readonly SafetensorsTensorInput[], shardBytes: number): SafetensorsTensorInput[][] {
  const shards: SafetensorsTensorInput[][] = [];
  let current: SafetensorsTensorInput[] = [];
  let currentBytes = 0;
  for (const tensor of tensors) {
    const bytes = safetensorsByteLength(tensor.dtype, tensor.shape);
    if (current.length > 0 && currentBytes + bytes > shardBytes) {
      shards.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(tensor);
    currentBytes += bytes;
  }
  if (current.length > 0) shards.push(current);
  return shards;
}

/**
 * Writes a model's weights into `directory` as Hugging Face does: `model.safetensors` when everything fits in one
 * shard (or no shard size is given), else `model-00001-of-0000N.safetensors`... plus `model.safetensors.index.json`.
 */
export function writeSafetensorsModel(directory: string, tensors: readonly SafetensorsTensorInput[], options: SafetensorsModelOptions = {}): SafetensorsModelFiles {
  const totalBytes = tensors.reduce((sum, t) => sum + safetensorsByteLength(t.dtype, t.shape), 0);
  const shards = options.shardBytes === undefined ? [[...tensors]] : planShards(tensors, options.shardBytes);
  let written = 0;
  const report = (name: string, bytes: number) => {
    written += bytes;
    options.onTensorWritten?.(name, written, totalBytes);
  };
  if (shards.length <= 1) {
    writeSafetensors(join(directory, "model.safetensors"), tensors, options.metadata, report);
    return { files: ["model.safetensors"], indexFile: null, totalBytes };
  }
  const width = 5;
  const files = shards.map((_, i) => `model-${String(i + 1).padStart(width, "0")}-of-${String(shards.length).padStart(width, "0")}.safetensors`);
  const weightMap: Record<string, string> = {};
  shards.forEach((shard, i) => {
    writeSafetensors(join(directory, files[i]), shard, options.metadata, report);
    for (const tensor of shard) weightMap[tensor.name] = files[i];
  });
  const sortedMap = Object.fromEntries(Object.keys(weightMap).sort().map((name) => [name, weightMap[name]]));
  const indexFile = "model.safetensors.index.json";
  writeFileSync(join(directory, indexFile), JSON.stringify({ metadata: { total_size: totalBytes }, weight_map: sortedMap }, null, 2) + "\n");
  return { files, indexFile, totalBytes };
}
