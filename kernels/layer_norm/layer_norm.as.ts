// Layer normalisation as ggml computes it (ggml_norm, then the weight's ggml_mul and the bias's ggml_add): the row's
// sum and its centred squares in f64, mean and variance rounded to f32, y = ((x - mean) * scale) * weight + bias.

/** The sum of n f32 values at p, in f64 (two lanes, then the tail: ggml_vec_sum_f32's f64 accumulation). */
// @ts-ignore: decorator
@inline function sum_f64(p: usize, n: i32): f64 {
  let s = f64x2.splat(0);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(p + (<usize>i << 2));
    s = f64x2.add(s, f64x2.add(f64x2.promote_low_f32x4(v), f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7))));
  }
  let sum = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
  for (; i < n; i++) sum += <f64>load<f32>(p + (<usize>i << 2));
  return sum;
}

/**
 * Rows [r0, r1) of x: [rows, n] f32 into out: [rows, n] f32 (may alias x), weight and bias: [n] f32. Each row:
 * mean = f32(sum) / n, variance = f32(sum((x - mean)^2) / n) with the f32 squares summed in f64, scale = 1 /
 * sqrt(variance + eps); out = ((x - mean) * scale) * weight + bias, every step rounded to f32.
 */
export function layer_norm(x: usize, weight: usize, bias: usize, out: usize, n: i32, eps: f32, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const offset = <usize>r * (<usize>n << 2);
    const xr = x + offset;
    const yr = out + offset;
    const mean = <f32>sum_f64(xr, n) / <f32>n;
    const mv = f32x4.splat(mean);
    let s = f64x2.splat(0);
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const d = f32x4.sub(v128.load(xr + (<usize>i << 2)), mv);
      const sq = f32x4.mul(d, d);
      s = f64x2.add(s, f64x2.add(f64x2.promote_low_f32x4(sq), f64x2.promote_low_f32x4(i8x16.shuffle(sq, sq, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7))));
    }
    let squares = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
    for (; i < n; i++) {
      const d = load<f32>(xr + (<usize>i << 2)) - mean;
      squares += <f64>(d * d);
    }
    const variance = <f32>(squares / <f64>n);
    const scale: f32 = <f32>1 / Mathf.sqrt(variance + eps);
    const sv = f32x4.splat(scale);
    // The centred values are recomputed (the same f32 subtraction) rather than stored: one pass fewer over out.
    i = 0;
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      const d = f32x4.sub(v128.load(xr + o), mv);
      v128.store(yr + o, f32x4.add(f32x4.mul(f32x4.mul(d, sv), v128.load(weight + o)), v128.load(bias + o)));
    }
    for (; i < n; i++) {
      const o = <usize>i << 2;
      store<f32>(yr + o, ((load<f32>(xr + o) - mean) * scale) * load<f32>(weight + o) + load<f32>(bias + o));
    }
  }
}
