// Encodes generated Float32 values as tensor bytes: fast typed-array loops for F32/F16/BF16/Q8_0 (the generic
// engine/model/quantize.ts converts one value at a time through a DataView, which dominates a 1B-parameter write),
// engine/model/quantize.ts for the block types. Output is byte-identical to quantize().
import { GgmlType, f32BitsToF16 } from "../engine/model/dtypes.js";
import { quantize } from "../engine/model/quantize.js";

/** Little-endian F16 bytes of `values`. */
export function encodeF16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = f32BitsToF16(bits[i]);
  return new Uint8Array(out.buffer);
}

/** Little-endian BF16 bytes of `values`, rounding to nearest even, NaN kept NaN (as dtypes.ts f32ToBf16). */
export function encodeBf16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) {
    const x = bits[i];
    out[i] = (x & 0x7fffffff) > 0x7f800000 ? ((x >>> 16) | 64) & 0xffff : ((x + (0x7fff + ((x >>> 16) & 1))) >>> 16) & 0xffff;
  }
  return new Uint8Array(out.buffer);
}

const ROUND_MAGIC = 6755399441055744;

/**
 * Q8_0 blocks (f16 scale + 32 int8), with the same rounding as quantize.ts's quantizeQ8_0 (GGML's AVX path:
 * q = nearest-even(fround(x * fround(127 / amax))), scale fround(amax / 127) as f16), written through typed views.
 */
export function encodeQ8_0(values: Float32Array): Uint8Array {
  const blocks = values.length / 32;
  if (!Number.isInteger(blocks)) throw new RangeError(`Q8_0 needs a multiple of 32 values, got ${values.length}`);
  const out = new Uint8Array(blocks * 34);
  const signed = new Int8Array(out.buffer);
  const scaleBits = new Uint32Array(1);
  const scaleFloat = new Float32Array(scaleBits.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * 32;
    let amax = 0;
    for (let i = 0; i < 32; i++) {
      const a = Math.abs(values[base + i]);
      if (a > amax) amax = a;
    }
    scaleFloat[0] = amax / 127;
    const half = f32BitsToF16(scaleBits[0]);
    const o = b * 34;
    out[o] = half & 0xff;
    out[o + 1] = half >>> 8;
    const id = amax !== 0 ? Math.fround(127 / amax) : 0;
    // (x + 1.5 * 2^52) - 1.5 * 2^52 rounds a double to the nearest integer, ties to even (x is a float32 <= 127).
    for (let i = 0; i < 32; i++) signed[o + 2 + i] = Math.fround(values[base + i] * id) + ROUND_MAGIC - ROUND_MAGIC;
  }
  return out;
}

/** The GGML (and, for F32/F16/BF16, safetensors) bytes of `values` as `type`. */
export function encodeTensor(type: GgmlType, values: Float32Array): Uint8Array {
  switch (type) {
    case GgmlType.F32:
      return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    case GgmlType.F16:
      return encodeF16(values);
    case GgmlType.BF16:
      return encodeBf16(values);
    case GgmlType.Q8_0:
      return encodeQ8_0(values);
    default:
      return quantize(type, values);
  }
}
