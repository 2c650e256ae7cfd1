// Q5_K (GGML type 13): super-blocks of 256 values, 176 bytes each: f16 d and dmin, 12 bytes packing eight 6-bit
// sub-block scales and mins (as Q4_K), 32 bytes of fifth bits, then 128 bytes of low 4-bit quants;
// value = d * scale * q - dmin * min per 32-value sub-block, q in 0..31. Sub-block j's low bits are the low
// (j even) or high (j odd) nibbles of qs[32 * (j >> 1) ..][0..31]; its fifth bits are bit j of qh[0..31].
import { f16ToF32, f32ToF16 } from "./f16.js";
import { type KQuantBlock, QK_K, getScaleMinK4, setScaleMinK4 } from "./k-quant.js";

const BLOCK_BYTES = 176;

/** Encodes floats as Q5_K super-blocks with a simple min/max fit (valid GGML layout; not llama.cpp's optimiser). */
export function quantizeQ5_K(values: Float32Array): Uint8Array {
  if (values.length % QK_K !== 0) throw new RangeError(`Q5_K needs a multiple of ${QK_K} values, got ${values.length}`);
  const blocks = values.length / QK_K;
  const out = new Uint8Array(blocks * BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * QK_K, (b + 1) * QK_K);
    const subScales: number[] = [];
    const subMins: number[] = [];
    for (let j = 0; j < 8; j++) {
      let lo = 0;
      let hi = 0;
      for (let i = 0; i < 32; i++) { lo = Math.min(lo, x[j * 32 + i]); hi = Math.max(hi, x[j * 32 + i]); }
      subScales.push((hi - lo) / 31);
      subMins.push(-lo);
    }
    const base = b * BLOCK_BYTES;
    const dBits = f32ToF16(Math.max(...subScales) / 63);
    const dminBits = f32ToF16(Math.max(...subMins) / 63);
    view.setUint16(base, dBits, true);
    view.setUint16(base + 2, dminBits, true);
    const scales = out.subarray(base + 4, base + 16);
    const qh = out.subarray(base + 16, base + 48);
    const qs = out.subarray(base + 48, base + BLOCK_BYTES);
    const dq = f16ToF32(dBits);
    const dminq = f16ToF32(dminBits);
    for (let j = 0; j < 8; j++) {
      const sc = dq > 0 ? Math.min(63, Math.round(subScales[j] / dq)) : 0;
      const m = dminq > 0 ? Math.min(63, Math.round(subMins[j] / dminq)) : 0;
      setScaleMinK4(scales, j, sc, m);
      const step = dq * sc;
      for (let i = 0; i < 32; i++) {
        const q = step > 0 ? Math.max(0, Math.min(31, Math.round((x[j * 32 + i] + dminq * m) / step))) : 0;
        const byte = (j >> 1) * 32 + i;
        qs[byte] = j % 2 === 0 ? (qs[byte] & 0xf0) | (q & 0xf) : (qs[byte] & 0x0f) | ((q & 0xf) << 4);
        if (q & 16) qh[i] |= 1 << j;
      }
    }
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 256) from Q5_K super-blocks into `out`. Unchecked: `bytes` must hold
 * count / 256 super-blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ5_K(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / QK_K; b++) {
    const base = b * BLOCK_BYTES;
    const d = f16ToF32(view.getUint16(base, true));
    const dmin = f16ToF32(view.getUint16(base + 2, true));
    const scales = bytes.subarray(base + 4, base + 16);
    const qh = base + 16;
    const qs = base + 48;
    for (let j = 0; j < 8; j++) {
      const [sc, m] = getScaleMinK4(scales, j);
      const step = Math.fround(d * sc);
      const offset = Math.fround(dmin * m);
      for (let i = 0; i < 32; i++) {
        const byte = bytes[qs + (j >> 1) * 32 + i];
        const q = (j % 2 === 0 ? byte & 0xf : byte >> 4) | (((bytes[qh + i] >> j) & 1) << 4);
        out[b * QK_K + j * 32 + i] = Math.fround(Math.fround(step * q) - offset);
      }
    }
  }
  return out;
}

/** The integer view of the Q5_K super-block at byte `base` (see KQuantBlock). */
export function unpackQ5_K(bytes: Uint8Array, base: number): KQuantBlock {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scales = new Int32Array(8);
  const mins = new Int32Array(8);
  const quants = new Int32Array(QK_K);
  const packed = bytes.subarray(base + 4, base + 16);
  for (let j = 0; j < 8; j++) {
    [scales[j], mins[j]] = getScaleMinK4(packed, j);
    for (let i = 0; i < 32; i++) {
      const byte = bytes[base + 48 + (j >> 1) * 32 + i];
      quants[j * 32 + i] = (j % 2 === 0 ? byte & 0xf : byte >> 4) | (((bytes[base + 16 + i] >> j) & 1) << 4);
    }
  }
  return { d: f16ToF32(view.getUint16(base, true)), dmin: f16ToF32(view.getUint16(base + 2, true)), subBlockSize: 32, scales, mins, quants };
}
