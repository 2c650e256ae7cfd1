// What both backends' vision encoders read of an mmproj file on the host: its shape and checked tensor directory,
// and the small tensors they take as f32 (the learned positions, the projection turned into rows of its outputs).
import { f16ToF32 } from "../../kernels/formats/f16.js";
import { GgmlType, ggmlTypeName } from "../../kernels/formats/types.js";
import { ModelFileError } from "../model/errors.js";
import { readFileRange } from "../model/file-io.js";
import { readGgufHeader } from "../model/gguf/reader.js";
import type { TensorLocation } from "../model/source.js";
import { type VisionConfig, visionConfigFromGguf } from "./clip-config.js";
import { type VisionTensorNames, checkVisionTensors, visionTensorNames } from "./vision-tensors.js";

/** Matrix types the encoders multiply by: their matmul kernels read these as stored. */
export const VISION_MATRIX_TYPES: ReadonlySet<GgmlType> = new Set([GgmlType.F32, GgmlType.F16, GgmlType.BF16]);

/** An mmproj file's encoder shape and tensors, checked. */
export interface VisionFile {
  config: VisionConfig;
  names: VisionTensorNames;
  tensors: Map<string, TensorLocation>;
}

/**
 * Reads the header of the mmproj file at `path` and checks it: Gemma 3's projector, every tensor present with its
 * shape, the matrices F32, F16 or BF16. @throws ModelFileError naming what is wrong.
 */
export function openVisionFile(path: string): VisionFile {
  const header = readGgufHeader(path);
  const config = visionConfigFromGguf(path, header.metadata, header.tensors);
  const tensors = new Map<string, TensorLocation>(header.tensors.map((tensor) => [tensor.name, { ...tensor, path }]));
  checkVisionTensors(path, config, (name) => tensors.get(name)?.shape);
  const names = visionTensorNames(config);
  for (const name of [names.patch, ...names.layers.flatMap((layer) => [layer.q, layer.k, layer.v, layer.output, layer.up, layer.down])]) {
    const type = tensors.get(name)!.type;
    if (!VISION_MATRIX_TYPES.has(type)) throw new ModelFileError(path, `tensor '${name}' has type ${ggmlTypeName(type)}; loom's vision encoder reads F32, F16 and BF16 matrices`);
  }
  return { config, names, tensors };
}

/** The learned positions as f32 rows [patches, hidden] (the file's [hidden, patches] in GGML order). */
export function positionRows(file: VisionFile): Float32Array {
  return readFloats(file.tensors.get(file.names.positions)!);
}

/**
 * The projection as f32 rows [outputSize, hidden], one per output, as matmul kernels read a weight (the file stores
 * it [outputSize, hidden] in GGML order: rows of outputSize values).
 */
export function projectionRows(file: VisionFile): Float32Array {
  const { hiddenSize, outputSize } = file.config;
  return transpose(readFloats(file.tensors.get(file.names.projection)!), hiddenSize, outputSize);
}

/** A 1-D or 2-D F32, F16 or BF16 tensor of the file as f32 values. */
function readFloats(tensor: TensorLocation): Float32Array {
  const bytes = readFileRange(tensor.path, tensor.fileOffset, tensor.byteLength);
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (tensor.type === GgmlType.F32) return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + count * 4));
  if (tensor.type === GgmlType.F16) return Float32Array.from({ length: count }, (_, i) => f16ToF32(view.getUint16(i * 2, true)));
  if (tensor.type === GgmlType.BF16) return Float32Array.from({ length: count }, (_, i) => new Float32Array(new Uint32Array([view.getUint16(i * 2, true) << 16]).buffer)[0]!);
  throw new ModelFileError(tensor.path, `tensor '${tensor.name}' has type ${ggmlTypeName(tensor.type)}; F32, F16 or BF16 expected`);
}

/** values [rows, columns] row-major -> [columns, rows]. */
function transpose(values: Float32Array, rows: number, columns: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < columns; c++) out[c * rows + r] = values[r * columns + c]!;
  return out;
}
