// Matrix multiplication with fused dequantization for GGML's other 32-value block types, Q4_1, Q5_0 and Q5_1, paired
// with activations as llama.cpp's CPU backend pairs them (type_traits_cpu vec_dot_type): Q5_0 against Q8_0
// (ggml_vec_dot_q5_0_q8_0), Q4_1 and Q5_1 against Q8_1 (ggml_vec_dot_q4_1_q8_1 / q5_1_q8_1), whose s = d * sum(q)
// carries the minimum's term. Per 32-block the quant dot product is exact in integers (dot16: the relaxed int8 dot in
// the relaxed-SIMD build, i16 widening in the plain one; the weight quants 0..31 are the unsigned operand, Q5_0's
// -16 applied as -16 * sum(x)), then scaled by d_w * d_x and accumulated in f32; the Q4_1 / Q5_1 min terms m_w * s_x
// accumulate apart and are added at the end, as ggml's x86 kernels do (hsum(acc) + summs). Structure as
// matmul_quant.as.ts: rows == 1 streams four weight rows a quarter of the range apart, rows > 1 reuses each
// weight block across four token rows over cache-sized chunks of weight rows; threads split weight rows [j0, j1).
import { f16_scales4, f16_to_f32_fast, splat_sum_i32, store_lanes, transpose_sum_i32 } from "../assembly/convert.as";
import { dot16 } from "../assembly/int8-dot.as";

const KIND_Q4_1: i32 = 0;
const KIND_Q5_0: i32 = 1;
const KIND_Q5_1: i32 = 2;
/** Weight bytes per chunk of rows kept hot in L2 while every token tile passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

/** Bytes of one weight block: Q4_1 d, m, 16 nibbles; Q5_0 d, qh, 16 nibbles; Q5_1 d, m, qh, 16 nibbles. */
// @ts-ignore: decorator
@inline function block_bytes(kind: i32): usize {
  return kind == KIND_Q4_1 ? 20 : kind == KIND_Q5_0 ? 22 : 24;
}

/** Bytes of one activation block: Q8_0 (d, 32 int8) for Q5_0, Q8_1 (d, s, 32 int8) for Q4_1 and Q5_1. */
// @ts-ignore: decorator
@inline function x_bytes(kind: i32): usize {
  return kind == KIND_Q5_0 ? 34 : 36;
}

/** Offset of the 32 int8 quants in an activation block. */
// @ts-ignore: decorator
@inline function x_quants(kind: i32): usize {
  return kind == KIND_Q5_0 ? 2 : 4;
}

/** Offset of the nibbles in a weight block. */
// @ts-ignore: decorator
@inline function nibbles_at(kind: i32): usize {
  return kind == KIND_Q4_1 ? 4 : kind == KIND_Q5_0 ? 6 : 8;
}

/** Offset of qh (the fifth bits, u32 LE) in a Q5 weight block. */
// @ts-ignore: decorator
@inline function qh_at(kind: i32): usize {
  return kind == KIND_Q5_0 ? 2 : 4;
}

/** The fifth bits of elements 0..15 (half 0) or 16..31 (half 1) of a Q5 block as bytes 0x10 or 0 (ggml's bytes_from_bits_32). */
// @ts-ignore: decorator
@inline function fifth_bits(qh: v128, half: i32): v128 {
  const spread = half == 0
    ? i8x16.swizzle(qh, i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1))
    : i8x16.swizzle(qh, i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const mask = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  return v128.and(i8x16.eq(v128.and(spread, mask), mask), i8x16.splat(0x10));
}

/** Unsigned quants (0..15 or 0..31) of elements 0..15 of the weight block at w. */
// @ts-ignore: decorator
@inline function quants_low(w: usize, kind: i32): v128 {
  const low = v128.and(v128.load(w + nibbles_at(kind)), i8x16.splat(0x0f));
  if (kind == KIND_Q4_1) return low;
  return v128.or(low, fifth_bits(v128.load32_zero(w + qh_at(kind)), 0));
}

/** Unsigned quants of elements 16..31 of the weight block at w. */
// @ts-ignore: decorator
@inline function quants_high(w: usize, kind: i32): v128 {
  const high = v128.and(i16x8.shr_u(v128.load(w + nibbles_at(kind)), 4), i8x16.splat(0x0f));
  if (kind == KIND_Q4_1) return high;
  return v128.or(high, fifth_bits(v128.load32_zero(w + qh_at(kind)), 1));
}

/** sum(q * x) of the weight block at w with the 32 int8 at xq, as four i32 lanes (Q5_0: not yet less 16 * sum(x)). */
// @ts-ignore: decorator
@inline function block_dot(w: usize, xq: usize, kind: i32): v128 {
  return i32x4.add(dot16(quants_low(w, kind), xq), dot16(quants_high(w, kind), xq + 16));
}

/** 16 * sum(x) of the 32 int8 at xq as four i32 lanes (Q5_0's offset: sum((q - 16) x) = sum(q x) - 16 sum(x)). */
// @ts-ignore: decorator
@inline function offset_dot(xq: usize): v128 {
  const sixteen = i8x16.splat(16);
  return i32x4.add(dot16(sixteen, xq), dot16(sixteen, xq + 16));
}

/**
 * y[r * rowStep] = x · W[r * rowStep] for r < count (1..4) for one token row x of `blocks` blocks: four weight rows
 * stepBytes apart; rows past count repeat the last one and are not stored. Lane r of each vector is row r.
 */
// @ts-ignore: decorator
@inline function token_times_rows4(x: usize, w: usize, stepBytes: usize, y: usize, yStepBytes: usize, blocks: i32, count: i32, kind: i32): void {
  let w0 = w;
  let w1 = count > 1 ? w + stepBytes : w0;
  let w2 = count > 2 ? w + 2 * stepBytes : w1;
  let w3 = count > 3 ? w + 3 * stepBytes : w2;
  const bb = block_bytes(kind);
  const xb = x_bytes(kind);
  let acc = f32x4.splat(0);
  let mins = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += xb, w0 += bb, w1 += bb, w2 += bb, w3 += bb) {
    const xq = x + x_quants(kind);
    let sums = transpose_sum_i32(block_dot(w0, xq, kind), block_dot(w1, xq, kind), block_dot(w2, xq, kind), block_dot(w3, xq, kind));
    if (kind == KIND_Q5_0) sums = i32x4.sub(sums, splat_sum_i32(offset_dot(xq)));
    const scales = f32x4.mul(f16_scales4(w0, w1, w2, w3), f32x4.splat(f16_to_f32_fast(load<u16>(x))));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
    if (kind != KIND_Q5_0) mins = f32x4.add(mins, f32x4.mul(f16_scales4(w0 + 2, w1 + 2, w2 + 2, w3 + 2), f32x4.splat(f16_to_f32_fast(load<u16>(x, 2)))));
  }
  if (kind != KIND_Q5_0) acc = f32x4.add(acc, mins);
  store_lanes(y, yStepBytes, acc, count);
}

/** Weight rows [j0, j1) times one token row, four rows at a time a quarter of the range apart (matmul_quant.as.ts). */
// @ts-ignore: decorator
@inline function stream_rows(x: usize, w: usize, rowBytes: usize, y: usize, blocks: i32, j0: i32, j1: i32, kind: i32): void {
  const total = j1 - j0;
  const q = (total + 3) >> 2;
  for (let i = 0; i < q; i++) {
    const count = min(4, (total - i + q - 1) / q);
    const j = j0 + i;
    token_times_rows4(x, w + <usize>j * rowBytes, <usize>q * rowBytes, y + (<usize>j << 2), <usize>q << 2, blocks, count, kind);
  }
}

/** The integer dot of unpacked weight quants (lo: elements 0..15, hi: 16..31) with the token block at x. */
// @ts-ignore: decorator
@inline function x_block_dot(x: usize, lo: v128, hi: v128, kind: i32): v128 {
  const xq = x + x_quants(kind);
  const dot = i32x4.add(dot16(lo, xq), dot16(hi, xq + 16));
  return kind == KIND_Q5_0 ? i32x4.sub(dot, offset_dot(xq)) : dot;
}

/**
 * A 4-token x 1-weight-row tile: y[t][j] = x[t] · W[j] for four token rows (xStride bytes apart); y points at
 * y[t0][j], yStride bytes between token rows. Each weight block is unpacked once for four tokens; the same products,
 * in the same order, as token_times_rows4 (so a row's result does not depend on the batch).
 */
// @ts-ignore: decorator
@inline function tokens4_times_row(x: usize, xStride: usize, w: usize, y: usize, yStride: usize, blocks: i32, kind: i32): void {
  const bb = block_bytes(kind);
  const xb = x_bytes(kind);
  let acc = f32x4.splat(0);
  let mins = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += xb, w += bb) {
    const lo = quants_low(w, kind);
    const hi = quants_high(w, kind);
    const x1 = x + xStride, x2 = x + 2 * xStride, x3 = x + 3 * xStride;
    const sums = transpose_sum_i32(x_block_dot(x, lo, hi, kind), x_block_dot(x1, lo, hi, kind), x_block_dot(x2, lo, hi, kind), x_block_dot(x3, lo, hi, kind));
    const scales = f32x4.mul(f16_scales4(x, x1, x2, x3), f32x4.splat(f16_to_f32_fast(load<u16>(w))));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
    if (kind != KIND_Q5_0) mins = f32x4.add(mins, f32x4.mul(f16_scales4(x + 2, x1 + 2, x2 + 2, x3 + 2), f32x4.splat(f16_to_f32_fast(load<u16>(w, 2)))));
  }
  if (kind != KIND_Q5_0) acc = f32x4.add(acc, mins);
  store_lanes(y, yStride, acc, 4);
}

// @ts-ignore: decorator
@inline function matmul_legacy(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32, kind: i32): void {
  const blocks = k >> 5;
  const rowBytes = <usize>blocks * block_bytes(kind);
  const xStride = <usize>blocks * x_bytes(kind);
  const yStride = <usize>n << 2;
  if (rows == 1) {
    stream_rows(xq, w, rowBytes, y, blocks, j0, j1, kind);
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
        tokens4_times_row(xt, xStride, w + <usize>j * rowBytes, yt + (<usize>j << 2), yStride, blocks, kind);
      }
    }
    for (; t < rows; t++) stream_rows(xq + <usize>t * xStride, w, rowBytes, y + <usize>t * yStride, blocks, c0, c1, kind);
  }
}

/**
 * y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1), with xq: [rows, k/32] Q8_1 blocks (from quantize_q8_1),
 * w: [n, k/32] Q4_1 blocks, y: [rows, n] f32. NOTE: k must be a multiple of 32.
 */
export function matmul_q4_1(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_legacy(xq, w, y, rows, k, n, j0, j1, KIND_Q4_1);
}

/** As matmul_q4_1 with xq: [rows, k/32] Q8_0 blocks (from quantize_q8_0) and w: [n, k/32] Q5_0 blocks. */
export function matmul_q5_0(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_legacy(xq, w, y, rows, k, n, j0, j1, KIND_Q5_0);
}

/** As matmul_q4_1 with w: [n, k/32] Q5_1 blocks (xq Q8_1). */
export function matmul_q5_1(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_legacy(xq, w, y, rows, k, n, j0, j1, KIND_Q5_1);
}
