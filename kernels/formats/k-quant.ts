// Shared by the K-quant formats (q4_k.ts, q5_k.ts, q6_k.ts): the super-block size, the 12-byte packing of eight
// 6-bit sub-block scales and mins (GGML's get_scale_min_k4 and its inverse), and the integer view of a super-block
// that the references of the K-quant dot products read.
import { f16ToF32, f32ToF16 } from "./f16.js";

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

/** A min/max fit of one Q4_K/Q5_K super-block: f16 d and dmin, and per 32-value sub-block its scale, min and quants. */
export interface ScaleMinFit {
  dBits: number;
  dminBits: number;
  /** Eight 6-bit sub-block scales and mins. */
  scales: number[];
  mins: number[];
  /** 256 quants in 0..maxQuant. */
  quants: Int32Array;
}

/**
 * Fits 256 values to quants 0..maxQuant per 32-value sub-block with value = d * scale * q - dmin * min (a simple
 * min/max fit, the layout's definition; not llama.cpp's optimiser). Shared by the Q4_K (15) and Q5_K (31) encoders.
 */
export function fitScaleMin(x: Float32Array, maxQuant: number): ScaleMinFit {
  const subScales: number[] = [];
  const subMins: number[] = [];
  for (let j = 0; j < 8; j++) {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 32; i++) { lo = Math.min(lo, x[j * 32 + i]); hi = Math.max(hi, x[j * 32 + i]); }
    subScales.push((hi - lo) / maxQuant);
    subMins.push(-lo);
  }
  const dBits = f32ToF16(Math.max(...subScales) / 63);
  const dminBits = f32ToF16(Math.max(...subMins) / 63);
  const d = f16ToF32(dBits);
  const dmin = f16ToF32(dminBits);
  const scales: number[] = [];
  const mins: number[] = [];
  const quants = new Int32Array(QK_K);
  for (let j = 0; j < 8; j++) {
    const scale = d > 0 ? Math.min(63, Math.round(subScales[j] / d)) : 0;
    const min = dmin > 0 ? Math.min(63, Math.round(subMins[j] / dmin)) : 0;
    scales.push(scale);
    mins.push(min);
    const step = d * scale;
    for (let i = 0; i < 32; i++) {
      quants[j * 32 + i] = step > 0 ? Math.max(0, Math.min(maxQuant, Math.round((x[j * 32 + i] + dmin * min) / step))) : 0;
    }
  }
  return { dBits, dminBits, scales, mins, quants };
}

/**
 * The integer view of a Q4_K/Q5_K super-block at byte `base`: f16 d and dmin first, packed scales and mins at +4,
 * and `quant(j, i)` giving value i of sub-block j.
 */
export function unpackScaleMin(bytes: Uint8Array, base: number, quant: (j: number, i: number) => number): KQuantBlock {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scales = new Int32Array(8);
  const mins = new Int32Array(8);
  const quants = new Int32Array(QK_K);
  const packed = bytes.subarray(base + 4, base + 16);
  for (let j = 0; j < 8; j++) {
    [scales[j], mins[j]] = getScaleMinK4(packed, j);
    for (let i = 0; i < 32; i++) quants[j * 32 + i] = quant(j, i);
  }
  return { d: f16ToF32(view.getUint16(base, true)), dmin: f16ToF32(view.getUint16(base + 2, true)), subBlockSize: 32, scales, mins, quants };
}
