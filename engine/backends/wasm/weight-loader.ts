// Reads a model's tensors from disk straight into WebAssembly memory, one positioned read per tensor,
// converting only where a kernel needs another layout (RoPE row order; Q6_K widened to a byte per quant where the
// backend asks; 1-D tensors, and matrices of a type the backend has no kernel for, to f32).
import { closeSync } from "node:fs";
import { BLOCK_LAYOUT, GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { firstNonFiniteScale } from "../../../kernels/formats/block-scales.js";
import { ModelFileError } from "../../model/errors.js";
import { openForReading, readFully } from "../../model/file-io.js";
import { dequantize } from "../../../kernels/formats/quantize.js";
import { Q6_K_BLOCK_BYTES, q6kBytesLength, widenQ6_K } from "../../../kernels/formats/q6_k-bytes.js";
import type { ModelSource, TensorLocation } from "../../model/source.js";
import type { WasmRuntime } from "../../../kernels/wasm/runtime.js";

/**
 * How a matrix's bytes are laid out in memory: as its type stores them in GGUF, or (Q6_K only) widened to a byte
 * per quant (kernels/formats/q6_k-bytes.ts).
 */
export type WeightLayout = "as-stored" | "q6_k-bytes";

/** What a backend's kernels read: the matrix types kept (others widen to F32), and whether Q6_K is widened. */
export interface WeightStorage {
  kernelTypes: ReadonlySet<GgmlType>;
  /** Keep Q6_K matrices in the "q6_k-bytes" layout: 1.30x their bytes, no bit unpacking in the kernels. */
  widenQ6_K?: boolean;
}

/** A tensor resident in WebAssembly memory. */
export interface ResidentTensor {
  name: string;
  /** Storage type the kernels read (the file's, or F32 where the backend has no kernel for it). */
  type: GgmlType;
  layout: WeightLayout;
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
  layout: WeightLayout;
  /** GGML order: shape[0] is the row length. */
  shape: number[];
  bytes: Uint8Array;
}

/**
 * Reads every tensor of `source`, each into the memory `allocate` hands out for its final size (it is told which
 * tensor asks), and passes it to `placed`: one positioned read per tensor (sliced, for progress), reordering where
 * kernels need it. Matrices whose type is in `storage.kernelTypes` keep their bytes (Q6_K widened to a byte per
 * quant if `storage.widenQ6_K`); other matrices and every 1-D tensor are widened to F32.
 */
export function readTensors(source: ModelSource, storage: WeightStorage, allocate: (bytes: number, tensor: TensorLocation) => Uint8Array, placed: (tensor: PlacedTensor) => void, onProgress?: (progress: LoadProgress) => void): void {
  const descriptors = new Map<string, number>();
  let loadedBytes = 0;
  try {
    for (const tensor of source.tensors.values()) {
      let fd = descriptors.get(tensor.path);
      if (fd === undefined) {
        fd = openForReading(tensor.path);
        descriptors.set(tensor.path, fd);
      }
      placed(readTensor(tensor, fd, storage, (bytes) => allocate(bytes, tensor), (bytes) => {
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
 * memories; a resident tensor's pointer is into that runtime's memory), in the layouts `storage` asks for.
 */
export function loadWeights(source: ModelSource, runtimeOf: (tensor: TensorLocation) => WasmRuntime, storage: WeightStorage, onProgress?: (progress: LoadProgress) => void): Map<string, ResidentTensor> {
  const resident = new Map<string, ResidentTensor>();
  const allocate = (bytes: number, tensor: TensorLocation) => {
    const runtime = runtimeOf(tensor);
    return runtime.u8(runtime.alloc(bytes), bytes);
  };
  readTensors(source, storage, allocate, ({ name, type, layout, shape, bytes }) => {
    // The view starts at the allocation: its offset into the memory is the pointer.
    resident.set(name, { name, type, layout, shape, pointer: bytes.byteOffset, byteLength: bytes.byteLength });
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
function widensToF32(tensor: TensorLocation, storage: WeightStorage): boolean {
  return tensor.shape.length === 1 ? tensor.type !== GgmlType.F32 : !storage.kernelTypes.has(tensor.type);
}

/** The layout a tensor kept in its own type takes in memory. */
function layoutOf(tensor: TensorLocation, storage: WeightStorage): WeightLayout {
  return storage.widenQ6_K && tensor.type === GgmlType.Q6_K && tensor.shape.length > 1 ? "q6_k-bytes" : "as-stored";
}

/** Bytes `tensor` takes once loaded, in the storage type and layout the kernels read: what memory planning counts. */
export function residentBytes(tensor: TensorLocation, storage: WeightStorage): number {
  if (widensToF32(tensor, storage)) return elementCount(tensor.shape) * 4;
  return layoutOf(tensor, storage) === "q6_k-bytes" ? q6kBytesLength(tensor.byteLength) : tensor.byteLength;
}

// Q6_K is widened a slice of whole super-blocks at a time, so a large table needs no second full-size copy.
const WIDEN_SLICE_BYTES = Q6_K_BLOCK_BYTES * 65536;

function readTensor(tensor: TensorLocation, fd: number, storage: WeightStorage, allocate: (bytes: number) => Uint8Array, onBytes: (n: number) => void): PlacedTensor {
  const elements = elementCount(tensor.shape);
  if (widensToF32(tensor, storage)) {
    // 1-D tensors (norms, biases) are tiny and kernels read them as f32.
    const raw = new Uint8Array(tensor.byteLength);
    readInto(fd, tensor, raw, onBytes);
    checkScales(tensor, raw);
    const bytes = allocate(elements * 4);
    dequantize(tensor.type, raw, elements, new Float32Array(bytes.buffer, bytes.byteOffset, elements));
    return { name: tensor.name, type: GgmlType.F32, layout: "as-stored", shape: tensor.shape, bytes };
  }
  const layout = layoutOf(tensor, storage);
  const bytes = allocate(residentBytes(tensor, storage));
  if (layout === "q6_k-bytes") readWidenedQ6_K(fd, tensor, bytes, onBytes);
  else readInto(fd, tensor, bytes, onBytes);
  if (layout === "as-stored") checkScales(tensor, bytes);
  // Rows stay whole in either layout, so the reorder moves the same rows.
  if (tensor.interleavedRopeHeads !== undefined) restoreRotateHalfOrder(tensor, bytes);
  return { name: tensor.name, type: tensor.type, layout, shape: tensor.shape, bytes };
}

/** Reads a Q6_K tensor into `target` in the "q6_k-bytes" layout, a slice of super-blocks at a time. */
function readWidenedQ6_K(fd: number, tensor: TensorLocation, target: Uint8Array, onBytes: (n: number) => void): void {
  const slice = new Uint8Array(Math.min(tensor.byteLength, WIDEN_SLICE_BYTES));
  for (let done = 0; done < tensor.byteLength; done += slice.length) {
    const raw = slice.subarray(0, Math.min(slice.length, tensor.byteLength - done));
    readFully(fd, tensor.path, raw, tensor.fileOffset + done);
    checkScales(tensor, raw, done / Q6_K_BLOCK_BYTES);
    widenQ6_K(raw, target.subarray(q6kBytesLength(done), q6kBytesLength(done + raw.length)));
    onBytes(raw.length);
  }
}

/**
 * Throws, naming the tensor, if a block of a quantized tensor has an infinite or NaN scale (a corrupt file). `bytes`
 * may be a slice of the tensor starting at block `firstBlock`.
 */
function checkScales(tensor: TensorLocation, bytes: Uint8Array, firstBlock = 0): void {
  const bad = firstNonFiniteScale(tensor.type, bytes);
  if (bad === undefined) return;
  const blocks = Math.floor(tensor.byteLength / BLOCK_LAYOUT[tensor.type].blockBytes);
  throw new ModelFileError(tensor.path, `tensor '${tensor.name}' (${ggmlTypeName(tensor.type)}) has a non-finite scale (f16 bits 0x${bad.bits.toString(16).padStart(4, "0")}) in block ${firstBlock + bad.block} of ${blocks}: the file is corrupt`);
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
