// Reference matrix multiplications y = x W^T (plain TypeScript, f64 accumulation), for every weight type.
import { f16ToF32 } from "../formats/f16.js";
import { dequantize } from "../formats/quantize.js";
import type { GgmlType } from "../formats/types.js";
import { unpackQ4_K } from "../formats/q4_k.js";
import { unpackQ5_K } from "../formats/q5_k.js";
import { unpackQ6_K } from "../formats/q6_k.js";
import { Q8_K_BLOCK_BYTES } from "../formats/q8_k.js";
import { unpack5 } from "../formats/q5_0.js";
import { MXFP4_KVALUES, e8m0Half } from "../formats/mxfp4.js";

/** y[t][j] = sum_i x[t][i] * w[j][i]. x: [rows, k], w: [n, k] (already floats), y: [rows, n]. */
export function matmulRef(x: Float32Array, w: Float32Array, rows: number, k: number, n: number): Float32Array {
  const y = new Float32Array(rows * n);
  for (let t = 0; t < rows; t++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let i = 0; i < k; i++) s += x[t * k + i] * w[j * k + i];
      y[t * n + j] = s;
    }
  }
  return y;
}

/** As matmulRef with w in a float storage type (F32, F16, BF16) given as raw bytes. */
export function matmulFloatRef(x: Float32Array, type: GgmlType, w: Uint8Array, rows: number, k: number, n: number): Float32Array {
  return matmulRef(x, dequantize(type, w, n * k), rows, k, n);
}

/**
 * Quantized y = x W^T as ggml_vec_dot_q8_0_q8_0 defines it: per 32-block the exact integer dot of the quants
 * times d_w * d_x. xq: [rows, k/32] Q8_0; w: [n, k/32] Q8_0 or Q4_0 (quants q - 8 for Q4_0).
 */
export function matmulQuantRef(xq: Uint8Array, w: Uint8Array, weightType: "q8_0" | "q4_0", rows: number, k: number, n: number): Float32Array {
  const blocks = k / 32;
  const wBlockBytes = weightType === "q8_0" ? 34 : 18;
  const xv = new DataView(xq.buffer, xq.byteOffset, xq.byteLength);
  const wv = new DataView(w.buffer, w.byteOffset, w.byteLength);
  const y = new Float32Array(rows * n);
  const quants = new Int32Array(32);
  for (let j = 0; j < n; j++) {
    for (let t = 0; t < rows; t++) {
      let s = 0;
      for (let b = 0; b < blocks; b++) {
        const wb = (j * blocks + b) * wBlockBytes;
        const xb = (t * blocks + b) * 34;
        if (weightType === "q8_0") {
          for (let i = 0; i < 32; i++) quants[i] = wv.getInt8(wb + 2 + i);
        } else {
          for (let i = 0; i < 16; i++) {
            quants[i] = (w[wb + 2 + i] & 0xf) - 8;
            quants[i + 16] = (w[wb + 2 + i] >> 4) - 8;
          }
        }
        let dot = 0;
        for (let i = 0; i < 32; i++) dot += quants[i] * xv.getInt8(xb + 2 + i);
        s += dot * f16ToF32(wv.getUint16(wb, true)) * f16ToF32(xv.getUint16(xb, true));
      }
      y[t * n + j] = s;
    }
  }
  return y;
}

/**
 * y = x W^T for Q4_1, Q5_0 and Q5_1 weights as ggml's x86 CPU kernels define it: per 32-block the exact integer dot of
 * the weight quants (q - 16 for Q5_0) with the activation quants, times d_w * d_x (f32), accumulated; for Q4_1 and
 * Q5_1 (ggml_vec_dot_q4_1_q8_1 / q5_1_q8_1) plus the sum over blocks of m_w * s_x, s_x = d_x * sum(x quants) as the
 * Q8_1 block stores it. xq: [rows, k/32] Q8_0 (Q5_0) or Q8_1 (Q4_1, Q5_1); w: [n, k/32] blocks of `weightType`.
 */
export function matmulLegacyRef(xq: Uint8Array, w: Uint8Array, weightType: "q4_1" | "q5_0" | "q5_1", rows: number, k: number, n: number): Float32Array {
  const blocks = k / 32;
  const wBytes = { q4_1: 20, q5_0: 22, q5_1: 24 }[weightType];
  const xBytes = weightType === "q5_0" ? 34 : 36;
  const xQuants = weightType === "q5_0" ? 2 : 4;
  const xv = new DataView(xq.buffer, xq.byteOffset, xq.byteLength);
  const wv = new DataView(w.buffer, w.byteOffset, w.byteLength);
  const y = new Float32Array(rows * n);
  const quants = new Int32Array(32);
  for (let j = 0; j < n; j++) {
    for (let t = 0; t < rows; t++) {
      let s = 0;
      let mins = 0;
      for (let b = 0; b < blocks; b++) {
        const wb = (j * blocks + b) * wBytes;
        const xb = (t * blocks + b) * xBytes;
        if (weightType === "q4_1") {
          for (let i = 0; i < 16; i++) { quants[i] = w[wb + 4 + i] & 0xf; quants[i + 16] = w[wb + 4 + i] >> 4; }
        } else if (weightType === "q5_0") {
          unpack5(w, wb + 2, wb + 6, quants);
          for (let i = 0; i < 32; i++) quants[i] -= 16;
        } else {
          unpack5(w, wb + 4, wb + 8, quants);
        }
        let dot = 0;
        for (let i = 0; i < 32; i++) dot += quants[i] * xv.getInt8(xb + xQuants + i);
        s += dot * f16ToF32(wv.getUint16(wb, true)) * f16ToF32(xv.getUint16(xb, true));
        if (weightType !== "q5_0") mins += f16ToF32(wv.getUint16(wb + 2, true)) * f16ToF32(xv.getUint16(xb + 2, true));
      }
      y[t * n + j] = s + mins;
    }
  }
  return y;
}

/**
 * y = x W^T for MXFP4 weights against Q8_0 activations, in f32 exactly as ggml_vec_dot_mxfp4_q8_0's scalar loop:
 * per block the exact integer dot of kvalues with the activation quants, then sumf += sumi * (E8M0_half(e) * d_x),
 * every product and sum rounded to f32 in block order (so the WebAssembly kernel matches it bit for bit).
 * xq: [rows, k/32] Q8_0; w: [n, k/32] MXFP4.
 */
export function matmulMxfp4Ref(xq: Uint8Array, w: Uint8Array, rows: number, k: number, n: number): Float32Array {
  const blocks = k / 32;
  const xv = new DataView(xq.buffer, xq.byteOffset, xq.byteLength);
  const y = new Float32Array(rows * n);
  for (let j = 0; j < n; j++) {
    for (let t = 0; t < rows; t++) {
      let s = 0;
      for (let b = 0; b < blocks; b++) {
        const wb = (j * blocks + b) * 17;
        const xb = (t * blocks + b) * 34;
        let dot = 0;
        for (let i = 0; i < 16; i++) {
          dot += MXFP4_KVALUES[w[wb + 1 + i] & 0xf] * xv.getInt8(xb + 2 + i);
          dot += MXFP4_KVALUES[w[wb + 1 + i] >> 4] * xv.getInt8(xb + 18 + i);
        }
        const scale = Math.fround(e8m0Half(w[wb]) * f16ToF32(xv.getUint16(xb, true)));
        s = Math.fround(s + Math.fround(dot * scale));
      }
      y[t * n + j] = s;
    }
  }
  return y;
}

const K_QUANT_UNPACK = { q4_k: unpackQ4_K, q5_k: unpackQ5_K, q6_k: unpackQ6_K };
const K_QUANT_BLOCK_BYTES = { q4_k: 144, q5_k: 176, q6_k: 210 };

/**
 * K-quant y = x W^T as ggml_vec_dot_q4_K_q8_K (and its Q5_K and Q6_K siblings) defines it: per 256-value super-block
 * the exact integer sums of scale * (quants · x) and of min * (x quants of each sub-block), times d_w * d_x and
 * dmin_w * d_x. xq: [rows, k/256] Q8_K (f32 d, 256 int8); w: [n, k/256] super-blocks of `weightType`.
 */
export function matmulKQuantRef(xq: Uint8Array, w: Uint8Array, weightType: "q4_k" | "q5_k" | "q6_k", rows: number, k: number, n: number): Float32Array {
  const blocks = k / 256;
  const xv = new DataView(xq.buffer, xq.byteOffset, xq.byteLength);
  const y = new Float64Array(rows * n);
  for (let j = 0; j < n; j++) {
    for (let b = 0; b < blocks; b++) {
      const block = K_QUANT_UNPACK[weightType](w, (j * blocks + b) * K_QUANT_BLOCK_BYTES[weightType]);
      for (let t = 0; t < rows; t++) {
        const xb = (t * blocks + b) * Q8_K_BLOCK_BYTES;
        let sums = 0;
        let minSums = 0;
        for (let s = 0; s < 256 / block.subBlockSize; s++) {
          let dot = 0;
          let xSum = 0;
          for (let i = s * block.subBlockSize; i < (s + 1) * block.subBlockSize; i++) {
            const xi = xv.getInt8(xb + 4 + i);
            dot += block.quants[i] * xi;
            xSum += xi;
          }
          sums += block.scales[s] * dot;
          minSums += block.mins[s] * xSum;
        }
        const dx = xv.getFloat32(xb, true);
        y[t * n + j] += sums * Math.fround(block.d * dx) - minSums * Math.fround(block.dmin * dx);
      }
    }
  }
  return Float32Array.from(y);
}
