// The descriptors of matmul_segments (matmul_segments.as.ts): several matrix multiplications in one dispatch.

/** The kernels a segment can name, numbered as run() in matmul_segments.as.ts numbers them. */
export const SEGMENT_KERNELS = [
  "matmul_f32", "matmul_f16", "matmul_bf16", "matmul_q8_0", "matmul_q4_0", "matmul_q4_1", "matmul_q5_0", "matmul_q5_1",
  "matmul_q4_k", "matmul_q5_k", "matmul_q6_k", "matmul_q6_k_bytes", "matmul_mxfp4",
] as const;

/** Bytes of one segment's descriptor. */
export const SEGMENT_DESCRIPTOR_BYTES = 36;

/** One matrix multiplication y = x W^T (+ bias) as `kernel` takes it: pointers into the runtime's memory. */
export interface MatmulSegment {
  /** One of SEGMENT_KERNELS. */
  kernel: string;
  /** The input rows in the kernel's activation format. */
  x: number;
  /** The weights, [n, k]. */
  w: number;
  /** The output rows, [rows, n] f32. */
  y: number;
  rows: number;
  k: number;
  n: number;
  /** An f32 [n] added to every output row, when there is one. */
  bias?: number;
}

/**
 * Writes the segments' descriptors into `out` (at least SEGMENT_DESCRIPTOR_BYTES / 4 ints per segment) and returns
 * the number of weight rows of all of them: the count to dispatch matmul_segments over.
 * @throws RangeError when a segment names a kernel matmul_segments does not run.
 */
export function encodeSegments(segments: readonly MatmulSegment[], out: Int32Array): number {
  let start = 0;
  segments.forEach((segment, index) => {
    const kind = (SEGMENT_KERNELS as readonly string[]).indexOf(segment.kernel);
    if (kind < 0) throw new RangeError(`matmul_segments cannot run ${segment.kernel}`);
    out.set([kind, segment.x, segment.w, segment.y, segment.rows, segment.k, segment.n, start, segment.bias ?? 0], index * (SEGMENT_DESCRIPTOR_BYTES / 4));
    start += segment.n;
  });
  return start;
}
