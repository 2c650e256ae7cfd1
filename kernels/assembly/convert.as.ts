// Scalar and SIMD conversions between GGML's 16-bit float formats (f16, bf16) and f32: to f32 exact for every finite
// value, to f16 rounding to nearest even. Shared by the matmul, get_rows, quantize, attention and KV-cache
// kernels; not an entry file (exports nothing from the module).

/** 2^112: rescales a half's exponent placed in an f32's exponent field (bias 15 -> 127), subnormals included. */
const TWO_POW_112: f32 = 5.192296858534828e33;

/**
 * IEEE half bits (low 16 bits of h) to f32, exactly, including subnormals, infinities and NaN.
 * NOTE: integer arithmetic only (no subnormal f32 operand, which costs a microcode assist on x86).
 */
// @ts-ignore: decorator
@inline export function f16_to_f32(h: u32): f32 {
  const magnitude = h & 0x7fff;
  const normal = (magnitude << 13) + 0x38000000; // exponent rebiased 15 -> 127
  // Subnormal halves: m * 2^-24, built as (2^-14 + m * 2^-24) - 2^-14 with normal floats only.
  const subnormal = reinterpret<u32>(reinterpret<f32>(normal + 0x00800000) - reinterpret<f32>(0x38800000));
  let bits = select<u32>(subnormal, normal, magnitude < 0x0400);
  bits = select<u32>(bits + 0x38000000, bits, magnitude >= 0x7c00); // infinity / NaN: exponent 255
  return reinterpret<f32>(bits | ((h & 0x8000) << 16));
}

/**
 * IEEE half bits to f32 in three integer operations and a multiply: exact for finite values.
 * NOTE: infinities and NaN become large finite values (block scales never hold them), and a subnormal half
 * costs a slow subnormal f32 multiply on x86 (rare in scales).
 */
// @ts-ignore: decorator
@inline export function f16_to_f32_fast(h: u32): f32 {
  return reinterpret<f32>(<u32>(<i32>(h << 16) >> 3) & 0x8fffffff) * TWO_POW_112;
}

/**
 * Four halves held in the HIGH 16 bits of each i32 lane (low bits zero) to f32x4, exact for finite values
 * (normal and subnormal) in four operations. NOTE: infinities and NaN become large finite values (weights never
 * hold them), and a subnormal half costs a slow subnormal f32 multiply on x86 (rare in weights).
 */
// @ts-ignore: decorator
@inline export function f16_high_to_f32x4(h: v128): v128 {
  // Arithmetic shift moves the magnitude into the f32 exponent/mantissa position; the mask keeps the sign alone.
  const bits = v128.and(i32x4.shr_s(h, 3), i32x4.splat(0x8fffffff));
  return f32x4.mul(bits, f32x4.splat(TWO_POW_112));
}

/** Lanes 0..3 of an i16x8 moved into the high halves of four i32 lanes (low halves zero). */
// @ts-ignore: decorator
@inline export function low_halves_high(v: v128): v128 {
  return i8x16.shuffle(i32x4.splat(0), v, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
}

/** Sum of the four f32 lanes. */
// @ts-ignore: decorator
@inline export function horizontal_sum(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/** Maximum of the four f32 lanes. */
// @ts-ignore: decorator
@inline export function horizontal_max(v: v128): f32 {
  return max(max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)), max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)));
}

/** f32 to IEEE half bits, rounding to nearest even (GGML_FP32_TO_FP16), byte-identical to the TS reference. */
export function f32_to_f16(value: f32): u32 {
  const x = reinterpret<u32>(value);
  const sign = (x >>> 16) & 0x8000;
  const exponent = <i32>((x >>> 23) & 0xff);
  let mantissa = x & 0x7fffff;
  if (exponent == 0xff) return sign | 0x7c00 | (mantissa != 0 ? 0x200 : 0);
  let e = exponent - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = <u32>(14 - e);
    const half = <u32>1 << (shift - 1);
    let rounded = mantissa >> shift;
    const rest = mantissa & ((<u32>1 << shift) - 1);
    if (rest > half || (rest == half && (rounded & 1) != 0)) rounded++;
    return sign | rounded;
  }
  let rounded = mantissa >> 13;
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (rounded & 1) != 0)) {
    rounded++;
    if (rounded == 0x400) {
      rounded = 0;
      e++;
      if (e >= 31) return sign | 0x7c00;
    }
  }
  return sign | (<u32>e << 10) | rounded;
}

/** 2^-110: with TWO_POW_112, scales a float so that values rounding to half infinity overflow (f32x4_to_f16_bits). */
const TWO_POW_MINUS_110: f32 = 7.703719777548943e-34;

/**
 * Four f32 lanes to IEEE half bits (in the low 16 bits of each i32 lane, high bits zero), rounding to nearest
 * even: identical to f32_to_f16 for every input, subnormal halves, overflow to infinity and NaN (quiet, sign
 * kept) included. The rounding is done by one f32 addition (Maratyszcza's FP16 method): adding 2^k, with k
 * chosen from the input's exponent, leaves exactly the half's mantissa bits, so the FPU's own round-to-nearest-
 * even rounds. NOTE: an f32 subnormal input costs an x86 microcode assist (rare: such inputs become +-0).
 */
// @ts-ignore: decorator
@inline export function f32x4_to_f16_bits(v: v128): v128 {
  const twice = i32x4.add(v, v); // the bits without the sign, shifted left one
  const sign = i32x4.shr_u(v128.and(v, i32x4.splat(0x80000000)), 16);
  // Scaling up then down sends magnitudes that round to half infinity (>= 65520) to f32 infinity, keeps the rest.
  let base = f32x4.mul(f32x4.mul(f32x4.abs(v), f32x4.splat(TWO_POW_112)), f32x4.splat(TWO_POW_MINUS_110));
  // 2^(e + 15) for the input's exponent e (at least -14, the smallest normal half's, for subnormal halves): the
  // sum's ulp is then 4 half ulps, and base is 4|v|, so the addition rounds |v| to a half, to nearest even.
  const bias = i32x4.max_u(v128.and(twice, i32x4.splat(0xff000000)), i32x4.splat(0x71000000));
  base = f32x4.add(i32x4.add(i32x4.shr_u(bias, 1), i32x4.splat(0x07800000)), base);
  // The sum's low exponent bits plus its mantissa (with the carry bit) are the half's exponent and mantissa.
  const magnitude = i32x4.add(v128.and(i32x4.shr_u(base, 13), i32x4.splat(0x7c00)), v128.and(base, i32x4.splat(0x0fff)));
  const nan = i32x4.gt_u(twice, i32x4.splat(0xff000000));
  return v128.or(sign, v128.bitselect(i32x4.splat(0x7e00), magnitude, nan));
}

/** Eight floats (lo: elements 0-3, hi: 4-7) stored as eight IEEE halves at p (f32x4_to_f16_bits rounding). */
// @ts-ignore: decorator
@inline export function store_f16x8(p: usize, lo: v128, hi: v128): void {
  v128.store(p, i16x8.narrow_i32x4_u(f32x4_to_f16_bits(lo), f32x4_to_f16_bits(hi)));
}

/** Four floats stored as four IEEE halves at p (f32x4_to_f16_bits rounding). */
// @ts-ignore: decorator
@inline export function store_f16x4(p: usize, v: v128): void {
  const bits = f32x4_to_f16_bits(v);
  v128.store64_lane(p, i16x8.narrow_i32x4_u(bits, bits), 0);
}

/** Four consecutive IEEE halves at p as f32x4, exactly for every value (infinities and NaN included). */
// @ts-ignore: decorator
@inline export function load_f16x4_exact(p: usize): v128 {
  return f16_low_to_f32x4_exact(v128.load16x4_u(p));
}

/**
 * Four halves held in the LOW 16 bits of each i32 lane (high bits zero) to f32x4, exactly for every value,
 * with integer arithmetic only (no subnormal f32 operands, which are slow on x86).
 */
// @ts-ignore: decorator
@inline export function f16_low_to_f32x4_exact(h: v128): v128 {
  const magnitude = v128.and(h, i32x4.splat(0x7fff));
  let bits = i32x4.add(i32x4.shl(magnitude, 13), i32x4.splat(0x38000000));
  const subnormal = f32x4.sub(i32x4.add(bits, i32x4.splat(0x00800000)), f32x4.splat(6.103515625e-5)); // 2^-14
  bits = v128.bitselect(subnormal, bits, i32x4.lt_s(magnitude, i32x4.splat(0x0400)));
  bits = i32x4.add(bits, v128.and(i32x4.gt_s(magnitude, i32x4.splat(0x7bff)), i32x4.splat(0x38000000)));
  return v128.or(bits, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

/**
 * Four f32 scales from the f16 values at p0..p3 (each block's leading u16), exact for finite values.
 * NOTE: uses the fast conversion, so a subnormal scale is slow (x86 assist) but still exact.
 */
// @ts-ignore: decorator
@inline export function f16_scales4(p0: usize, p1: usize, p2: usize, p3: usize): v128 {
  let h = i32x4.splat(0);
  h = v128.load16_lane(p0, h, 1);
  h = v128.load16_lane(p1, h, 3);
  h = v128.load16_lane(p2, h, 5);
  h = v128.load16_lane(p3, h, 7);
  return f16_high_to_f32x4(h);
}

/**
 * Four consecutive f16 values at p as f32x4 (the fast conversion of f16_high_to_f32x4: exact for finite values).
 * A sign-extending widening load (one x86 instruction) then a shift left puts each half where the shuffle and
 * arithmetic shift right of f16_high_to_f32x4 would: sign copies in bits 28-31, masked to bit 31.
 */
// @ts-ignore: decorator
@inline export function f16x4_to_f32x4(p: usize): v128 {
  const bits = v128.and(i32x4.shl(v128.load16x4_s(p), 13), i32x4.splat(0x8fffffff));
  return f32x4.mul(bits, f32x4.splat(TWO_POW_112));
}

/** [sum(a), sum(b), sum(c), sum(d)]: the lane sums of four i32x4 vectors, gathered into one. */
// @ts-ignore: decorator
@inline export function transpose_sum_i32(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = i32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  return i32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}

/**
 * Lanes 0 .. count - 1 of acc (count 1..4) stored as the f32 at y, y + step, y + 2 step, y + 3 step: one output
 * of each of the up to four rows (or tokens) a matmul computed together.
 */
// @ts-ignore: decorator
@inline export function store_lanes(y: usize, step: usize, acc: v128, count: i32): void {
  store<f32>(y, f32x4.extract_lane(acc, 0));
  if (count > 1) store<f32>(y + step, f32x4.extract_lane(acc, 1));
  if (count > 2) store<f32>(y + 2 * step, f32x4.extract_lane(acc, 2));
  if (count > 3) store<f32>(y + 3 * step, f32x4.extract_lane(acc, 3));
}

/** The sum of the four i32 lanes, in every lane. */
// @ts-ignore: decorator
@inline export function splat_sum_i32(a: v128): v128 {
  const s = i32x4.add(a, i8x16.shuffle(a, a, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  return i32x4.add(s, i8x16.shuffle(s, s, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
}

/** [sum(a), sum(b), sum(c), sum(d)]: the lane sums of four f32x4 vectors, gathered into one. */
// @ts-ignore: decorator
@inline export function transpose_sum_f32(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = f32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = f32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  return f32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}
