// F16 (GGML type 1): IEEE half precision, two little-endian bytes per value. The scalar conversions every kernel
// reference and the model code use, and the array encoder the random-model generator writes files with.

const conversionView = new DataView(new ArrayBuffer(4));

/** IEEE half (as its 16 bits) to a float, exactly. */
export function f16ToF32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** A float to IEEE half bits, rounding to nearest even (as GGML's GGML_FP32_TO_FP16 does). */
export function f32ToF16(value: number): number {
  conversionView.setFloat32(0, value);
  return f32BitsToF16(conversionView.getUint32(0));
}

/** The IEEE half bits of the float whose 32 bits are `x`, rounding to nearest even (for typed-array loops). */
export function f32BitsToF16(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  let e = exponent - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let rounded = mantissa >> shift;
    const rest = mantissa & ((1 << shift) - 1);
    if (rest > half || (rest === half && (rounded & 1))) rounded++;
    return sign | rounded;
  }
  let rounded = mantissa >> 13;
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (rounded & 1))) {
    rounded++;
    if (rounded === 0x400) {
      rounded = 0;
      e++;
      if (e >= 31) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | rounded;
}

/** Little-endian F16 bytes of `values`, rounding to nearest even. Typed-array loops: generators encode billions. */
export function encodeF16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(Float32Array.from(values).buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = f32BitsToF16(bits[i]);
  return new Uint8Array(out.buffer);
}
