// Reads a model's tensors from disk straight into WebAssembly memory, one positioned read per tensor,
// converting only where a kernel needs another layout (RoPE row order; Q6_K widened to a byte per quant where the
// backend asks; 1-D tensors, and matrices of a type the backend has no kernel for, to f32).
import { closeSync } from "node:fs";
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { firstNonFiniteScale } from "../../../kernels/formats/block-scales.js";
import { ModelFileError } from "../../model/errors.js";
import { openForReading, readFully } from "../../model/file-io.js";
import { dequantize } from "../../../kernels/formats/quantize.js";
import { Q6_K_BLOCK_BYTES, q6kBytesLength } from "../../../kernels/formats/q6_k-bytes.js";
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

/** Where tensors are read to. */
export interface TensorMemory {
  /** Memory for a tensor's final bytes (in the storage type and layout the kernels read). */
  allocate(bytes: number, tensor: TensorLocation): Uint8Array;
  /**
   * Widens `blocks` Q6_K super-blocks, read into `target` from byte `rawOffset` on (its tail), into the whole of
   * `target` in place (kernel widen_q6_k); required when the storage widens Q6_K. Widening in place means a
   * widened tensor needs no second copy of itself at any time.
   */
  widenQ6_K?(target: Uint8Array, rawOffset: number, blocks: number, tensor: TensorLocation): void;
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
 * Reads every tensor of `source`, each into the memory `memory.allocate` hands out for its final size (it is told
 * which tensor asks), and passes it to `placed`: one positioned read per tensor (sliced, for progress), reordering where
 * kernels need it. Matrices whose type is in `storage.kernelTypes` keep their bytes (Q6_K widened to a byte per
 * quant if `storage.widenQ6_K`); other matrices and every 1-D tensor are widened to F32.
 */
export function readTensors(source: Pick<ModelSource, "tensors" | "totalTensorBytes">, storage: WeightStorage, memory: TensorMemory, placed: (tensor: PlacedTensor) => void, onProgress?: (progress: LoadProgress) => void): void {
  if (storage.widenQ6_K && !memory.widenQ6_K) throw new Error("readTensors: the storage widens Q6_K but the memory cannot");
  const descriptors = new Map<string, number>();
  let loadedBytes = 0;
  try {
    for (const tensor of source.tensors.values()) {
      let fd = descriptors.get(tensor.path);
      if (fd === undefined) {
        fd = openForReading(tensor.path);
        descriptors.set(tensor.path, fd);
      }
      placed(readTensor(tensor, fd, storage, memory, (bytes) => {
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
export function loadWeights(source: Pick<ModelSource, "tensors" | "totalTensorBytes">, runtimeOf: (tensor: TensorLocation) => WasmRuntime, storage: WeightStorage, onProgress?: (progress: LoadProgress) => void): Map<string, ResidentTensor> {
  const resident = new Map<string, ResidentTensor>();
  const memory: TensorMemory = {
    allocate(bytes, tensor) {
      const runtime = runtimeOf(tensor);
      return runtime.u8(runtime.alloc(bytes), bytes);
    },
    widenQ6_K(target, rawOffset, blocks, tensor) {
      // One call on this thread: only a single front-to-back pass may widen in place.
      runtimeOf(tensor).call("widen_q6_k", target.byteOffset + rawOffset, target.byteOffset, 0, blocks);
    },
  };
  readTensors(source, storage, memory, ({ name, type, layout, shape, bytes }) => {
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

/**
 * The layout a tensor kept in its own type takes in memory. Experts (3-D tensors) stay as stored: a mixture of
 * experts reads a few of them per token, and its file must fit memory as it is.
 */
function layoutOf(tensor: TensorLocation, storage: WeightStorage): WeightLayout {
  return storage.widenQ6_K && tensor.type === GgmlType.Q6_K && tensor.shape.length === 2 ? "q6_k-bytes" : "as-stored";
}

/** Bytes `tensor` takes once loaded, in the storage type and layout the kernels read: what memory planning counts. */
export function residentBytes(tensor: TensorLocation, storage: WeightStorage): number {
  if (widensToF32(tensor, storage)) return elementCount(tensor.shape) * 4;
  return layoutOf(tensor, storage) === "q6_k-bytes" ? q6kBytesLength(tensor.byteLength) : tensor.byteLength;
}

function readTensor(tensor: TensorLocation, fd: number, storage: WeightStorage, memory: TensorMemory, onBytes: (n: number) => void): PlacedTensor {
  const elements = elementCount(tensor.shape);
  if (widensToF32(tensor, storage)) {
    // 1-D tensors (norms, biases) are tiny and kernels read them as f32.
    const raw = new Uint8Array(tensor.byteLength);
    readInto(fd, tensor, raw, onBytes);
    checkScales(tensor, raw);
    const bytes = memory.allocate(elements * 4, tensor);
    dequantize(tensor.type, raw, elements, new Float32Array(bytes.buffer, bytes.byteOffset, elements));
    return { name: tensor.name, type: GgmlType.F32, layout: "as-stored", shape: tensor.shape, bytes };
  }
  const layout = layoutOf(tensor, storage);
  const bytes = memory.allocate(residentBytes(tensor, storage), tensor);
  if (layout === "q6_k-bytes") {
    // The file's blocks go to the tail, checked there, then are widened over the whole allocation.
    const rawOffset = bytes.length - tensor.byteLength;
    readInto(fd, tensor, bytes.subarray(rawOffset), onBytes);
    checkScales(tensor, bytes.subarray(rawOffset));
    memory.widenQ6_K!(bytes, rawOffset, tensor.byteLength / Q6_K_BLOCK_BYTES, tensor);
  } else {
    readInto(fd, tensor, bytes, onBytes);
    checkScales(tensor, bytes);
  }
  // Rows stay whole in either layout, so the reorder moves the same rows.
  if (tensor.interleavedRopeHeads !== undefined) restoreRotateHalfOrder(tensor, bytes);
  return { name: tensor.name, type: tensor.type, layout, shape: tensor.shape, bytes };
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
