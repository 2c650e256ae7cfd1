// Reads a model's tensors from disk straight into WebAssembly memory, one positioned read per tensor,
// converting only where a kernel needs another layout (RoPE row order; 1-D tensors, and matrices of a type the
// backend has no kernel for, to f32).
import { closeSync } from "node:fs";
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { firstNonFiniteScale } from "../../../kernels/formats/block-scales.js";
import { ModelFileError } from "../../model/errors.js";
import { openForReading, readFully } from "../../model/file-io.js";
import { dequantize } from "../../../kernels/formats/quantize.js";
import type { ModelSource, TensorLocation } from "../../model/source.js";
import type { WasmRuntime } from "../../../kernels/wasm/runtime.js";

/** A tensor resident in WebAssembly memory. */
export interface ResidentTensor {
  name: string;
  /** Storage type the kernels read (the file's, or F32 where the backend has no kernel for it). */
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

/** A tensor in memory, in the storage type the kernels read. */
export interface PlacedTensor {
  name: string;
  /** Storage type the kernels read (1-D tensors, and matrices of a type outside `kernelTypes`, widened to F32). */
  type: GgmlType;
  /** GGML order: shape[0] is the row length. */
  shape: number[];
  bytes: Uint8Array;
}

/**
 * Reads every tensor of `source`, each into the memory `allocate` hands out for its final size (it is told which
 * tensor asks), and passes it to `placed`: one positioned read per tensor (sliced, for progress), reordering where
 * kernels need it. Matrices whose type is in `kernelTypes` keep their bytes; other matrices and every 1-D tensor are
 * widened to F32.
 */
export function readTensors(source: ModelSource, kernelTypes: ReadonlySet<GgmlType>, allocate: (bytes: number, tensor: TensorLocation) => Uint8Array, placed: (tensor: PlacedTensor) => void, onProgress?: (progress: LoadProgress) => void): void {
  const descriptors = new Map<string, number>();
  let loadedBytes = 0;
  try {
    for (const tensor of source.tensors.values()) {
      let fd = descriptors.get(tensor.path);
      if (fd === undefined) {
        fd = openForReading(tensor.path);
        descriptors.set(tensor.path, fd);
      }
      placed(readTensor(tensor, fd, kernelTypes, (bytes) => allocate(bytes, tensor), (bytes) => {
        loadedBytes += bytes;
        onProgress?.({ loadedBytes, totalBytes: source.totalTensorBytes });
      }));
    }
  } finally {
    for (const fd of descriptors.values()) closeSync(fd);
  }
}

/**
 * Loads every tensor of `source` into the memory of the runtime `runtimeOf` names for it (the model may span several
 * memories; a resident tensor's pointer is into that runtime's memory), keeping the bytes of matrices whose type is
 * in `kernelTypes`.
 */
export function loadWeights(source: ModelSource, runtimeOf: (tensor: TensorLocation) => WasmRuntime, kernelTypes: ReadonlySet<GgmlType>, onProgress?: (progress: LoadProgress) => void): Map<string, ResidentTensor> {
  const resident = new Map<string, ResidentTensor>();
  const allocate = (bytes: number, tensor: TensorLocation) => {
    const runtime = runtimeOf(tensor);
    return runtime.u8(runtime.alloc(bytes), bytes);
  };
  readTensors(source, kernelTypes, allocate, ({ name, type, shape, bytes }) => {
    // The view starts at the allocation: its offset into the memory is the pointer.
    resident.set(name, { name, type, shape, pointer: bytes.byteOffset, byteLength: bytes.byteLength });
  }, onProgress);
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

/** Whether a tensor is widened to F32 at load (so it takes 4 bytes per element in memory). */
function widensToF32(tensor: TensorLocation, kernelTypes: ReadonlySet<GgmlType>): boolean {
  return tensor.shape.length === 1 ? tensor.type !== GgmlType.F32 : !kernelTypes.has(tensor.type);
}

/** Bytes `tensor` takes once loaded, in the storage type the kernels read: what memory planning counts. */
export function residentBytes(tensor: TensorLocation, kernelTypes: ReadonlySet<GgmlType>): number {
  return widensToF32(tensor, kernelTypes) ? elementCount(tensor.shape) * 4 : tensor.byteLength;
}

function readTensor(tensor: TensorLocation, fd: number, kernelTypes: ReadonlySet<GgmlType>, allocate: (bytes: number) => Uint8Array, onBytes: (n: number) => void): PlacedTensor {
  const elements = elementCount(tensor.shape);
  const widen = widensToF32(tensor, kernelTypes);
  if (widen) {
    // 1-D tensors (norms, biases) are tiny and kernels read them as f32.
    const raw = new Uint8Array(tensor.byteLength);
    readInto(fd, tensor, raw, onBytes);
    checkScales(tensor, raw);
    const bytes = allocate(elements * 4);
    dequantize(tensor.type, raw, elements, new Float32Array(bytes.buffer, bytes.byteOffset, elements));
    return { name: tensor.name, type: GgmlType.F32, shape: tensor.shape, bytes };
  }
  const bytes = allocate(tensor.byteLength);
  readInto(fd, tensor, bytes, onBytes);
  checkScales(tensor, bytes);
  if (tensor.interleavedRopeHeads !== undefined) restoreRotateHalfOrder(tensor, bytes);
  return { name: tensor.name, type: tensor.type, shape: tensor.shape, bytes };
}

/** Throws, naming the tensor, if a block of a quantized tensor has an infinite or NaN scale (a corrupt file). */
function checkScales(tensor: TensorLocation, bytes: Uint8Array): void {
  const bad = firstNonFiniteScale(tensor.type, bytes);
  if (bad === undefined) return;
  throw new ModelFileError(tensor.path, `tensor '${tensor.name}' (${ggmlTypeName(tensor.type)}) has a non-finite scale (f16 bits 0x${bad.bits.toString(16).padStart(4, "0")}) in block ${bad.block} of ${bad.blocks}: the file is corrupt`);
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
