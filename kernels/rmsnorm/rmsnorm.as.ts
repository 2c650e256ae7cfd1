// RMS normalisation as ggml computes it: sum of squares in f64, scale = 1/sqrt(f32(sum/d) + eps) in f32,
// y = (x * scale) * weight.

/** Rows [t0, t1) of x: [rows, d] f32 into y: [rows, d] f32 (may alias x), weight: [d] f32. */
export function rmsnorm(x: usize, weight: usize, y: usize, d: i32, eps: f32, t0: i32, t1: i32): void {
  for (let t = t0; t < t1; t++) {
    const offset = <usize>t * (<usize>d << 2);
    const xr = x + offset;
    const yr = y + offset;
    let s = f64x2.splat(0);
    let i = 0;
    for (; i + 4 <= d; i += 4) {
      const v = v128.load(xr + (<usize>i << 2));
      const sq = f32x4.mul(v, v);
      s = f64x2.add(s, f64x2.add(f64x2.promote_low_f32x4(sq), f64x2.promote_low_f32x4(i8x16.shuffle(sq, sq, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7))));
    }
    let sum = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
    for (; i < d; i++) {
      const v = load<f32>(xr + (<usize>i << 2));
      sum += <f64>(v * v);
    }
    const mean = <f32>(sum / <f64>d);
    const scale: f32 = <f32>1 / Mathf.sqrt(mean + eps);
    const sv = f32x4.splat(scale);
    i = 0;
    for (; i + 4 <= d; i += 4) {
      const o = <usize>i << 2;
      v128.store(yr + o, f32x4.mul(f32x4.mul(v128.load(xr + o), sv), v128.load(weight + o)));
    }
    for (; i < d; i++) {
      const o = <usize>i << 2;
      store<f32>(yr + o, (load<f32>(xr + o) * scale) * load<f32>(weight + o));
    }
  }
}
