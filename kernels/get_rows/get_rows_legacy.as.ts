// Embedding lookup for Q4_1, Q5_0 and Q5_1 weights: out[t] = dequantize(W[ids[t]]), exact (the reference decoder's
// f32 operations: (q - 16) * d for Q5_0, q * d + m for Q4_1 and Q5_1).
import { f16_to_f32 } from "../assembly/convert.as";

/** The fifth bits of elements 0..15 (half 0) or 16..31 (half 1) as bytes 0x10 or 0, from qh in the low lane. */
// @ts-ignore: decorator
@inline function fifth_bits(qh: v128, half: i32): v128 {
  const spread = half == 0
    ? i8x16.swizzle(qh, i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1))
    : i8x16.swizzle(qh, i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const mask = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  return v128.and(i8x16.eq(v128.and(spread, mask), mask), i8x16.splat(0x10));
}

/** Sixteen quants (u8 lanes, minus `offset`) times d plus m into 16 floats at dst. */
// @ts-ignore: decorator
@inline function store16(dst: usize, q: v128, offset: i32, d: v128, m: v128, hasMin: bool): void {
  const lo = i16x8.sub(i16x8.extend_low_i8x16_u(q), i16x8.splat(<i16>offset));
  const hi = i16x8.sub(i16x8.extend_high_i8x16_u(q), i16x8.splat(<i16>offset));
  let v0 = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(lo)), d);
  let v1 = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(lo)), d);
  let v2 = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(hi)), d);
  let v3 = f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(hi)), d);
  if (hasMin) { v0 = f32x4.add(v0, m); v1 = f32x4.add(v1, m); v2 = f32x4.add(v2, m); v3 = f32x4.add(v3, m); }
  v128.store(dst, v0); v128.store(dst, v1, 16); v128.store(dst, v2, 32); v128.store(dst, v3, 48);
}

/** One block: nibbles at qs, fifth bits at qh (when five), scale d, min m (when hasMin) into 32 floats at dst. */
// @ts-ignore: decorator
@inline function dequantize_block(qs: usize, qh: usize, d: f32, m: f32, dst: usize, five: bool, hasMin: bool): void {
  const packed = v128.load(qs);
  let low = v128.and(packed, i8x16.splat(0x0f));
  let high = v128.and(i16x8.shr_u(packed, 4), i8x16.splat(0x0f));
  if (five) {
    const bits = v128.load32_zero(qh);
    low = v128.or(low, fifth_bits(bits, 0));
    high = v128.or(high, fifth_bits(bits, 1));
  }
  const offset = hasMin ? 0 : 16;
  const dv = f32x4.splat(d), mv = f32x4.splat(m);
  store16(dst, low, offset, dv, mv, hasMin);
  store16(dst + 64, high, offset, dv, mv, hasMin);
}

/** out[t] = W[ids[t]] for t in [t0, t1), w: [vocab, k/32] Q4_1 blocks (20 bytes), out: [rows, k] f32. */
export function get_rows_q4_1(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * 20;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 20, dst += 128) {
      dequantize_block(src + 4, 0, f16_to_f32(load<u16>(src)), f16_to_f32(load<u16>(src, 2)), dst, false, true);
    }
  }
}

/** As get_rows_q4_1 with w: [vocab, k/32] Q5_0 blocks (22 bytes). */
export function get_rows_q5_0(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * 22;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 22, dst += 128) dequantize_block(src + 6, src + 2, f16_to_f32(load<u16>(src)), 0, dst, true, false);
  }
}

/** As get_rows_q4_1 with w: [vocab, k/32] Q5_1 blocks (24 bytes). */
export function get_rows_q5_1(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * 24;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 24, dst += 128) {
      dequantize_block(src + 8, src + 4, f16_to_f32(load<u16>(src)), f16_to_f32(load<u16>(src, 2)), dst, true, true);
    }
  }
}
