// Q5_K (GGML type 13): super-blocks of 256 values, 176 bytes each: f16 d and dmin, 12 bytes packing eight 6-bit
// sub-block scales and mins (as Q4_K), 32 bytes of fifth bits, then 128 bytes of low 4-bit quants;
// value = d * scale * q - dmin * min per 32-value sub-block, q in 0..31. Sub-block j's low bits are the low
// (j even) or high (j odd) nibbles of qs[32 * (j >> 1) ..][0..31]; its fifth bits are bit j of qh[0..31].
import { f16ToF32 } from "./f16.js";
import { type KQuantBlock, QK_K, fitScaleMin, getScaleMinK4, setScaleMinK4, unpackScaleMin } from "./k-quant.js";

const BLOCK_BYTES = 176;

/** Encodes floats as Q5_K super-blocks with a simple min/max fit (valid GGML layout; not llama.cpp's optimiser). */
export function quantizeQ5_K(values: Float32Array): Uint8Array {
  if (values.length % QK_K !== 0) throw new RangeError(`Q5_K needs a multiple of ${QK_K} values, got ${values.length}`);
  const blocks = values.length / QK_K;
  const out = new Uint8Array(blocks * BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const fit = fitScaleMin(values.subarray(b * QK_K, (b + 1) * QK_K), 31);
    const base = b * BLOCK_BYTES;
    view.setUint16(base, fit.dBits, true);
    view.setUint16(base + 2, fit.dminBits, true);
    const scales = out.subarray(base + 4, base + 16);
    const qh = out.subarray(base + 16, base + 48);
    const qs = out.subarray(base + 48, base + BLOCK_BYTES);
    for (let j = 0; j < 8; j++) {
      setScaleMinK4(scales, j, fit.scales[j], fit.mins[j]);
      for (let i = 0; i < 32; i++) {
        const q = fit.quants[j * 32 + i];
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
  return unpackScaleMin(bytes, base, (j, i) => {
    const byte = bytes[base + 48 + (j >> 1) * 32 + i];
    return (j % 2 === 0 ? byte & 0xf : byte >> 4) | (((bytes[base + 16 + i] >> j) & 1) << 4);
  });
}
