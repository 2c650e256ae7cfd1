// Reference elementwise arithmetic in f32.

/** a + b elementwise. */
export function addRef(a: Float32Array, b: Float32Array): Float32Array {
  return Float32Array.from(a, (v, i) => v + b[i]);
}

/** a * b elementwise. */
export function mulRef(a: Float32Array, b: Float32Array): Float32Array {
  return Float32Array.from(a, (v, i) => v * b[i]);
}

/** a * s elementwise (s rounded to f32 first, as the kernel receives it). */
export function scaleRef(a: Float32Array, s: number): Float32Array {
  const sf = Math.fround(s);
  return Float32Array.from(a, (v) => v * sf);
}

/** Row r of x [rows, width] times factors[r] (the factors are f32 already). */
export function scaleRowsRef(x: Float32Array, factors: Float32Array, width: number): Float32Array {
  return Float32Array.from(x, (v, i) => v * factors[Math.floor(i / width)]);
}
