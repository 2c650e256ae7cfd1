// The reference for quantize_q8_0 is the GGUF encoder itself: activations must quantize byte for byte as
// llama.cpp's CPU path does, and kernels/formats/q8_0.ts is where that definition lives (one reference, no copy).
// quantize_q8_0_wide holds the same quants and scales in the batched matmul's layout: widenQ8_0 maps one to the other.
import { f16ToF32 } from "../formats/f16.js";

export { quantizeQ8_0 as quantizeQ8_0Ref } from "../formats/q8_0.js";

/** Bytes of one wide unit: 4 token rows x 32 int16 quants, then their 4 f32 scales. */
export const Q8_0_WIDE_UNIT_BYTES = 272;

/** Bytes of `rows` token rows of k values in the wide Q8_0 layout (whole groups of four rows). */
export function q8_0WideBytes(rows: number, k: number): number {
  return Math.ceil(rows / 4) * (k / 32) * Q8_0_WIDE_UNIT_BYTES;
}

/**
 * Q8_0 blocks of `rows` token rows of k values ([rows, k/32] x 34 bytes) in the layout of quantize_q8_0_wide: per
 * group of four rows and block, row i's quants as int16 at 64i and its scale as f32 at 256 + 4i; the rows missing
 * from a partial last group are zeros.
 */
export function widenQ8_0(xq: Uint8Array, rows: number, k: number): Uint8Array {
  const blocks = k / 32;
  const out = new Uint8Array(q8_0WideBytes(rows, k));
  const source = new DataView(xq.buffer, xq.byteOffset, xq.byteLength);
  const target = new DataView(out.buffer);
  for (let t = 0; t < rows; t++) {
    for (let b = 0; b < blocks; b++) {
      const from = (t * blocks + b) * 34;
      const unit = ((t >> 2) * blocks + b) * Q8_0_WIDE_UNIT_BYTES;
      const lane = t & 3;
      for (let i = 0; i < 32; i++) target.setInt16(unit + lane * 64 + 2 * i, source.getInt8(from + 2 + i), true);
      target.setFloat32(unit + 256 + lane * 4, f16ToF32(source.getUint16(from, true)), true);
    }
  }
  return out;
}
