// Reads safetensors headers (single files and sharded sets) by range; tensor bytes stay on disk.
import { closeSync, existsSync, fstatSync, readFileSync, readSync } from "node:fs";
import { dirname, join } from "node:path";
import { GgmlType, tensorByteLength } from "../../../kernels/formats/types.js";
import { ModelFileError } from "../errors.js";
import { openForReading } from "../file-io.js";

/** One tensor of a safetensors file, located on disk. */
export interface SafetensorsTensor {
  name: string;
  /** Row-major shape as written (PyTorch order: last dimension fastest). */
  shape: number[];
  type: GgmlType;
  path: string;
  fileOffset: number;
  byteLength: number;
}

const DTYPES: Record<string, GgmlType> = { F32: GgmlType.F32, F16: GgmlType.F16, BF16: GgmlType.BF16 };
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

/** Parses one safetensors file's header and validates every tensor's byte range against the file. */
export function readSafetensorsHeader(path: string): SafetensorsTensor[] {
  const fd = openForReading(path);
  try {
    const fileSize = fstatSync(fd).size;
    if (fileSize < 8) throw new ModelFileError(path, `not a safetensors file: only ${fileSize} bytes`);
    const lengthBytes = Buffer.alloc(8);
    readSync(fd, lengthBytes, 0, 8, 0);
    const headerLength = Number(lengthBytes.readBigUInt64LE(0));
    if (headerLength > MAX_HEADER_BYTES || headerLength > fileSize - 8) {
      throw new ModelFileError(path, `safetensors header claims ${headerLength} bytes but the file has ${fileSize}: truncated or not a safetensors file`);
    }
    const headerBytes = Buffer.alloc(headerLength);
    readSync(fd, headerBytes, 0, headerLength, 8);
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(headerBytes.toString("utf8")) as Record<string, unknown>;
    } catch (error) {
      throw new ModelFileError(path, `safetensors header is not valid JSON (${(error as Error).message})`);
    }
    if (header === null || typeof header !== "object" || Array.isArray(header)) {
      throw new ModelFileError(path, "safetensors header is not a JSON object");
    }
    const dataStart = 8 + headerLength;
    const tensors: SafetensorsTensor[] = [];
    for (const [name, entry] of Object.entries(header)) {
      if (name === "__metadata__") continue;
      const info = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
      if (typeof info !== "object" || info === null) throw new ModelFileError(path, `tensor '${name}' has no description`);
      const type = typeof info.dtype === "string" ? DTYPES[info.dtype] : undefined;
      if (type === undefined) {
        throw new ModelFileError(path, `tensor '${name}' has dtype ${String(info.dtype)}, which loom does not support in safetensors (F32, F16, BF16)`);
      }
      const shape = info.shape;
      const offsets = info.data_offsets;
      if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
        throw new ModelFileError(path, `tensor '${name}' has an invalid shape`);
      }
      if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
        throw new ModelFileError(path, `tensor '${name}' has invalid data_offsets`);
      }
      const [begin, end] = offsets as [number, number];
      const expected = tensorByteLength(type, (shape as number[]).reduce((a, b) => a * b, 1));
      if (end - begin !== expected) {
        throw new ModelFileError(path, `tensor '${name}' spans ${end - begin} bytes but shape [${shape}] needs ${expected}`);
      }
      if (dataStart + end > fileSize) {
        throw new ModelFileError(path, `truncated: tensor '${name}' ends at byte ${dataStart + end} but the file has ${fileSize}`);
      }
      tensors.push({ name, shape: shape as number[], type, path, fileOffset: dataStart + begin, byteLength: expected });
    }
    return tensors;
  } finally {
    closeSync(fd);
  }
}

/** Reads every tensor header of a Hugging Face model directory: model.safetensors or the shards its index names. */
export function readSafetensorsDirectory(directory: string): SafetensorsTensor[] {
  const single = join(directory, "model.safetensors");
  const indexPath = join(directory, "model.safetensors.index.json");
  if (existsSync(indexPath)) {
    let index: { weight_map?: Record<string, string> };
    try {
      index = JSON.parse(readFileSync(indexPath, "utf8"));
    } catch (error) {
      throw new ModelFileError(indexPath, `not valid JSON (${(error as Error).message})`);
    }
    if (!index.weight_map || typeof index.weight_map !== "object") throw new ModelFileError(indexPath, "has no weight_map");
    const shards = [...new Set(Object.values(index.weight_map))];
    const tensors = shards.flatMap((shard) => {
      if (typeof shard !== "string" || shard.includes("/") || shard.includes("\\")) {
        throw new ModelFileError(indexPath, `weight_map names an invalid shard file '${String(shard)}'`);
      }
      return readSafetensorsHeader(join(dirname(indexPath), shard));
    });
    for (const name of Object.keys(index.weight_map)) {
      if (!tensors.some((t) => t.name === name)) throw new ModelFileError(indexPath, `tensor '${name}' is listed but missing from its shard`);
    }
    return tensors;
  }
  if (existsSync(single)) return readSafetensorsHeader(single);
  throw new ModelFileError(directory, "no model.safetensors or model.safetensors.index.json in this directory");
}
