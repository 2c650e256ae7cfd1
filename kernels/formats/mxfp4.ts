// MXFP4 (GGML type 39, OCP microscaling FP4; gpt-oss's experts): blocks of 32 values, 17 bytes each: a shared
// exponent e (u8, E8M0), then 16 bytes of 4-bit codes (byte j holds value j in its low nibble and value j + 16 in its
// high nibble). A code indexes ggml's kvalues_mxfp4, the e2m1 values doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
// negatives, times 2), and value = kvalue * 2^(e - 128): E8M0's 2^(e - 127) halved to undo the doubling
// (GGML_E8M0_TO_FP32_HALF, exact for every e: 2^-128 and 2^-127 are f32 subnormals, 255 gives 2^127, no NaN).
const QK = 32; // elements per MXFP4 block (BLOCK_LAYOUT in types.ts)
const BYTES = 17;

/** ggml's kvalues_mxfp4: code (0..15) -> twice the e2m1 value. Codes 8..15 are 0..7 negated (bit 3 is the sign). */
export const MXFP4_KVALUES: readonly number[] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/** GGML_E8M0_TO_FP32_HALF(e): 2^(e - 128), which ggml builds as the f32 bits 0x00200000 << e (e < 2) or (e - 1) << 23. */
export function e8m0Half(e: number): number {
  return 2 ** (e - 128);
}

/**
 * The shared exponent ggml's quantize_row_mxfp4_ref picks for a block whose largest magnitude is amax:
 * (uint8_t)(floorf(log2f(amax)) - 2 + 127), 0 for amax = 0. log2f rounds to f32 before the floor (so an amax just
 * below a power of two can take that power's exponent), and the float-to-u8 conversion is x86's: truncate to i32
 * (cvttss2si), keep the low byte; an infinite amax gives i32's "indefinite" 0x80000000, so e = 0.
 */
export function mxfp4Exponent(amax: number): number {
  if (!(amax > 0)) return 0;
  const exponent = Math.floor(Math.fround(Math.log2(amax))) - 2 + 127;
  if (!Number.isFinite(exponent)) return 0;
  return exponent & 0xff;
}

/** ggml's best_index_mxfp4: the first code whose kvalue * d is nearest x (f32 arithmetic; NaN and +-inf give 0). */
function bestCode(x: number, d: number): number {
  let best = 0;
  let bestError = Math.abs(Math.fround(MXFP4_KVALUES[0] * d - x));
  for (let i = 1; i < 16; i++) {
    const error = Math.abs(Math.fround(Math.fround(MXFP4_KVALUES[i] * d) - x));
    if (error < bestError) { best = i; bestError = error; }
  }
  return best;
}

/**
 * Encodes floats as MXFP4 blocks as ggml's reference quantizer (quantize_row_mxfp4_ref) does, byte for byte: e from
 * the block's absolute maximum (NaN values are skipped by its `amax < |v|` test), then each value's nearest code.
 */
export function quantizeMxfp4(values: Float32Array): Uint8Array {
  if (values.length % QK !== 0) throw new RangeError(`MXFP4 needs a multiple of ${QK} values, got ${values.length}`);
  const blocks = values.length / QK;
  const out = new Uint8Array(blocks * BYTES);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < QK; i++) {
      const v = Math.abs(values[b * QK + i]);
      if (amax < v) amax = v;
    }
    const e = mxfp4Exponent(amax);
    const d = e8m0Half(e);
    out[b * BYTES] = e;
    for (let j = 0; j < QK / 2; j++) {
      out[b * BYTES + 1 + j] = bestCode(values[b * QK + j], d) | (bestCode(values[b * QK + QK / 2 + j], d) << 4);
    }
  }
  return out;
}

/**
 * Decodes `count` values (a multiple of 32) from MXFP4 blocks into `out` (dequantize_row_mxfp4: kvalue * d, exact in
 * f32). Unchecked: `bytes` must hold count / 32 blocks (`dequantize` in quantize.ts checks).
 */
export function dequantizeMxfp4(bytes: Uint8Array, count: number, out: Float32Array): Float32Array {
  for (let b = 0; b < count / QK; b++) {
    const d = e8m0Half(bytes[b * BYTES]);
    for (let j = 0; j < QK / 2; j++) {
      const byte = bytes[b * BYTES + 1 + j];
      out[b * QK + j] = MXFP4_KVALUES[byte & 0xf] * d;
      out[b * QK + j + QK / 2] = MXFP4_KVALUES[byte >> 4] * d;
    }
  }
  return out;
}
