// Matrix multiplication with fused dequantization for Q8_0 and Q4_0 weights: y = x W^T where x arrives
// pre-quantized to Q8_0 (quantize_q8_0). Per 32-block the dot product is exact in integers (i8 -> i16
// widening loads + i32x4.dot_i16x8_s), then scaled by d_w * d_x and accumulated in f32, as
// ggml_vec_dot_q8_0_q8_0 does. rows == 1 streams twelve weight rows (a twelfth of the range apart) against one
// x row; rows > 1 reuses each weight block across four token rows, over cache-sized chunks of weight rows.
import { STREAMS, store_streams, stream_base, stream_offset } from "../assembly/streams.as";
import { f16_scales4, f16_to_f32_fast, splat_sum_i32, store_lanes, transpose_sum_i32 } from "../assembly/convert.as";

const KIND_Q8_0: i32 = 0;
const KIND_Q4_0: i32 = 1;
/** Bytes of one Q8_0 block (f16 scale + 32 int8); x rows are always Q8_0. */
const Q8_0_BYTES: usize = 34;
/** Weight bytes per chunk of rows kept hot in L2 while every token tile passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

// @ts-ignore: decorator
@inline function block_bytes(kind: i32): usize {
  return kind == KIND_Q8_0 ? 34 : 18;
}

/**
 * The integer dot product of one weight block (at w, its f16 scale first) with an x block given as four
 * i16x8 vectors (elements 0-7, 8-15, 16-23, 24-31), as four i32 lanes whose sum is the exact block dot.
 * For Q4_0 the lanes hold sum(q * x), not yet corrected by -8 * sum(x).
 */
// @ts-ignore: decorator
@inline function block_dot(w: usize, x0: v128, x1: v128, x2: v128, x3: v128, kind: i32): v128 {
  if (kind == KIND_Q8_0) {
    const s01 = i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 2), x0), i32x4.dot_i16x8_s(v128.load8x8_s(w, 10), x1));
    const s23 = i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 18), x2), i32x4.dot_i16x8_s(v128.load8x8_s(w, 26), x3));
    return i32x4.add(s01, s23);
  }
  const packed = v128.load(w, 2);
  const low = v128.and(packed, i8x16.splat(0x0f)); // elements 0..15
  const high = v128.and(i16x8.shr_u(packed, 4), i8x16.splat(0x0f)); // elements 16..31
  const s01 = i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(low), x0), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(low), x1));
  const s23 = i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(high), x2), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(high), x3));
  return i32x4.add(s01, s23);
}

/** The exact block dots of the x block (widened, x0..x3) with the weight blocks at w0..w3, lane r = row r (Q4_0 not yet corrected). */
// @ts-ignore: decorator
@inline function sums4(x0: v128, x1: v128, x2: v128, x3: v128, w0: usize, w1: usize, w2: usize, w3: usize, kind: i32): v128 {
  return transpose_sum_i32(block_dot(w0, x0, x1, x2, x3, kind), block_dot(w1, x0, x1, x2, x3, kind), block_dot(w2, x0, x1, x2, x3, kind), block_dot(w3, x0, x1, x2, x3, kind));
}

/** acc + sums * (d_w * d_x), lane r for the weight block at w_r: one block's step of four rows. */
// @ts-ignore: decorator
@inline function add_scaled(acc: v128, sums: v128, dx: v128, w0: usize, w1: usize, w2: usize, w3: usize): v128 {
  return f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), f32x4.mul(f16_scales4(w0, w1, w2, w3), dx)));
}

/**
 * y[r * rowStep] = x · W[r * rowStep] for r < count (1..12) for one Q8_0 token row x of `blocks` blocks: twelve
 * weight rows stepBytes apart (see stream_rows); rows past count repeat the last one and are not stored. Each group
 * of four rows' block sums is gathered into one vector (lane r = row r), so one convert, one scale multiply and one
 * add serve four rows; the x block is widened once for all twelve.
 */
// @ts-ignore: decorator
@inline function token_times_rows12(x: usize, w: usize, stepBytes: usize, y: usize, yStepBytes: usize, blocks: i32, count: i32, kind: i32): void {
  let w0 = w;
  let w4 = stream_base(w, stepBytes, count, 1);
  let w8 = stream_base(w, stepBytes, count, 2);
  const s1 = stream_offset(stepBytes, count, 0, 1), s2 = stream_offset(stepBytes, count, 0, 2), s3 = stream_offset(stepBytes, count, 0, 3);
  const s5 = stream_offset(stepBytes, count, 1, 1), s6 = stream_offset(stepBytes, count, 1, 2), s7 = stream_offset(stepBytes, count, 1, 3);
  const s9 = stream_offset(stepBytes, count, 2, 1), s10 = stream_offset(stepBytes, count, 2, 2), s11 = stream_offset(stepBytes, count, 2, 3);
  const bb = block_bytes(kind);
  let a = f32x4.splat(0), b = f32x4.splat(0), c = f32x4.splat(0);
  for (let i = 0; i < blocks; i++, x += Q8_0_BYTES, w0 += bb, w4 += bb, w8 += bb) {
    const x0 = v128.load8x8_s(x, 2), x1 = v128.load8x8_s(x, 10), x2 = v128.load8x8_s(x, 18), x3 = v128.load8x8_s(x, 26);
    let sa = sums4(x0, x1, x2, x3, w0, w0 + s1, w0 + s2, w0 + s3, kind);
    let sb = sums4(x0, x1, x2, x3, w4, w4 + s5, w4 + s6, w4 + s7, kind);
    let sc = sums4(x0, x1, x2, x3, w8, w8 + s9, w8 + s10, w8 + s11, kind);
    if (kind == KIND_Q4_0) {
      // sum((q - 8) * x) = sum(q * x) - 8 * sum(x), the correction shared by the twelve rows.
      const eight = i16x8.splat(8);
      const correction = splat_sum_i32(i32x4.add(
        i32x4.add(i32x4.dot_i16x8_s(x0, eight), i32x4.dot_i16x8_s(x1, eight)),
        i32x4.add(i32x4.dot_i16x8_s(x2, eight), i32x4.dot_i16x8_s(x3, eight)),
      ));
      sa = i32x4.sub(sa, correction);
      sb = i32x4.sub(sb, correction);
      sc = i32x4.sub(sc, correction);
    }
    const dx = f32x4.splat(f16_to_f32_fast(load<u16>(x)));
    a = add_scaled(a, sa, dx, w0, w0 + s1, w0 + s2, w0 + s3);
    b = add_scaled(b, sb, dx, w4, w4 + s5, w4 + s6, w4 + s7);
    c = add_scaled(c, sc, dx, w8, w8 + s9, w8 + s10, w8 + s11);
  }
  store_streams(y, yStepBytes, a, b, c, count);
}

/**
 * Weight rows [j0, j1) times one token row, twelve rows at a time taken a twelfth of the range apart: rows
 * j0 + i + r * q for r < 12 (q = ceil((j1 - j0) / 12)). NOTE: long sequential streams keep the hardware prefetchers
 * ahead; twelve of them keep more of memory's bandwidth busy than four (on a 2-core Xeon VM, 2880 x 2880 from
 * memory: 1.8x on one thread, 1.3x on two), and four adjacent rows, i.e. short streams restarting every row, do worst.
 */
// @ts-ignore: decorator
@inline function stream_rows(x: usize, w: usize, rowBytes: usize, y: usize, blocks: i32, j0: i32, j1: i32, kind: i32): void {
  const total = j1 - j0;
  const q = (total + STREAMS - 1) / STREAMS;
  for (let i = 0; i < q; i++) {
    const count = min(STREAMS, (total - i + q - 1) / q);
    const j = j0 + i;
    token_times_rows12(x, w + <usize>j * rowBytes, <usize>q * rowBytes, y + (<usize>j << 2), <usize>q << 2, blocks, count, kind);
  }
}

/** The integer dot of one Q8_0 x block (at x) with a weight block given as four i16x8 vectors, as four lanes. */
// @ts-ignore: decorator
@inline function x_block_dot(x: usize, w0: v128, w1: v128, w2: v128, w3: v128): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(x, 2), w0), i32x4.dot_i16x8_s(v128.load8x8_s(x, 10), w1)),
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(x, 18), w2), i32x4.dot_i16x8_s(v128.load8x8_s(x, 26), w3)),
  );
}

/**
 * A 4-token x 1-weight-row tile: y[t][j] = x[t] · W[j] for four Q8_0 token rows (xStride bytes apart);
 * y points at y[t0][j], yStride bytes between token rows. Each weight block is widened once for four tokens.
 */
// @ts-ignore: decorator
@inline function tokens4_times_row(x: usize, xStride: usize, w: usize, y: usize, yStride: usize, blocks: i32, kind: i32): void {
  const bb = block_bytes(kind);
  let acc = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += Q8_0_BYTES, w += bb) {
    let w0: v128, w1: v128, w2: v128, w3: v128;
    if (kind == KIND_Q8_0) {
      w0 = v128.load8x8_s(w, 2); w1 = v128.load8x8_s(w, 10); w2 = v128.load8x8_s(w, 18); w3 = v128.load8x8_s(w, 26);
    } else {
      const packed = v128.load(w, 2);
      const low = v128.and(packed, i8x16.splat(0x0f));
      const high = v128.and(i16x8.shr_u(packed, 4), i8x16.splat(0x0f));
      const eight = i16x8.splat(8);
      w0 = i16x8.sub(i16x8.extend_low_i8x16_u(low), eight);
      w1 = i16x8.sub(i16x8.extend_high_i8x16_u(low), eight);
      w2 = i16x8.sub(i16x8.extend_low_i8x16_u(high), eight);
      w3 = i16x8.sub(i16x8.extend_high_i8x16_u(high), eight);
    }
    const x1 = x + xStride, x2 = x + 2 * xStride, x3 = x + 3 * xStride;
    const sums = transpose_sum_i32(x_block_dot(x, w0, w1, w2, w3), x_block_dot(x1, w0, w1, w2, w3), x_block_dot(x2, w0, w1, w2, w3), x_block_dot(x3, w0, w1, w2, w3));
    const scales = f32x4.mul(f16_scales4(x, x1, x2, x3), f32x4.splat(f16_to_f32_fast(load<u16>(w))));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
  }
  store_lanes(y, yStride, acc, 4);
}

// @ts-ignore: decorator
@inline function matmul_quant(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32, kind: i32): void {
  const blocks = k >> 5;
  const rowBytes = <usize>blocks * block_bytes(kind);
  const xStride = <usize>blocks * Q8_0_BYTES;
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
 * y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1), with xq: [rows, k/32] Q8_0 blocks (from quantize_q8_0),
 * w: [n, k/32] Q8_0 blocks, y: [rows, n] f32. NOTE: k must be a multiple of 32.
 */
export function matmul_q8_0(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_quant(xq, w, y, rows, k, n, j0, j1, KIND_Q8_0);
}

/** As matmul_q8_0 with w: [n, k/32] Q4_0 blocks (f16 scale + 16 bytes of nibbles, value (q - 8) * d). */
export function matmul_q4_0(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_quant(xq, w, y, rows, k, n, j0, j1, KIND_Q4_0);
}
