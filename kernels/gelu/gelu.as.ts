// Plain GELU (SigLIP's feed-forward), elementwise, as llama.cpp's CPU backend computes ggml_gelu: x <= -10 gives 0,
// x >= 10 gives x, otherwise x rounded to a half, GELU of that half in f32 (tanh approximation), rounded to a half
// again (the entry of ggml's 64K-entry table). Four lanes at a time, tanh in f64 (see tanh_f32x4).
import { f16_low_to_f32x4_exact, f32x4_to_f16_bits } from "../assembly/convert.as";

const GELU_COEF_A: f32 = 0.044715;
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;

/** Four floats rounded to the nearest half (ties to even, subnormal halves kept) and back: exact. */
// @ts-ignore: decorator
@inline function through_half(v: v128): v128 {
  return f16_low_to_f32x4_exact(f32x4_to_f16_bits(v));
}

/**
 * e^a for two f64 lanes, 0 <= a < 700: a = k ln 2 + r (ln 2 in two parts), |r| <= ln 2 / 2, e^r by its Taylor
 * series to r^11 (relative error below 1e-14), times 2^k built in the exponent field.
 */
// @ts-ignore: decorator
@inline function exp_f64x2(a: v128): v128 {
  const k = f64x2.nearest(f64x2.mul(a, f64x2.splat(1.4426950408889634)));
  const r = f64x2.sub(f64x2.sub(a, f64x2.mul(k, f64x2.splat(LN2_HI))), f64x2.mul(k, f64x2.splat(LN2_LO)));
  let p = f64x2.splat(1.0 / 39916800.0);
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 3628800.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 362880.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 40320.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 5040.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 720.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 120.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 24.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0 / 6.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(0.5));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0));
  p = f64x2.add(f64x2.mul(p, r), f64x2.splat(1.0));
  const kInt = i64x2.extend_low_i32x4_s(i32x4.trunc_sat_f64x2_s_zero(k));
  return f64x2.mul(p, i64x2.shl(i64x2.add(kInt, i64x2.splat(1023)), 52));
}

/** tanh of two f64 lanes (finite; |u| < 350): sign(u) (1 - 2 / (e^(2|u|) + 1)), absolute error about 1e-15. */
// @ts-ignore: decorator
@inline function tanh_f64x2(u: v128): v128 {
  const magnitude = f64x2.abs(u);
  const e = exp_f64x2(f64x2.add(magnitude, magnitude));
  const t = f64x2.sub(f64x2.splat(1), f64x2.div(f64x2.splat(2), f64x2.add(e, f64x2.splat(1))));
  return v128.or(t, v128.and(u, i64x2.splat(0x8000000000000000)));
}

/**
 * tanh of four f32 lanes, computed in f64 and rounded once to f32: the correctly rounded tanhf but for results
 * within about 1e-15 of a rounding boundary. NOTE: ggml's tanh result only matters through 1 + tanh (where it is
 * close to -1, every bit of it), so a 1-ulp f32 tanh would flip the final half rounding of many negative inputs.
 */
// @ts-ignore: decorator
@inline function tanh_f32x4(u: v128): v128 {
  const lo = f32x4.demote_f64x2_zero(tanh_f64x2(f64x2.promote_low_f32x4(u)));
  const hi = f32x4.demote_f64x2_zero(tanh_f64x2(f64x2.promote_low_f32x4(i8x16.shuffle(u, u, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7))));
  return i8x16.shuffle(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** ggml_vec_gelu_f32 on four lanes: the cut-offs, else the half-table entry (ggml_gelu_f32 in ggml's f32 order). */
// @ts-ignore: decorator
@inline function gelu_f32x4(x: v128): v128 {
  const h = through_half(x);
  const inner = f32x4.mul(f32x4.mul(f32x4.splat(SQRT_2_OVER_PI), h), f32x4.add(f32x4.splat(1), f32x4.mul(f32x4.mul(f32x4.splat(GELU_COEF_A), h), h)));
  const y = through_half(f32x4.mul(f32x4.mul(f32x4.splat(0.5), h), f32x4.add(f32x4.splat(1), tanh_f32x4(inner))));
  return v128.bitselect(f32x4.splat(0), v128.bitselect(x, y, f32x4.ge(x, f32x4.splat(10))), f32x4.le(x, f32x4.splat(-10)));
}

/** out[i] = gelu(x[i]) for i in [i0, i1). x, out: [n] f32 (out may alias x). */
export function gelu(x: usize, out: usize, n: i32, i0: i32, i1: i32): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, gelu_f32x4(v128.load(x + o)));
  }
  for (; i < i1; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, f32x4.extract_lane(gelu_f32x4(f32x4.splat(load<f32>(x + o))), 0));
  }
}
