// Per-row max and sum of exp(x - max) of logit rows: what a row's log-sum-exp (log-softmax's normalizer) needs, for
// prompt log-probabilities. The caller takes max + log(sum) in f64: an f32 log-sum-exp would lose digits to the max.
import { exp_f32x4 } from "../assembly/math.as";

/**
 * For rows [r0, r1) of x: [rows, n] f32, out[r] = (max, sum of exp(x[r][i] - max)) as two f32: the sum accumulated in
 * f64, NaN entries skipped (no probability, as -Infinity). A row whose max is not finite (no finite entry, or +inf)
 * has sum 0.
 */
export function log_sum_exp_rows(x: usize, out: usize, n: i32, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const row = x + <usize>r * (<usize>n << 2);
    const m = row_max(row, n);
    let sum: f64 = 0;
    if (m > -Infinity && m < Infinity) sum = row_exp_sum(row, n, m);
    store<f32>(out + (<usize>r << 3), m);
    store<f32>(out + (<usize>r << 3), <f32>sum, 4);
  }
}

/** Largest of n floats at row, NaN skipped (pmax keeps the accumulator when the new lane is NaN); -inf for none. */
// @ts-ignore: decorator
@inline function row_max(row: usize, n: i32): f32 {
  let m0 = f32x4.splat(-Infinity), m1 = m0, m2 = m0, m3 = m0;
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    const p = row + (<usize>i << 2);
    m0 = f32x4.pmax(m0, v128.load(p));
    m1 = f32x4.pmax(m1, v128.load(p, 16));
    m2 = f32x4.pmax(m2, v128.load(p, 32));
    m3 = f32x4.pmax(m3, v128.load(p, 48));
  }
  for (; i + 4 <= n; i += 4) m0 = f32x4.pmax(m0, v128.load(row + (<usize>i << 2)));
  const m4 = f32x4.pmax(f32x4.pmax(m0, m1), f32x4.pmax(m2, m3));
  // Lanes are never NaN here (pmax from -inf); max of -inf lanes is -inf.
  let m = max(max(f32x4.extract_lane(m4, 0), f32x4.extract_lane(m4, 1)), max(f32x4.extract_lane(m4, 2), f32x4.extract_lane(m4, 3)));
  for (; i < n; i++) {
    const v = load<f32>(row + (<usize>i << 2));
    if (v > m) m = v; // NaN compares false
  }
  return m;
}

/** exp(x - m) of four lanes, 0 where x is NaN (exp of -inf - m is 0 already). */
// @ts-ignore: decorator
@inline function shifted_exp(x: v128, mv: v128): v128 {
  return v128.and(exp_f32x4(f32x4.sub(x, mv)), f32x4.eq(x, x));
}

/** Sum of exp(x - m) over n floats at row (m finite, the row's max), in f64. */
// @ts-ignore: decorator
@inline function row_exp_sum(row: usize, n: i32, m: f32): f64 {
  const mv = f32x4.splat(m);
  let s0 = f64x2.splat(0), s1 = s0;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const p = row + (<usize>i << 2);
    // Two vectors' terms added in f32 (positive terms: a relative rounding of 2^-24, below exp's own error), then
    // widened: f64 accumulation at half the conversions.
    const e = f32x4.add(shifted_exp(v128.load(p), mv), shifted_exp(v128.load(p, 16), mv));
    s0 = f64x2.add(s0, f64x2.promote_low_f32x4(e));
    s1 = f64x2.add(s1, f64x2.promote_low_f32x4(i8x16.shuffle(e, e, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)));
  }
  const s = f64x2.add(s0, s1);
  let sum = f64x2.extract_lane(s, 0) + f64x2.extract_lane(s, 1);
  for (; i < n; i++) sum += <f64>f32x4.extract_lane(shifted_exp(f32x4.splat(load<f32>(row + (<usize>i << 2))), mv), 0);
  return sum;
}
