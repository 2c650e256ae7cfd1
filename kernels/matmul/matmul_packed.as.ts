// Decode-speed matrix multiplication over weights repacked four rows at a time (see kernels/repack_x4):
// y = x W^T with x pre-quantized to Q8_0. In the packed layout the four rows' blocks for the same 32 columns are
// adjacent (four f16 scales, then the four rows' quants), so a matvec streams one contiguous buffer (the
// hardware prefetcher's best case) while each widened x block serves four rows, and the four f16 scales
// convert as one vector. The integer dot per 32-block is exact; scaled sums accumulate in f32 per row.
import { f16_to_f32_fast, f16x4_to_f32x4, splat_sum_i32, transpose_sum_i32 } from "../assembly/convert.as";

const KIND_Q8_0: i32 = 0;
const KIND_Q4_0: i32 = 1;
/** Bytes of one Q8_0 x block (f16 scale + 32 int8). */
const Q8_0_BYTES: usize = 34;
/** Packed weight bytes per chunk of groups kept hot in L2 while every token row passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

/** Bytes of one packed group-block: four f16 scales + four rows of quants (4 x 32 int8, or 4 x 16 nibble bytes). */
// @ts-ignore: decorator
@inline function group_block_bytes(kind: i32): usize {
  return kind == KIND_Q8_0 ? 136 : 72;
}

/** Integer dot of 32 int8 weights at w with an x block widened to four i16x8, as four partial i32 lanes. */
// @ts-ignore: decorator
@inline function q8_row_dot(w: usize, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w), x0), i32x4.dot_i16x8_s(v128.load8x8_s(w, 8), x1)),
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 16), x2), i32x4.dot_i16x8_s(v128.load8x8_s(w, 24), x3)),
  );
}

/** Integer dot of 32 unsigned nibbles at w (low nibbles = elements 0..15) with an x block, without the -8 offset. */
// @ts-ignore: decorator
@inline function q4_row_dot(w: usize, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  const packed = v128.load(w);
  const low = v128.and(packed, i8x16.splat(0x0f));
  const high = v128.and(i16x8.shr_u(packed, 4), i8x16.splat(0x0f));
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(low), x0), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(low), x1)),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(high), x2), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(high), x3)),
  );
}

/**
 * The four rows of one packed group (w: its first group-block) times one Q8_0 token row x of `blocks` blocks,
 * as [y_r0, y_r1, y_r2, y_r3].
 */
// @ts-ignore: decorator
@inline function token_times_group(x: usize, w: usize, blocks: i32, kind: i32): v128 {
  const bb = group_block_bytes(kind);
  let acc = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += Q8_0_BYTES, w += bb) {
    const x0 = v128.load8x8_s(x, 2), x1 = v128.load8x8_s(x, 10), x2 = v128.load8x8_s(x, 18), x3 = v128.load8x8_s(x, 26);
    let sums: v128;
    if (kind == KIND_Q8_0) {
      sums = transpose_sum_i32(q8_row_dot(w + 8, x0, x1, x2, x3), q8_row_dot(w + 40, x0, x1, x2, x3), q8_row_dot(w + 72, x0, x1, x2, x3), q8_row_dot(w + 104, x0, x1, x2, x3));
    } else {
      sums = transpose_sum_i32(q4_row_dot(w + 8, x0, x1, x2, x3), q4_row_dot(w + 24, x0, x1, x2, x3), q4_row_dot(w + 40, x0, x1, x2, x3), q4_row_dot(w + 56, x0, x1, x2, x3));
      // sum((q - 8) * x) = sum(q * x) - 8 * sum(x), shared by the four rows.
      const eight = i16x8.splat(8);
      const correction = i32x4.add(
        i32x4.add(i32x4.dot_i16x8_s(x0, eight), i32x4.dot_i16x8_s(x1, eight)),
        i32x4.add(i32x4.dot_i16x8_s(x2, eight), i32x4.dot_i16x8_s(x3, eight)),
      );
      sums = i32x4.sub(sums, splat_sum_i32(correction));
    }
    const scales = f32x4.mul(f16x4_to_f32x4(w), f32x4.splat(f16_to_f32_fast(load<u16>(x))));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
  }
  return acc;
}

/** Stores the lanes of one group's result (rows 4g..4g+3) that fall in [j0, j1). y: the token's output row. */
// @ts-ignore: decorator
@inline function store_group(y: usize, value: v128, g: i32, j0: i32, j1: i32): void {
  const first = g << 2;
  const p = y + (<usize>first << 2);
  if (first >= j0 && first + 4 <= j1) {
    v128.store(p, value);
    return;
  }
  if (first >= j0 && first < j1) store<f32>(p, f32x4.extract_lane(value, 0));
  if (first + 1 >= j0 && first + 1 < j1) store<f32>(p, f32x4.extract_lane(value, 1), 4);
  if (first + 2 >= j0 && first + 2 < j1) store<f32>(p, f32x4.extract_lane(value, 2), 8);
  if (first + 3 >= j0 && first + 3 < j1) store<f32>(p, f32x4.extract_lane(value, 3), 12);
}

// @ts-ignore: decorator
@inline function matmul_packed(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32, kind: i32): void {
  const blocks = k >> 5;
  const groupBytes = <usize>blocks * group_block_bytes(kind);
  const xStride = <usize>blocks * Q8_0_BYTES;
  const yStride = <usize>n << 2;
  j1 = min(j1, n);
  if (j0 >= j1) return;
  const g0 = j0 >> 2;
  const g1 = (j1 + 3) >> 2;
  if (rows == 1) {
    for (let g = g0; g < g1; g++) store_group(y, token_times_group(xq, w + <usize>g * groupBytes, blocks, kind), g, j0, j1);
    return;
  }
  // Prefill: a chunk of groups stays in L2 while every token row passes over it.
  const chunk = max(1, WEIGHT_CHUNK_BYTES / <i32>groupBytes);
  for (let c0 = g0; c0 < g1; c0 += chunk) {
    const c1 = min(g1, c0 + chunk);
    for (let t = 0; t < rows; t++) {
      const xt = xq + <usize>t * xStride;
      const yt = y + <usize>t * yStride;
      for (let g = c0; g < c1; g++) store_group(yt, token_times_group(xt, w + <usize>g * groupBytes, blocks, kind), g, j0, j1);
    }
  }
}

/**
 * y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1) with W in the Q8_0x4 packed layout (repack_q8_0x4) and
 * xq: [rows, k/32] Q8_0 blocks (quantize_q8_0), y: [rows, n] f32. k must be a multiple of 32. Ranges on
 * multiples of 4 (parallel grain 4) avoid computing a boundary group twice.
 */
export function matmul_q8_0x4(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_packed(xq, w, y, rows, k, n, j0, j1, KIND_Q8_0);
}

/** As matmul_q8_0x4 with W in the Q4_0x4 packed layout (repack_q4_0x4). */
export function matmul_q4_0x4(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_packed(xq, w, y, rows, k, n, j0, j1, KIND_Q4_0);
}
