// Vectorised f32 math shared by the activation, normalisation and attention kernels.
import { horizontal_max } from "./convert.as";

/**
 * e^x for four f32 lanes, within about 1 ulp (Cephes expf: Cody-Waite reduction by ln 2, degree-6 polynomial).
 * x above 88.72 gives +inf, x below -87.33 gives 0 (results that would be subnormal flush to zero), NaN stays NaN.
 */
// @ts-ignore: decorator
@inline export function exp_f32x4(x: v128): v128 {
  const n = f32x4.nearest(f32x4.mul(x, f32x4.splat(1.44269504088896341))); // round(x / ln 2)
  // r = x - n ln2, with ln 2 split in two so that n * hi is exact.
  let r = f32x4.sub(x, f32x4.mul(n, f32x4.splat(0.693359375)));
  r = f32x4.sub(r, f32x4.mul(n, f32x4.splat(-2.12194440e-4)));
  const r2 = f32x4.mul(r, r);
  let p = f32x4.splat(1.9875691500e-4);
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.3981999507e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(8.3334519073e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(4.1665795894e-2));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.6666665459e-1));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(5.0000001201e-1));
  p = f32x4.add(f32x4.add(f32x4.mul(p, r2), r), f32x4.splat(1));
  // 2^n built in the exponent field; n is within [-126, 128] for the inputs not overridden below.
  const scale = i32x4.shl(i32x4.add(i32x4.trunc_sat_f32x4_s(n), i32x4.splat(127)), 23);
  let result = f32x4.mul(p, scale);
  // n = 128 (x just below the overflow bound) does not fit the exponent field: 2^128 = 2 * 2^127.
  result = v128.bitselect(f32x4.mul(f32x4.mul(p, f32x4.splat(1.7014118346046923e38)), f32x4.splat(2)), result, f32x4.gt(n, f32x4.splat(127)));
  result = v128.bitselect(f32x4.splat(Infinity), result, f32x4.gt(x, f32x4.splat(88.72283905206835)));
  result = v128.bitselect(f32x4.splat(0), result, f32x4.lt(x, f32x4.splat(-87.33654475055310898657904)));
  return v128.bitselect(x, result, f32x4.ne(x, x)); // NaN in, NaN out
}

/**
 * Softmax of one row of n floats at row, in place. A finite `sink` (gpt-oss's attention sinks) is one more logit
 * that takes its share of the sum and is dropped, as ggml's soft_max with sinks: it enters the max, and its exp the
 * sum; -Infinity for none.
 */
// @ts-ignore: decorator
@inline export function softmax_row(row: usize, n: i32, sink: f32 = -Infinity): void {
  let i = 0;
  let m4 = f32x4.splat(-Infinity);
  for (; i + 4 <= n; i += 4) m4 = f32x4.max(m4, v128.load(row + (<usize>i << 2)));
  let m = horizontal_max(m4);
  for (; i < n; i++) m = max(m, load<f32>(row + (<usize>i << 2)));
  m = max(m, sink);
  const mv = f32x4.splat(m);
  let s = f64x2.splat(0);
  i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = row + (<usize>i << 2);
    const e = exp_f32x4(f32x4.sub(v128.load(p), mv));
    v128.store(p, e);
    s = f64x2.add(s, f64x2.add(f64x2.promote_low_f32x4(e), f64x2.promote_low_f32x4(i8x16.shuffle(e, e, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7))));
  }
  let sum = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
  for (; i < n; i++) {
    const p = row + (<usize>i << 2);
    const e = f32x4.extract_lane(exp_f32x4(f32x4.splat(load<f32>(p) - m)), 0);
    store<f32>(p, e);
    sum += <f64>e;
  }
  if (sink != -Infinity) sum += <f64>f32x4.extract_lane(exp_f32x4(f32x4.splat(sink - m)), 0);
  const inverse = <f32>(1.0 / sum);
  const iv = f32x4.splat(inverse);
  i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = row + (<usize>i << 2);
    v128.store(p, f32x4.mul(v128.load(p), iv));
  }
  for (; i < n; i++) {
    const p = row + (<usize>i << 2);
    store<f32>(p, load<f32>(p) * inverse);
  }
}
