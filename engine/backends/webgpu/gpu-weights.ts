// Weight matrices on a WebGPU device as the matmul and get_rows kernels read them: float types as raw words, Q8_0,
// Q4_0 and MXFP4 as split quants and scales, split by rows into parts that each fit a storage binding.
import { GgmlType, ggmlTypeName } from "../../../kernels/formats/types.js";
import { type SplitBlocks, splitMxfp4, splitQ4_0, splitQ8_0 } from "../../../kernels/webgpu/layouts.js";
import { ModelFileError } from "../../model/errors.js";
import type { PlacedTensor } from "../wasm/weight-loader.js";

/** Float weight types the matmul and get_rows kernels read, by their WEIGHT_TYPE constant. */
export const FLOAT_WEIGHT_TYPES: Partial<Record<GgmlType, number>> = { [GgmlType.F32]: 0, [GgmlType.F16]: 1, [GgmlType.BF16]: 2 };

/** Block-quantized weight types, whose kernels read split quants and scales. */
export const QUANT_WEIGHT_TYPES: Partial<Record<GgmlType, "q8_0" | "q4_0">> = { [GgmlType.Q8_0]: "q8_0", [GgmlType.Q4_0]: "q4_0", [GgmlType.MXFP4]: "q8_0" };

/** How each block-quantized type becomes the GPU layout of its kernel (MXFP4: converted exactly to Q8_0's). */
const SPLIT_BLOCKS: Partial<Record<GgmlType, (bytes: Uint8Array, blocks: number) => SplitBlocks>> = {
  [GgmlType.Q8_0]: splitQ8_0, [GgmlType.Q4_0]: splitQ4_0, [GgmlType.MXFP4]: splitMxfp4,
};

/** Matrix types the shaders read as stored; K-quants arrive widened to F32 (no K-quant shaders yet). */
export const WEBGPU_KERNEL_TYPES: ReadonlySet<GgmlType> = new Set([...Object.keys(FLOAT_WEIGHT_TYPES), ...Object.keys(QUANT_WEIGHT_TYPES)].map(Number));

/** Rows [firstRow, firstRow + rows) of a weight: raw words for float types, split quants and scales for Q8_0/Q4_0. */
export interface WeightPart {
  firstRow: number;
  rows: number;
  data?: GPUBuffer;
  quants?: GPUBuffer;
  scales?: GPUBuffer;
}

/**
 * A weight on the device, W: [n rows, k]. One part, unless the weight is larger than a storage binding may be
 * (maxStorageBufferBindingSize: 128 MiB on some adapters, less than a 151k-token F16 embedding): then it is split by
 * rows, and each matmul or lookup is one dispatch per part.
 */
export interface GpuWeight {
  name: string;
  type: GgmlType;
  shape: number[];
  parts: WeightPart[];
  /** A [k, n, count] expert tensor: each expert's [k, n] matrix as its own weight (and no parts of its own). */
  experts?: GpuWeight[];
}

/**
 * Puts a [k, n] matrix (`tensor.shape`, GGML order) on the device through `upload`, in parts of at most `partBytes`
 * bytes (the largest buffer of a part: its raw rows, or its quants). @throws ModelFileError (naming `path`) for a
 * type no kernel reads; RangeError when one row is over `partBytes`.
 */
export function uploadWeight(tensor: PlacedTensor, upload: (label: string, bytes: ArrayBufferView) => GPUBuffer, partBytes: number, path: string): GpuWeight {
  const [k, n = 1] = tensor.shape;
  const quant = QUANT_WEIGHT_TYPES[tensor.type];
  if (FLOAT_WEIGHT_TYPES[tensor.type] === undefined && !quant) {
    throw new ModelFileError(path, `tensor '${tensor.name}' has type ${ggmlTypeName(tensor.type)}, which has no WebGPU kernel yet `
      + "(F32, F16, BF16, Q8_0, Q4_0 and MXFP4 do): use --backend wasm");
  }
  const rowBytes = tensor.bytes.byteLength / n;
  // The largest buffer of a part is its raw rows (float) or its quants (32 or 16 bytes per 32 values).
  const boundRowBytes = quant ? (k! / 32) * (quant === "q8_0" ? 32 : 16) : rowBytes;
  const rowsPerPart = Math.floor(partBytes / boundRowBytes);
  if (rowsPerPart < 1) throw new RangeError(`tensor '${tensor.name}': one row of ${boundRowBytes} bytes is over the largest weight part (${partBytes} bytes)`);
  const parts: WeightPart[] = [];
  for (let firstRow = 0; firstRow < n; firstRow += rowsPerPart) {
    const rows = Math.min(rowsPerPart, n - firstRow);
    const bytes = tensor.bytes.subarray(firstRow * rowBytes, (firstRow + rows) * rowBytes);
    const label = n > rowsPerPart ? `${tensor.name} rows ${firstRow}-${firstRow + rows}` : tensor.name;
    if (!quant) {
      parts.push({ firstRow, rows, data: upload(label, bytes) });
      continue;
    }
    const blocks = (rows * k!) / 32;
    const { quants, scales } = SPLIT_BLOCKS[tensor.type]!(bytes, blocks);
    parts.push({ firstRow, rows, quants: upload(`${label} quants`, quants), scales: upload(`${label} scales`, scales) });
  }
  return { name: tensor.name, type: tensor.type, shape: tensor.shape, parts };
}
