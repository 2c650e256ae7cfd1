// Q5_1 (GGML type 7): blocks of 32 values, 24 bytes each: an f16 scale d, an f16 minimum m, 4 bytes qh (fifth bits,
// as Q5_0), then 16 bytes of low nibbles (as Q5_0); value = q * d + m with q = nibble | fifth bit << 4.
import { f16ToF32, f32ToF16 } from "./f16.js";
import { pack5, unpack5 } from "./q5_0.js";

const QK = 32; // elements per Q5_1 block (BLOCK_LAYOUT in types.ts)
const BYTES = 24;

/** Encodes floats as Q5_1 blocks (min/max fit), as GGML's reference quantizer (quantize_row_q5_1_ref) does. */
export function quantizeQ5_1(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q5_1 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * BYTES);
  const view = new DataView(out.buffer);
  const quants = new Int32Array(QK);
  for (let b = 0; b < blocks; b++) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < QK; i++) {
      const v = values[b * QK + i];
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const d = Math.fround(Math.fround(max - min) / 31);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    view.setUint16(b * BYTES, f32ToF16(d), true);
    view.setUint16(b * BYTES + 2, f32ToF16(min), true);
    for (let i = 0; i < QK; i++) {
      const x = Math.fround(Math.fround(values[b * QK + i] - min) * id);
      quants[i] = Math.trunc(Math.fround(x + 0.5)) & 0xff;
    }
    pack5(quants, out, b * BYTES + 4, b * BYTES + 8);
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 32) from Q5_1 blocks into `out`. Unchecked: `bytes` must hold count / 32
 * blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ5_1(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const quants = new Int32Array(QK);
  for (let b = 0; b < count / QK; b++) {
    const d = f16ToF32(view.getUint16(b * BYTES, true));
    const m = f16ToF32(view.getUint16(b * BYTES + 2, true));
    unpack5(bytes, b * BYTES + 4, b * BYTES + 8, quants);
    for (let i = 0; i < QK; i++) out[b * QK + i] = Math.fround(Math.fround(quants[i] * d) + m);
  }
  return out;
}
