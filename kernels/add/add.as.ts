// Elementwise arithmetic on f32 vectors: residual additions and products.

/** out[i] = a[i] + b[i] for i in [i0, i1). a, b, out: f32 (out may alias a or b). */
export function add(a: usize, b: usize, out: usize, i0: i32, i1: i32): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, f32x4.add(v128.load(a + o), v128.load(b + o)));
  }
  for (; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, load<f32>(a + o) + load<f32>(b + o));
  }
}

/** out[i] = a[i] * b[i] for i in [i0, i1). */
export function mul(a: usize, b: usize, out: usize, i0: i32, i1: i32): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, f32x4.mul(v128.load(a + o), v128.load(b + o)));
  }
  for (; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, load<f32>(a + o) * load<f32>(b + o));
  }
}

/** out[i] = a[i] * s for i in [i0, i1). */
export function scale(a: usize, s: f32, out: usize, i0: i32, i1: i32): void {
  let i = i0;
  const sv = f32x4.splat(s);
  for (; i + 4 <= i1; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, f32x4.mul(v128.load(a + o), sv));
  }
  for (; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, load<f32>(a + o) * s);
  }
}

/** A linear layer's bias: y[t] += bias for rows t in [t0, t1) of n f32 values. */
export function add_bias(y: usize, bias: usize, n: i32, t0: i32, t1: i32): void {
  for (let t = t0; t < t1; t++) {
    const row = y + ((<usize>t * <usize>n) << 2);
    add(row, bias, row, 0, n);
  }
}
