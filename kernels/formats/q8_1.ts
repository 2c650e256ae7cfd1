// Q8_1 (GGML type 9), the activation format llama.cpp's CPU backend pairs with Q4_1 and Q5_1 weights: blocks of 32
// values, 36 bytes each: an f16 scale d, an f16 s = d * sum(q), then 32 int8 quants q; value = q * d. The quants and
// d are Q8_0's (GGML's AVX quantize_row_q8_1: nearest-even of x * 127/amax); s is the f32 product d * sum(q) rounded
// to f16, which the min term of ggml_vec_dot_q4_1_q8_1 / q5_1_q8_1 uses.
import { f32ToF16 } from "./f16.js";

const QK = 32;
export const Q8_1_BLOCK_BYTES = 36;

// (x + 1.5 * 2^52) - 1.5 * 2^52 rounds a double to the nearest integer, ties to even (for |x| well below 2^51).
const ROUND_MAGIC = 6755399441055744;

/** Encodes floats as Q8_1 blocks, byte for byte as llama.cpp's x86 activation quantizer. */
export function quantizeQ8_1(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q8_1 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * Q8_1_BLOCK_BYTES);
  const signed = new Int8Array(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * QK;
    let amax = 0;
    for (let i = 0; i < QK; i++) amax = Math.max(amax, Math.abs(values[base + i]));
    const d = Math.fround(amax / 127);
    const scale = f32ToF16(d);
    out[b * Q8_1_BLOCK_BYTES] = scale & 0xff;
    out[b * Q8_1_BLOCK_BYTES + 1] = scale >>> 8;
    const id = amax !== 0 ? Math.fround(127 / amax) : 0;
    let sum = 0;
    for (let i = 0; i < QK; i++) {
      const q = Math.fround(values[base + i] * id) + ROUND_MAGIC - ROUND_MAGIC;
      signed[b * Q8_1_BLOCK_BYTES + 4 + i] = q;
      sum += q;
    }
    const s = f32ToF16(Math.fround(d * sum));
    out[b * Q8_1_BLOCK_BYTES + 2] = s & 0xff;
    out[b * Q8_1_BLOCK_BYTES + 3] = s >>> 8;
  }
  return out;
}
