// BF16 (GGML type 30): bfloat16, the top 16 bits of an f32, two little-endian bytes per value.

const conversionView = new DataView(new ArrayBuffer(4));

/** bfloat16 bits to a float, exactly. */
export function bf16ToF32(bits: number): number {
  conversionView.setUint32(0, (bits & 0xffff) << 16);
  return conversionView.getFloat32(0);
}

/** A float to bfloat16 bits, rounding to nearest even (NaN stays NaN), as GGML does. */
export function f32ToBf16(value: number): number {
  conversionView.setFloat32(0, value);
  return f32BitsToBf16(conversionView.getUint32(0));
}

/** The bfloat16 bits of the float whose 32 bits are `x` (for typed-array loops). */
export function f32BitsToBf16(x: number): number {
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 64) & 0xffff;
  return ((x + (0x7fff + ((x >>> 16) & 1))) >>> 16) & 0xffff;
}

/** Little-endian BF16 bytes of `values`, rounding to nearest even, NaN kept NaN. */
export function encodeBf16(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(Float32Array.from(values).buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; i++) out[i] = f32BitsToBf16(bits[i]);
  return new Uint8Array(out.buffer);
}
