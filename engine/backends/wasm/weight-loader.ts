// Reads a model's tensors from disk straight into WebAssembly memory, one positioned read per tensor,
// converting only where a kernel needs another layout (RoPE row order, K-quants, 1-D tensors to f32).
import { closeSync } from "node:fs";
import { GgmlType } from "../../model/dtypes.js";
import { ModelFileError } from "../../model/errors.js";
import { openForReading, readFully } from "../../model/file-io.js";
import { dequantize } from "../../model/quantize.js";
import type { ModelSource, TensorLocation } from "../../model/source.js";
import type { WasmRuntime } from "./runtime.js";

/** A tensor resident in WebAssembly memory. */
export interface ResidentTensor {
  name: string;
  /** Storage type the kernels read (K-quants arrive here already widened to F32). */
  type: GgmlType;
  /** GGML order: shape[0] is the row length. */
  shape: number[];
  pointer: number;
  byteLength: number;
}

/** Progress of a load, for progress bars. */
export interface LoadProgress {
  loadedBytes: number;
  totalBytes: number;
}

// Reading in slices keeps progress reports flowing on large tensors.
const READ_SLICE_BYTES = 64 * 1024 * 1024;

/** Loads every tensor of `source` into `runtime` memory. */
export function loadWeights(source: ModelSource, runtime: WasmRuntime, onProgress?: (progress: LoadProgress) => void): Map<string, ResidentTensor> {
  const resident = new Map<string, ResidentTensor>();
  const descriptors = new Map<string, number>();
  let loadedBytes = 0;
  try {
    for (const tensor of source.tensors.values()) {
      let fd = descriptors.get(tensor.path);
      if (fd === undefined) {
        fd = openForReading(tensor.path);
        descriptors.set(tensor.path, fd);
      }
      resident.set(tensor.name, loadTensor(tensor, fd, runtime, (bytes) => {
        loadedBytes += bytes;
        onProgress?.({ loadedBytes, totalBytes: source.totalTensorBytes });
      }));
    }
  } finally {
    for (const fd of descriptors.values()) closeSync(fd);
  }
  return resident;
}

function readInto(fd: number, tensor: TensorLocation, target: Uint8Array, onBytes: (n: number) => void): void {
  for (let done = 0; done < target.length; done += READ_SLICE_BYTES) {
    const slice = target.subarray(done, Math.min(target.length, done + READ_SLICE_BYTES));
    readFully(fd, tensor.path, slice, tensor.fileOffset + done);
    onBytes(slice.length);
  }
}

function elementCount(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function loadTensor(tensor: TensorLocation, fd: number, runtime: WasmRuntime, onBytes: (n: number) => void): ResidentTensor {
  const elements = elementCount(tensor.shape);
  const widen = tensor.shape.length === 1 ? tensor.type !== GgmlType.F32 : tensor.type === GgmlType.Q4_K || tensor.type === GgmlType.Q6_K;
  if (widen) {
    // 1-D tensors (norms, biases) are tiny and kernels read them as f32; K-quants have no native kernel yet.
    const raw = new Uint8Array(tensor.byteLength);
    readInto(fd, tensor, raw, onBytes);
    const pointer = runtime.alloc(elements * 4);
    dequantize(tensor.type, raw, elements, runtime.f32(pointer, elements));
    return finish(tensor, GgmlType.F32, pointer, elements * 4);
  }
  const pointer = runtime.alloc(tensor.byteLength);
  readInto(fd, tensor, runtime.u8(pointer, tensor.byteLength), onBytes);
  if (tensor.interleavedRopeHeads !== undefined) restoreRotateHalfOrder(tensor, runtime.u8(pointer, tensor.byteLength));
  return finish(tensor, tensor.type, pointer, tensor.byteLength);
}

function finish(tensor: TensorLocation, type: GgmlType, pointer: number, byteLength: number): ResidentTensor {
  return { name: tensor.name, type, shape: tensor.shape, pointer, byteLength };
}

/**
 * Undoes llama.cpp's Q/K row permutation: within each head, GGUF row 2i+s holds Hugging Face row s*(headDim/2)+i.
 * Rows are whole (quantized blocks run along a row), so this moves bytes, never values.
 */
function restoreRotateHalfOrder(tensor: TensorLocation, bytes: Uint8Array): void {
  const heads = tensor.interleavedRopeHeads!;
  const rows = tensor.shape[1];
  if (rows % heads !== 0 || (rows / heads) % 2 !== 0) {
    throw new ModelFileError(tensor.path, `tensor '${tensor.name}' has ${rows} rows, which do not split into ${heads} heads of even size`);
  }
  const headDim = rows / heads;
  const rowBytes = bytes.length / rows;
  const head = new Uint8Array(headDim * rowBytes);
  for (let h = 0; h < heads; h++) {
    const base = h * headDim * rowBytes;
    head.set(bytes.subarray(base, base + head.length));
    for (let i = 0; i < headDim / 2; i++) {
      for (let s = 0; s < 2; s++) {
        const from = (2 * i + s) * rowBytes;
        const to = base + (s * (headDim / 2) + i) * rowBytes;
        bytes.set(head.subarray(from, from + rowBytes), to);
      }
    }
  }
}
