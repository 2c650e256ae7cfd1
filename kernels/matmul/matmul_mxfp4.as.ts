// Matrix multiplication with fused dequantization for MXFP4 weights (gpt-oss's experts) against Q8_0 activations, as
// llama.cpp's CPU backend pairs them (vec_dot_type Q8_0, ggml_vec_dot_mxfp4_q8_0). A weight block is an E8M0
// exponent e and 32 4-bit codes; a code becomes its doubled e2m1 value (kvalues_mxfp4, -12..12) by one byte swizzle,
// the 32-value dot with the activation quants is exact in integers, and the block adds
// sum * (E8M0_half(e) * d_x) in f32, in block order, as ggml's kernels do.
// The integer dot is built two ways, both exact: the relaxed-SIMD build looks codes up as kvalue + 12 (0..24, the
// unsigned operand of the relaxed int8 dot, as int8-dot.as.ts uses it) and takes 12 * sum(x) off once per activation block; the plain
// build widens the signed kvalues to i16 against activations widened once per block (as matmul_quant.as.ts's Q4_0).
// Structure as matmul_quant.as.ts: rows == 1 streams twelve weight rows a twelfth of the range apart; rows > 1 reuses
// each weight block across four token rows over cache-sized chunks of weight rows; threads split weight rows [j0, j1).
// Every path gives a row the same f32 operations in the same order, so a row's result does not depend on the batch.
import { STREAMS, store_streams, stream_base, stream_offset } from "../assembly/streams.as";
import { f16_scales4, f16_to_f32_fast, splat_sum_i32, store_lanes, transpose_sum_i32 } from "../assembly/convert.as";

/** Bytes of one MXFP4 block: e, then 16 bytes of codes (value j low nibble of byte j, value j + 16 high). */
const BLOCK_BYTES: usize = 17;
/** Bytes of one Q8_0 activation block: f16 d, then 32 int8. */
const X_BYTES: usize = 34;
/** Weight bytes per chunk of rows kept hot in L2 while every token tile passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

/** kvalues_mxfp4: code -> twice its e2m1 value. */
// @ts-ignore: decorator
@inline function kvalues(): v128 {
  return i8x16(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
}

/** kvalues_mxfp4 + 12: every code's value as an unsigned byte (0..24), for the relaxed dot's unsigned operand. */
// @ts-ignore: decorator
@inline function kvalues_plus12(): v128 {
  return i8x16(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
}

/** table[code] for 16 codes (each 0..15): one pshufb in the relaxed build, where no index needs zeroing. */
// @ts-ignore: decorator
@inline function lookup(table: v128, codes: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i8x16.relaxed_swizzle(table, codes);
  return i8x16.swizzle(table, codes);
}

/** Codes of elements 0..15 of the block at w. */
// @ts-ignore: decorator
@inline function codes_low(w: usize): v128 {
  return v128.and(v128.load(w, 1), i8x16.splat(0x0f));
}

/** Codes of elements 16..31 of the block at w. */
// @ts-ignore: decorator
@inline function codes_high(w: usize): v128 {
  return v128.and(i16x8.shr_u(v128.load(w, 1), 4), i8x16.splat(0x0f));
}

/** GGML_E8M0_TO_FP32_HALF(e) = 2^(e - 128) from ggml's bits: 0x00200000 << e for e < 2 (subnormal), else (e - 1) << 23. */
// @ts-ignore: decorator
@inline function e8m0_half(e: u32): f32 {
  return reinterpret<f32>(e < 2 ? (e + 1) << 21 : (e - 1) << 23);
}

/**
 * The scales of four weight blocks (their e at w0..w3) as f32x4, lane r = E8M0_half(e of w_r): the larger of
 * (e - 1) << 23 and (e + 1) << 21 as bits, which is ggml's (e - 1) << 23 for e >= 2 and 0x00200000 << e below.
 */
// @ts-ignore: decorator
@inline function e8m0_half4(w0: usize, w1: usize, w2: usize, w3: usize): v128 {
  let e = i32x4.splat(0);
  e = v128.load8_lane(w0, e, 0);
  e = v128.load8_lane(w1, e, 4);
  e = v128.load8_lane(w2, e, 8);
  e = v128.load8_lane(w3, e, 12);
  return i32x4.max_s(i32x4.shl(i32x4.sub(e, i32x4.splat(1)), 23), i32x4.shl(i32x4.add(e, i32x4.splat(1)), 21));
}

/**
 * The relaxed build's products of the weight block at w with an activation block's 32 int8 (xl: elements 0..15, xh:
 * 16..31) as eight i16 lanes whose total is sum((kvalue + 12) * x): 12 * sum(x) is still to come off. Exact: the
 * relaxed int8 dot is defined for unsigned operands below 128 (here 0..24), and each lane (four products, one pair
 * sum from each half) stays within 4 * 24 * 127 = 12192.
 */
// @ts-ignore: decorator
@inline function offset_block_pairs(w: usize, xl: v128, xh: v128): v128 {
  const table = kvalues_plus12();
  return i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(xl, lookup(table, codes_low(w))),
    i16x8.relaxed_dot_i8x16_i7x16_s(xh, lookup(table, codes_high(w))),
  );
}

/**
 * [sum(a), sum(b), sum(c), sum(d)] as i32 lanes for four vectors of eight i16 lanes each within +-12192: the halves
 * of two rows are added in i16 (within +-24384), then widened in pairs, then the pair sums gathered.
 */
// @ts-ignore: decorator
@inline function transpose_sum_i16(a: v128, b: v128, c: v128, d: v128): v128 {
  const one = i16x8.splat(1);
  const ab = i32x4.dot_i16x8_s(i16x8.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31)), one);
  const cd = i32x4.dot_i16x8_s(i16x8.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31)), one);
  return i32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27), i8x16.shuffle(ab, cd, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
}

/** 12 * sum(x) of an activation block's 32 int8 (xl, xh as in offset_block_pairs), as four i32 lanes. */
// @ts-ignore: decorator
@inline function offset_of(xl: v128, xh: v128): v128 {
  const twelve = i8x16.splat(12);
  return i32x4.extadd_pairwise_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(xl, twelve), i16x8.relaxed_dot_i8x16_i7x16_s(xh, twelve)));
}

/** The plain build's exact dot of signed kvalues (lo: elements 0..15, hi: 16..31) with an activation block widened to i16 (x0..x3). */
// @ts-ignore: decorator
@inline function widened_block_dot(lo: v128, hi: v128, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  const s01 = i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(lo), x0), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(lo), x1));
  const s23 = i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(hi), x2), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(hi), x3));
  return i32x4.add(s01, s23);
}

/** The plain build's exact dot of the weight block at w with an activation block widened to i16. */
// @ts-ignore: decorator
@inline function signed_block_dot(w: usize, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  const table = kvalues();
  return widened_block_dot(lookup(table, codes_low(w)), lookup(table, codes_high(w)), x0, x1, x2, x3);
}

/** The exact dots of the activation block (relaxed build: its halves xl, xh and 12 * sum(x) splat) with the weight blocks at w0..w3, lane r = row r. */
// @ts-ignore: decorator
@inline function relaxed_sums4(xl: v128, xh: v128, offset: v128, w0: usize, w1: usize, w2: usize, w3: usize): v128 {
  const pairs = transpose_sum_i16(offset_block_pairs(w0, xl, xh), offset_block_pairs(w1, xl, xh), offset_block_pairs(w2, xl, xh), offset_block_pairs(w3, xl, xh));
  return i32x4.sub(pairs, offset);
}

/** The exact dots of the activation block (plain build: widened to i16, x0..x3) with the weight blocks at w0..w3, lane r = row r. */
// @ts-ignore: decorator
@inline function plain_sums4(x0: v128, x1: v128, x2: v128, x3: v128, w0: usize, w1: usize, w2: usize, w3: usize): v128 {
  return transpose_sum_i32(
    signed_block_dot(w0, x0, x1, x2, x3), signed_block_dot(w1, x0, x1, x2, x3),
    signed_block_dot(w2, x0, x1, x2, x3), signed_block_dot(w3, x0, x1, x2, x3),
  );
}

/** acc + sums * (E8M0_half(e of w0..w3) * dx), lane by lane: one block's step of four rows' sums, rounded as ggml's scalar loop. */
// @ts-ignore: decorator
@inline function add_scaled(acc: v128, sums: v128, dx: v128, w0: usize, w1: usize, w2: usize, w3: usize): v128 {
  return f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), f32x4.mul(e8m0_half4(w0, w1, w2, w3), dx)));
}

/**
 * y[r * rowStep] = x · W[r * rowStep] for r < count (1..12) for one Q8_0 token row x of `blocks` blocks: twelve
 * weight rows stepBytes apart, streamed side by side (decode reads each weight once, and twelve streams keep more of
 * memory's bandwidth busy than four: 1.6x on two threads of a Xeon); rows past count repeat the last one and are
 * not stored. The activation block's terms are computed once for the twelve rows.
 */
// @ts-ignore: decorator
@inline function token_times_rows12(x: usize, w: usize, stepBytes: usize, y: usize, yStepBytes: usize, blocks: i32, count: i32): void {
  let w0 = w;
  let w4 = stream_base(w, stepBytes, count, 1);
  let w8 = stream_base(w, stepBytes, count, 2);
  const s1 = stream_offset(stepBytes, count, 0, 1), s2 = stream_offset(stepBytes, count, 0, 2), s3 = stream_offset(stepBytes, count, 0, 3);
  const s5 = stream_offset(stepBytes, count, 1, 1), s6 = stream_offset(stepBytes, count, 1, 2), s7 = stream_offset(stepBytes, count, 1, 3);
  const s9 = stream_offset(stepBytes, count, 2, 1), s10 = stream_offset(stepBytes, count, 2, 2), s11 = stream_offset(stepBytes, count, 2, 3);
  let a = f32x4.splat(0), b = f32x4.splat(0), c = f32x4.splat(0);
  for (let i = 0; i < blocks; i++, x += X_BYTES, w0 += BLOCK_BYTES, w4 += BLOCK_BYTES, w8 += BLOCK_BYTES) {
    let sa: v128, sb: v128, sc: v128;
    if (ASC_FEATURE_RELAXED_SIMD) {
      const xl = v128.load(x, 2), xh = v128.load(x, 18);
      const offset = splat_sum_i32(offset_of(xl, xh));
      sa = relaxed_sums4(xl, xh, offset, w0, w0 + s1, w0 + s2, w0 + s3);
      sb = relaxed_sums4(xl, xh, offset, w4, w4 + s5, w4 + s6, w4 + s7);
      sc = relaxed_sums4(xl, xh, offset, w8, w8 + s9, w8 + s10, w8 + s11);
    } else {
      const x0 = v128.load8x8_s(x, 2), x1 = v128.load8x8_s(x, 10), x2 = v128.load8x8_s(x, 18), x3 = v128.load8x8_s(x, 26);
      sa = plain_sums4(x0, x1, x2, x3, w0, w0 + s1, w0 + s2, w0 + s3);
      sb = plain_sums4(x0, x1, x2, x3, w4, w4 + s5, w4 + s6, w4 + s7);
      sc = plain_sums4(x0, x1, x2, x3, w8, w8 + s9, w8 + s10, w8 + s11);
    }
    const dx = f32x4.splat(f16_to_f32_fast(load<u16>(x)));
    a = add_scaled(a, sa, dx, w0, w0 + s1, w0 + s2, w0 + s3);
    b = add_scaled(b, sb, dx, w4, w4 + s5, w4 + s6, w4 + s7);
    c = add_scaled(c, sc, dx, w8, w8 + s9, w8 + s10, w8 + s11);
  }
  store_streams(y, yStepBytes, a, b, c, count);
}

/** Weight rows [j0, j1) times one token row, twelve rows at a time a twelfth of the range apart. */
// @ts-ignore: decorator
@inline function stream_rows(x: usize, w: usize, rowBytes: usize, y: usize, blocks: i32, j0: i32, j1: i32): void {
  const total = j1 - j0;
  const q = (total + STREAMS - 1) / STREAMS;
  for (let i = 0; i < q; i++) {
    const count = min(STREAMS, (total - i + q - 1) / q);
    const j = j0 + i;
    token_times_rows12(x, w + <usize>j * rowBytes, <usize>q * rowBytes, y + (<usize>j << 2), <usize>q << 2, blocks, count);
  }
}

/** The exact dot of one weight block's kvalues (lo, hi: signed, looked up once for four tokens) with the token block at x. */
// @ts-ignore: decorator
@inline function x_block_dot(x: usize, lo: v128, hi: v128): v128 {
  return widened_block_dot(lo, hi, v128.load8x8_s(x, 2), v128.load8x8_s(x, 10), v128.load8x8_s(x, 18), v128.load8x8_s(x, 26));
}

/**
 * A 4-token x 1-weight-row tile: y[t][j] = x[t] · W[j] for four Q8_0 token rows (xStride bytes apart); y points at
 * y[t0][j], yStride bytes between token rows. Each weight block is looked up once for four tokens; the same f32
 * products, in the same order, as token_times_rows12.
 */
// @ts-ignore: decorator
@inline function tokens4_times_row(x: usize, xStride: usize, w: usize, y: usize, yStride: usize, blocks: i32): void {
  let acc = f32x4.splat(0);
  const table = kvalues();
  for (let b = 0; b < blocks; b++, x += X_BYTES, w += BLOCK_BYTES) {
    const lo = lookup(table, codes_low(w));
    const hi = lookup(table, codes_high(w));
    const x1 = x + xStride, x2 = x + 2 * xStride, x3 = x + 3 * xStride;
    const sums = transpose_sum_i32(x_block_dot(x, lo, hi), x_block_dot(x1, lo, hi), x_block_dot(x2, lo, hi), x_block_dot(x3, lo, hi));
    const scales = f32x4.mul(f16_scales4(x, x1, x2, x3), f32x4.splat(e8m0_half(load<u8>(w))));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
  }
  store_lanes(y, yStride, acc, 4);
}

/**
 * y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1), with xq: [rows, k/32] Q8_0 blocks (from quantize_q8_0),
 * w: [n, k/32] MXFP4 blocks, y: [rows, n] f32. NOTE: k must be a multiple of 32.
 */
export function matmul_mxfp4(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  const blocks = k >> 5;
  const rowBytes = <usize>blocks * BLOCK_BYTES;
  const xStride = <usize>blocks * X_BYTES;
  const yStride = <usize>n << 2;
  if (rows == 1) {
    stream_rows(xq, w, rowBytes, y, blocks, j0, j1);
    return;
  }
  const chunk = max(4, WEIGHT_CHUNK_BYTES / <i32>rowBytes);
  for (let c0 = j0; c0 < j1; c0 += chunk) {
    const c1 = min(j1, c0 + chunk);
    let t = 0;
    for (; t + 4 <= rows; t += 4) {
      const xt = xq + <usize>t * xStride;
      const yt = y + <usize>t * yStride;
      for (let j = c0; j < c1; j++) {
        tokens4_times_row(xt, xStride, w + <usize>j * rowBytes, yt + (<usize>j << 2), yStride, blocks);
      }
    }
    for (; t < rows; t++) stream_rows(xq + <usize>t * xStride, w, rowBytes, y + <usize>t * yStride, blocks, c0, c1);
  }
}
