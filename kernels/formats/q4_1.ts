// Q4_1 (GGML type 3): blocks of 32 values, 20 bytes each: an f16 scale d, an f16 minimum m, then 16 bytes of 4-bit
// quants q (byte j holds value j in its low nibble and value j + 16 in its high nibble); value = q * d + m.
import { f16ToF32, f32ToF16 } from "./f16.js";

const QK = 32; // elements per Q4_1 block (BLOCK_LAYOUT in types.ts)
const BYTES = 20;

/** Encodes floats as Q4_1 blocks (min/max fit), as GGML's reference quantizer (quantize_row_q4_1_ref) does. */
export function quantizeQ4_1(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q4_1 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < QK; i++) {
      const v = values[b * QK + i];
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const d = Math.fround(Math.fround(max - min) / 15);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    view.setUint16(b * BYTES, f32ToF16(d), true);
    view.setUint16(b * BYTES + 2, f32ToF16(min), true);
    for (let j = 0; j < QK / 2; j++) {
      const x0 = Math.fround(Math.fround(values[b * QK + j] - min) * id);
      const x1 = Math.fround(Math.fround(values[b * QK + QK / 2 + j] - min) * id);
      const q0 = Math.min(15, Math.trunc(Math.fround(x0 + 0.5)));
      const q1 = Math.min(15, Math.trunc(Math.fround(x1 + 0.5)));
      out[b * BYTES + 4 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 32) from Q4_1 blocks into `out`. Unchecked: `bytes` must hold count / 32
 * blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ4_1(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / QK; b++) {
    const d = f16ToF32(view.getUint16(b * BYTES, true));
    const m = f16ToF32(view.getUint16(b * BYTES + 2, true));
    for (let j = 0; j < QK / 2; j++) {
      const byte = bytes[b * BYTES + 4 + j];
      out[b * QK + j] = Math.fround(Math.fround((byte & 0xf) * d) + m);
      out[b * QK + j + QK / 2] = Math.fround(Math.fround((byte >> 4) * d) + m);
    }
  }
  return out;
}
