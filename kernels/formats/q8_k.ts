// Q8_K (GGML type 15): the activation format K-quant dot products read, never stored in model files. Blocks of
// 256 values, 292 bytes each: an f32 d, 256 int8 quants, then sixteen int16 sums of 16 consecutive quants
// (what the K-quant kernels need for their mins and offsets); value = q * d.

const QK_K = 256;
/** Bytes of one Q8_K block: f32 d + 256 int8 + 16 int16 sums. */
export const Q8_K_BLOCK_BYTES = 292;

// (x + 1.5 * 2^52) - 1.5 * 2^52 rounds a double to the nearest integer, ties to even (for |x| well below 2^51).
const ROUND_MAGIC = 6755399441055744;

/**
 * Quantizes floats to Q8_K exactly as llama.cpp's CPU backend does (quantize_row_q8_K_ref, which x86 builds call):
 * the value of largest magnitude (the first one, on ties) maps to -127, iscale = -127 / that value in f32,
 * q = min(127, nearest-even(iscale * x)), d = 1 / iscale. An all-zero block has d = 0, zero quants and sums.
 */
export function quantizeQ8_K(values: Float32Array): Uint8Array {
  if (values.length % QK_K !== 0) throw new RangeError(`Q8_K needs a multiple of ${QK_K} values, got ${values.length}`);
  const blocks = values.length / QK_K;
  const out = new Uint8Array(blocks * Q8_K_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * QK_K, (b + 1) * QK_K);
    const base = b * Q8_K_BLOCK_BYTES;
    let extreme = 0;
    let amax = 0;
    for (let i = 0; i < QK_K; i++) {
      const magnitude = Math.abs(x[i]);
      if (magnitude > amax) { amax = magnitude; extreme = x[i]; }
    }
    if (amax === 0) continue; // d, quants and sums stay zero
    const iscale = Math.fround(-127 / extreme);
    for (let i = 0; i < QK_K; i++) {
      view.setInt8(base + 4 + i, Math.min(127, Math.fround(iscale * x[i]) + ROUND_MAGIC - ROUND_MAGIC));
    }
    for (let g = 0; g < QK_K / 16; g++) {
      let sum = 0;
      for (let i = 0; i < 16; i++) sum += view.getInt8(base + 4 + g * 16 + i);
      view.setInt16(base + 4 + QK_K + g * 2, sum, true);
    }
    view.setFloat32(base, Math.fround(1 / iscale), true);
  }
  return out;
}
