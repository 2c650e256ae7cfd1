// Shared by the K-quant formats (q4_k.ts, q5_k.ts, q6_k.ts): the super-block size, the 12-byte packing of eight
// 6-bit sub-block scales and mins (GGML's get_scale_min_k4 and its inverse), and the integer view of a super-block
// that the references of the K-quant dot products read.

/** Elements per K-quant super-block (QK_K in GGML). */
export const QK_K = 256;

/** Packs the 6-bit scale and min of sub-block j (0..7) into a 12-byte scales array. */
export function setScaleMinK4(scales: Uint8Array, j: number, scale: number, min: number): void {
  if (j < 4) {
    scales[j] = (scales[j] & 0xc0) | scale;
    scales[j + 4] = (scales[j + 4] & 0xc0) | min;
  } else {
    scales[j + 4] = (scale & 0xf) | ((min & 0xf) << 4);
    scales[j - 4] = (scales[j - 4] & 0x3f) | ((scale >> 4) << 6);
    scales[j] = (scales[j] & 0x3f) | ((min >> 4) << 6);
  }
}

/** Unpacks sub-block j's 6-bit scale and min from a 12-byte scales array (GGML's get_scale_min_k4). */
export function getScaleMinK4(scales: Uint8Array, j: number): [number, number] {
  if (j < 4) return [scales[j] & 63, scales[j + 4] & 63];
  return [(scales[j + 4] & 0xf) | ((scales[j - 4] >> 6) << 4), (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4)];
}

/**
 * One K-quant super-block as integers: value i = d * scales[s] * quants[i] - dmin * mins[s], s = i / subBlockSize.
 * The dot-product references multiply these exactly, as llama.cpp's integer kernels do.
 */
export interface KQuantBlock {
  d: number;
  dmin: number;
  /** 32 for Q4_K and Q5_K (eight sub-blocks), 16 for Q6_K (sixteen). */
  subBlockSize: number;
  scales: Int32Array;
  mins: Int32Array;
  /** 256 quants, Q6_K's already offset by -32. */
  quants: Int32Array;
}
