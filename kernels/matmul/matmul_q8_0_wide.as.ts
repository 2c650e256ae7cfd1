// The Q8_0 matmul over wide activations (quantize_q8_0_wide: int16 quants, four token rows interleaved per block):
// y = x W^T with the same integer block dots and the same f32 accumulation as matmul_q8_0, so its results are bit
// for bit matmul_q8_0's. With the activations already widened, a batched block costs four multiply-adds per token
// row instead of four widening loads and four multiply-adds (the widening was a third of matmul_q8_0's batched
// work). rows == 1 streams four weight rows (a quarter of the range apart) against one token row; rows > 1 runs each
// whole group of four token rows against each weight row over cache-sized chunks of weight rows (a last group of
// three with its zero row), and streams the rows of a last group of one or two.
import { f16_scales4, f16_to_f32_fast, store_lanes, transpose_sum_i32 } from "../assembly/convert.as";

/** Bytes of one Q8_0 weight block (f16 scale + 32 int8). */
const Q8_0_BYTES: usize = 34;
/** Bytes of one wide unit (see quantize_q8_0_wide): 4 x 32 int16 quants, then four f32 scales. */
const UNIT_BYTES: usize = 272;
const UNIT_SCALES: usize = 256;
/** Weight bytes per chunk of rows kept hot in L2 while every token group passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

/** The integer dot of 32 int16 activations at x with a block given as four i16x8 vectors, as four i32 lanes. */
// @ts-ignore: decorator
@inline function dot32(x: usize, w0: v128, w1: v128, w2: v128, w3: v128): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.load(x), w0), i32x4.dot_i16x8_s(v128.load(x, 16), w1)),
    i32x4.add(i32x4.dot_i16x8_s(v128.load(x, 32), w2), i32x4.dot_i16x8_s(v128.load(x, 48), w3)),
  );
}

/** The integer dot of one Q8_0 weight block at w with 32 int16 activations given as four vectors. */
// @ts-ignore: decorator
@inline function weight_dot32(w: usize, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 2), x0), i32x4.dot_i16x8_s(v128.load8x8_s(w, 10), x1)),
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 18), x2), i32x4.dot_i16x8_s(v128.load8x8_s(w, 26), x3)),
  );
}

/**
 * y[r * rowStep] = x · W[r * rowStep] for r < count (1..4), for the token row whose first block's quants are at x
 * (UNIT_BYTES between blocks, its scale at x + UNIT_SCALES - 64 * lane): four weight rows stepBytes apart; rows past
 * count repeat the last one and are not stored.
 */
// @ts-ignore: decorator
@inline function token_times_rows4(x: usize, scale: usize, w: usize, stepBytes: usize, y: usize, yStepBytes: usize, blocks: i32, count: i32): void {
  let w0 = w;
  let w1 = count > 1 ? w + stepBytes : w0;
  let w2 = count > 2 ? w + 2 * stepBytes : w1;
  let w3 = count > 3 ? w + 3 * stepBytes : w2;
  let acc = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += UNIT_BYTES, scale += UNIT_BYTES, w0 += Q8_0_BYTES, w1 += Q8_0_BYTES, w2 += Q8_0_BYTES, w3 += Q8_0_BYTES) {
    const x0 = v128.load(x), x1 = v128.load(x, 16), x2 = v128.load(x, 32), x3 = v128.load(x, 48);
    const sums = transpose_sum_i32(weight_dot32(w0, x0, x1, x2, x3), weight_dot32(w1, x0, x1, x2, x3), weight_dot32(w2, x0, x1, x2, x3), weight_dot32(w3, x0, x1, x2, x3));
    const scales = f32x4.mul(f16_scales4(w0, w1, w2, w3), f32x4.splat(load<f32>(scale)));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
  }
  store_lanes(y, yStepBytes, acc, count);
}

/**
 * Weight rows [j0, j1) times token row t of the wide activations at xw, four rows at a time taken a quarter of the
 * range apart (four long sequential streams keep the hardware prefetchers ahead; see matmul_quant.as.ts).
 */
// @ts-ignore: decorator
@inline function stream_rows(xw: usize, t: i32, w: usize, rowBytes: usize, y: usize, blocks: i32, j0: i32, j1: i32): void {
  const lane = <usize>(t & 3);
  const x = xw + <usize>(t >> 2) * <usize>blocks * UNIT_BYTES + (lane << 6);
  const scale = x - (lane << 6) + UNIT_SCALES + (lane << 2);
  const total = j1 - j0;
  const q = (total + 3) >> 2;
  for (let i = 0; i < q; i++) {
    const count = min(4, (total - i + q - 1) / q);
    const j = j0 + i;
    token_times_rows4(x, scale, w + <usize>j * rowBytes, <usize>q * rowBytes, y + (<usize>j << 2), <usize>q << 2, blocks, count);
  }
}

/**
 * A 4-token x 1-weight-row tile: y[4g + i][j] = x[4g + i] · W[j] for i < count (the group's rows; a partial group's
 * missing rows are zeros and not stored) for the group of units at x; y points at y[4g][j], yStride bytes between
 * token rows. Each weight block is widened once for the four tokens.
 */
// @ts-ignore: decorator
@inline function group_times_row(x: usize, w: usize, y: usize, yStride: usize, blocks: i32, count: i32): void {
  let acc = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += UNIT_BYTES, w += Q8_0_BYTES) {
    const w0 = v128.load8x8_s(w, 2), w1 = v128.load8x8_s(w, 10), w2 = v128.load8x8_s(w, 18), w3 = v128.load8x8_s(w, 26);
    const sums = transpose_sum_i32(dot32(x, w0, w1, w2, w3), dot32(x + 64, w0, w1, w2, w3), dot32(x + 128, w0, w1, w2, w3), dot32(x + 192, w0, w1, w2, w3));
    const scales = f32x4.mul(v128.load(x, UNIT_SCALES), f32x4.splat(f16_to_f32_fast(load<u16>(w))));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sums), scales));
  }
  store_lanes(y, yStride, acc, count);
}

/**
 * y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1), with xw: wide Q8_0 activations of `rows` token rows (from
 * quantize_q8_0_wide), w: [n, k/32] Q8_0 blocks, y: [rows, n] f32. Bit for bit matmul_q8_0's result on the same
 * activations (for finite activation scales). NOTE: k must be a multiple of 32.
 */
export function matmul_q8_0_wide(xw: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  const blocks = k >> 5;
  const rowBytes = <usize>blocks * Q8_0_BYTES;
  const groupBytes = <usize>blocks * UNIT_BYTES;
  const yStride = <usize>n << 2;
  if (rows == 1) {
    stream_rows(xw, 0, w, rowBytes, y, blocks, j0, j1);
    return;
  }
  // A last group of three rows runs as a tile with its zero row (4 rows of tile work cost less than 3 streamed);
  // one or two rows are streamed.
  const tiled = (rows & 3) == 3 ? rows + 1 : rows & ~3;
  const chunk = max(4, WEIGHT_CHUNK_BYTES / <i32>rowBytes);
  for (let c0 = j0; c0 < j1; c0 += chunk) {
    const c1 = min(j1, c0 + chunk);
    for (let t = 0; t < tiled; t += 4) {
      const xg = xw + <usize>(t >> 2) * groupBytes;
      const yg = y + <usize>t * yStride;
      const count = min(4, rows - t);
      for (let j = c0; j < c1; j++) group_times_row(xg, w + <usize>j * rowBytes, yg + (<usize>j << 2), yStride, blocks, count);
    }
    for (let t = tiled; t < rows; t++) stream_rows(xw, t, w, rowBytes, y + <usize>t * yStride, blocks, c0, c1);
  }
}
