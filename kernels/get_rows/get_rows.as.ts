// Embedding lookup: out[t] = dequantize(W[ids[t]]) for each token t, for every weight type loom reads.
// Dequantization is exact (the same single f32 multiply as the reference decoder).
import { f16_low_to_f32x4_exact, f16_to_f32 } from "../assembly/convert.as";

/** Bytes of one Q8_0 / Q4_0 block. */
const Q8_0_BYTES: usize = 34;
const Q4_0_BYTES: usize = 18;

/** out[t] = W[ids[t]] for t in [t0, t1). w: [vocab, k] f32, ids: [rows] i32, out: [rows, k] f32. */
export function get_rows_f32(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const rowBytes = <usize>k << 2;
  for (let t = t0; t < t1; t++) {
    memory.copy(out + <usize>t * rowBytes, w + <usize>load<i32>(ids + (<usize>t << 2)) * rowBytes, rowBytes);
  }
}

/** As get_rows_f32 with w: [vocab, k] IEEE half (exact, subnormals, infinities and NaN included). */
export function get_rows_f16(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  for (let t = t0; t < t1; t++) {
    const src = w + <usize>load<i32>(ids + (<usize>t << 2)) * (<usize>k << 1);
    const dst = out + <usize>t * (<usize>k << 2);
    let i = 0;
    for (; i + 4 <= k; i += 4) v128.store(dst + (<usize>i << 2), f16_low_to_f32x4_exact(v128.load16x4_u(src + (<usize>i << 1))));
    for (; i < k; i++) store<f32>(dst + (<usize>i << 2), f16_to_f32(load<u16>(src + (<usize>i << 1))));
  }
}

/** As get_rows_f32 with w: [vocab, k] bfloat16. */
export function get_rows_bf16(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  for (let t = t0; t < t1; t++) {
    const src = w + <usize>load<i32>(ids + (<usize>t << 2)) * (<usize>k << 1);
    const dst = out + <usize>t * (<usize>k << 2);
    let i = 0;
    for (; i + 4 <= k; i += 4) v128.store(dst + (<usize>i << 2), i32x4.shl(v128.load16x4_u(src + (<usize>i << 1)), 16));
    for (; i < k; i++) store<u32>(dst + (<usize>i << 2), <u32>load<u16>(src + (<usize>i << 1)) << 16);
  }
}

/** Eight int8 at q (as i16x8 already widened) times d into 8 floats at dst. */
// @ts-ignore: decorator
@inline function store_scaled8(dst: usize, q16: v128, d: v128): void {
  v128.store(dst, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(q16)), d));
  v128.store(dst, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(q16)), d), 16);
}

/** One Q8_0 block's quants at q with scale d into 32 floats at dst. */
// @ts-ignore: decorator
@inline function dequantize_q8_block(q: usize, d: f32, dst: usize): void {
  const dv = f32x4.splat(d);
  store_scaled8(dst, v128.load8x8_s(q), dv);
  store_scaled8(dst + 32, v128.load8x8_s(q, 8), dv);
  store_scaled8(dst + 64, v128.load8x8_s(q, 16), dv);
  store_scaled8(dst + 96, v128.load8x8_s(q, 24), dv);
}

/** One Q4_0 block's 16 nibble bytes at q with scale d into 32 floats at dst: (nibble - 8) * d. */
// @ts-ignore: decorator
@inline function dequantize_q4_block(q: usize, d: f32, dst: usize): void {
  const dv = f32x4.splat(d);
  const packed = v128.load(q);
  const low = i8x16.sub(v128.and(packed, i8x16.splat(0x0f)), i8x16.splat(8));
  const high = i8x16.sub(v128.and(i16x8.shr_u(packed, 4), i8x16.splat(0x0f)), i8x16.splat(8));
  store_scaled8(dst, i16x8.extend_low_i8x16_s(low), dv);
  store_scaled8(dst + 32, i16x8.extend_high_i8x16_s(low), dv);
  store_scaled8(dst + 64, i16x8.extend_low_i8x16_s(high), dv);
  store_scaled8(dst + 96, i16x8.extend_high_i8x16_s(high), dv);
}

/** As get_rows_f32 with w: [vocab, k/32] Q8_0 blocks. NOTE: k must be a multiple of 32. */
export function get_rows_q8_0(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * Q8_0_BYTES;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += Q8_0_BYTES, dst += 128) dequantize_q8_block(src + 2, f16_to_f32(load<u16>(src)), dst);
  }
}

/** As get_rows_f32 with w: [vocab, k/32] Q4_0 blocks. NOTE: k must be a multiple of 32. */
export function get_rows_q4_0(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * Q4_0_BYTES;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += Q4_0_BYTES, dst += 128) dequantize_q4_block(src + 2, f16_to_f32(load<u16>(src)), dst);
  }
}

/** As get_rows_q8_0 with w in the Q8_0x4 packed layout (repack_q8_0x4), so one copy serves lookup and matmul. */
export function get_rows_q8_0x4(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    const id = load<i32>(ids + (<usize>t << 2));
    let src = w + <usize>(id >> 2) * <usize>blocks * 136;
    const r = <usize>(id & 3);
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 136, dst += 128) dequantize_q8_block(src + 8 + (r << 5), f16_to_f32(load<u16>(src + (r << 1))), dst);
  }
}

/** As get_rows_q4_0 with w in the Q4_0x4 packed layout (repack_q4_0x4). */
export function get_rows_q4_0x4(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    const id = load<i32>(ids + (<usize>t << 2));
    let src = w + <usize>(id >> 2) * <usize>blocks * 72;
    const r = <usize>(id & 3);
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 72, dst += 128) dequantize_q4_block(src + 8 + (r << 4), f16_to_f32(load<u16>(src + (r << 1))), dst);
  }
}
