// Q4_K (GGML type 12): super-blocks of 256 values, 144 bytes each: f16 d and dmin, 12 bytes packing eight 6-bit
// sub-block scales and mins, then 128 bytes of 4-bit quants; value = d * scale * q - dmin * min, per 32-value sub-block.
import { f16ToF32 } from "./f16.js";
import { type KQuantBlock, QK_K, fitScaleMin, getScaleMinK4, setScaleMinK4, unpackScaleMin } from "./k-quant.js";

/** Encodes floats as Q4_K super-blocks with a simple min/max fit (valid GGML layout; not llama.cpp's optimiser). */
export function quantizeQ4_K(values: Float32Array): Uint8Array {
  if (values.length % QK_K !== 0) throw new RangeError(`Q4_K needs a multiple of ${QK_K} values, got ${values.length}`);
  const blocks = values.length / QK_K;
  const out = new Uint8Array(blocks * 144);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const fit = fitScaleMin(values.subarray(b * QK_K, (b + 1) * QK_K), 15);
    view.setUint16(b * 144, fit.dBits, true);
    view.setUint16(b * 144 + 2, fit.dminBits, true);
    const scales = out.subarray(b * 144 + 4, b * 144 + 16);
    const qs = out.subarray(b * 144 + 16, b * 144 + 144);
    for (let j = 0; j < 8; j++) {
      setScaleMinK4(scales, j, fit.scales[j], fit.mins[j]);
      for (let i = 0; i < 32; i++) {
        const q = fit.quants[j * 32 + i];
        const byte = (j >> 1) * 32 + i; // pairs of sub-blocks share 32 bytes: low nibbles first, then high
        qs[byte] = j % 2 === 0 ? (qs[byte] & 0xf0) | q : (qs[byte] & 0x0f) | (q << 4);
      }
    }
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 256) from Q4_K super-blocks into `out`. Unchecked: `bytes` must hold
 * count / 256 super-blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ4_K(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / QK_K; b++) dequantizeQ4_KBlock(bytes, view, b * 144, out, b * QK_K);
  return out;
}

function dequantizeQ4_KBlock(bytes: Uint8Array, view: DataView, base: number, out: Float32Array, o: number): void {
  const d = f16ToF32(view.getUint16(base, true));
  const dmin = f16ToF32(view.getUint16(base + 2, true));
  const scales = bytes.subarray(base + 4, base + 16);
  let q = base + 16;
  for (let j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
    const [sc1, m1] = getScaleMinK4(scales, is);
    const [sc2, m2] = getScaleMinK4(scales, is + 1);
    const d1 = Math.fround(d * sc1), min1 = Math.fround(dmin * m1);
    const d2 = Math.fround(d * sc2), min2 = Math.fround(dmin * m2);
    for (let l = 0; l < 32; l++) out[o + j + l] = Math.fround(Math.fround(d1 * (bytes[q + l] & 0xf)) - min1);
    for (let l = 0; l < 32; l++) out[o + j + 32 + l] = Math.fround(Math.fround(d2 * (bytes[q + l] >> 4)) - min2);
  }
}

/** The integer view of the Q4_K super-block at byte `base` (see KQuantBlock). */
export function unpackQ4_K(bytes: Uint8Array, base: number): KQuantBlock {
  return unpackScaleMin(bytes, base, (j, i) => {
    const byte = bytes[base + 16 + (j >> 1) * 32 + i];
    return j % 2 === 0 ? byte & 0xf : byte >> 4;
  });
}
