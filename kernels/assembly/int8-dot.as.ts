// Scaled integer dot products of small unsigned quants with int8 activations, shared by the K-quant matmul kernels;
// not an entry file. The relaxed-SIMD build (kernels-relaxed.wasm) uses the relaxed int8 dot product (pmaddubsw on
// x86) into i16 pair sums, then one i16 multiply-add applies the sub-block scale; the plain build widens to i16,
// uses i32x4.dot_i16x8_s, and multiplies the i32 sums by the scale. Both are exact: the quants are below 64 (the
// relaxed instruction's "i7" operand is defined for values below 128, and the i16 sums of two groups stay below
// 2 * 2 * 63 * 127 < 2^15), and every product and sum fits its lane.
// NOTE: i32x4.relaxed_dot_i8x16_i7x16_add_s would save an instruction, but Node 20's V8 returns twice the true sum
// from it (kernels/wasm/relaxed-simd.ts checks the instruction used here before the runtime picks this build).

/** The plain build's exact dot of 16 unsigned quants with the 16 int8 at x, as four i32 lanes. */
// @ts-ignore: decorator
@inline function widened_dot16(q: v128, x: usize): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(q), v128.load8x8_s(x)),
    i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(q), v128.load8x8_s(x, 8)),
  );
}

/**
 * q · x for 16 unsigned quants q (each below 128) and the 16 int8 at address x, as four i32 lanes whose total is the
 * exact dot (which products land in which lane differs between the builds).
 */
// @ts-ignore: decorator
@inline export function dot16(q: v128, x: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.extadd_pairwise_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x), q));
  return widened_dot16(q, x);
}

/**
 * acc + scale * (q · x) for 16 unsigned quants q (each below 64), the 16 int8 at address x and a scale in
 * -128..127, as four i32 lanes. Which products land in which lane differs between the builds; the total of the
 * four lanes is the same exact integer.
 */
// @ts-ignore: decorator
@inline export function scaled_dot16_add(q: v128, x: usize, scale: i32, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.add(acc, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x), q), i16x8.splat(<i16>scale)));
  }
  return i32x4.add(acc, i32x4.mul(widened_dot16(q, x), i32x4.splat(scale)));
}

/**
 * As scaled_dot16_add with the scale given as an i16x8 holding it (-128..127) in every lane, as a broadcast of a
 * vector of scales makes it.
 */
// @ts-ignore: decorator
@inline export function scaled_dot16_add_vec(q: v128, x: usize, scale: v128, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.add(acc, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x), q), scale));
  return i32x4.add(acc, i32x4.mul(widened_dot16(q, x), i32x4.extend_low_i16x8_s(scale)));
}

/** As scaled_dot16_add for 32 values sharing one scale: q0 against the int8 at x, q1 against those at x + 16. */
// @ts-ignore: decorator
@inline export function scaled_dot32_add(q0: v128, q1: v128, x: usize, scale: i32, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return scaled_dot32_add_vec(q0, q1, x, i16x8.splat(<i16>scale), acc);
  return i32x4.add(acc, i32x4.mul(i32x4.add(widened_dot16(q0, x), widened_dot16(q1, x + 16)), i32x4.splat(scale)));
}

/**
 * As scaled_dot32_add with the scale given as an i16x8 holding it (0..63) in every lane, as a broadcast of a vector
 * of scales makes it: the relaxed build multiplies the i16 pair sums by it directly.
 */
// @ts-ignore: decorator
@inline export function scaled_dot32_add_vec(q0: v128, q1: v128, x: usize, scale: v128, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const pairs = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x), q0), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(x, 16), q1));
    return i32x4.add(acc, i32x4.dot_i16x8_s(pairs, scale));
  }
  return i32x4.add(acc, i32x4.mul(i32x4.add(widened_dot16(q0, x), widened_dot16(q1, x + 16)), i32x4.extend_low_i16x8_u(scale)));
}
