// Q8_0 (GGML type 8): blocks of 32 values, 34 bytes each: an f16 scale d, then 32 int8 quants q; value = q * d.
import { f16ToF32, f32ToF16 } from "./f16.js";

const QK = 32; // elements per Q8_0 block (BLOCK_LAYOUT in types.ts)

// (x + 1.5 * 2^52) - 1.5 * 2^52 rounds a double to the nearest integer, ties to even (for |x| well below 2^51).
const ROUND_MAGIC = 6755399441055744;

/**
 * Encodes floats as Q8_0 blocks (f16 scale + 32 int8). Uses GGML's AVX rounding: q = nearest-even(x * 127/amax),
 * scale = amax/127 stored as f16, so activations quantized here match llama.cpp's CPU path exactly.
 */
export function quantizeQ8_0(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q8_0 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * 34);
  const signed = new Int8Array(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * QK;
    let amax = 0;
    for (let i = 0; i < QK; i++) amax = Math.max(amax, Math.abs(values[base + i]));
    const scale = f32ToF16(Math.fround(amax / 127));
    out[b * 34] = scale & 0xff;
    out[b * 34 + 1] = scale >>> 8;
    const id = amax !== 0 ? Math.fround(127 / amax) : 0;
    for (let i = 0; i < QK; i++) signed[b * 34 + 2 + i] = Math.fround(values[base + i] * id) + ROUND_MAGIC - ROUND_MAGIC;
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 32) from Q8_0 blocks into `out`. Unchecked: `bytes` must hold count / 32
 * blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ8_0(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / QK; b++) {
    const d = f16ToF32(view.getUint16(b * 34, true));
    for (let i = 0; i < QK; i++) out[b * QK + i] = Math.fround(view.getInt8(b * 34 + 2 + i) * d);
  }
  return out;
}
