// Q4_0 (GGML type 2): blocks of 32 values, 18 bytes each: an f16 scale d, then 16 bytes of 4-bit quants q (byte j
// holds value j in its low nibble and value j + 16 in its high nibble); value = (q - 8) * d.
import { f16ToF32, f32ToF16 } from "./f16.js";

const QK = 32; // elements per Q4_0 block (BLOCK_LAYOUT in types.ts)

/** Encodes floats as Q4_0 blocks (f16 scale + 16 bytes of nibbles), as GGML's reference quantizer does. */
export function quantizeQ4_0(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`Q4_0 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * 18);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    let max = 0;
    for (let i = 0; i < QK; i++) {
      const v = values[b * QK + i];
      if (Math.abs(v) > amax) { amax = Math.abs(v); max = v; }
    }
    const d = Math.fround(max / -8);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    view.setUint16(b * 18, f32ToF16(d), true);
    for (let j = 0; j < QK / 2; j++) {
      const x0 = Math.fround(values[b * QK + j] * id);
      const x1 = Math.fround(values[b * QK + QK / 2 + j] * id);
      const q0 = Math.min(15, Math.trunc(Math.fround(x0 + 8.5)));
      const q1 = Math.min(15, Math.trunc(Math.fround(x1 + 8.5)));
      out[b * 18 + 2 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 32) from Q4_0 blocks into `out`. Unchecked: `bytes` must hold count / 32
 * blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeQ4_0(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < count / QK; b++) {
    const d = f16ToF32(view.getUint16(b * 18, true));
    for (let j = 0; j < QK / 2; j++) {
      const byte = bytes[b * 18 + 2 + j];
      out[b * QK + j] = Math.fround(((byte & 0xf) - 8) * d);
      out[b * QK + j + QK / 2] = Math.fround(((byte >> 4) - 8) * d);
    }
  }
  return out;
}
