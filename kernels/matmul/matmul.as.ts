// Matrix multiplication y = x W^T with f32, f16 or bf16 weights converted on the fly (AssemblyScript, SIMD).
// x: [rows, k] f32, W: [n, k] in its storage type, y: [rows, n] f32; each call computes columns [j0, j1) of y.
// rows == 1 (decode) streams four weight rows at once, a quarter of the range apart; rows > 1 reuses each loaded
// weight vector across a 4-token x 2-weight-row register tile, over cache-sized chunks of weight rows, so prefill
// is compute-bound. Both paths sum every output in one order (batch invariance: a token's y is bit for bit the same
// alone or in a batch of any size; kernels/matmul/batch-invariance.test.ts).
// NOTE: f16 weights use the fast conversion: a subnormal half costs an x86 microcode assist.
import { f16_high_to_f32x4, f16_to_f32, horizontal_sum, low_halves_high } from "../assembly/convert.as";

const KIND_F32: i32 = 0;
const KIND_F16: i32 = 1;
const KIND_BF16: i32 = 2;

/** Weight bytes per chunk of rows kept hot in L2 while every token tile passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

// @ts-ignore: decorator
@inline function element_bytes(kind: i32): usize {
  return kind == KIND_F32 ? 4 : 2;
}

/** Four consecutive weights at p as f32x4. */
// @ts-ignore: decorator
@inline function load4(p: usize, kind: i32): v128 {
  if (kind == KIND_F32) return v128.load(p);
  const high = low_halves_high(v128.load64_zero(p));
  if (kind == KIND_F16) return f16_high_to_f32x4(high);
  return high; // bf16 is the top half of an f32
}

/** One weight at p as f32. */
// @ts-ignore: decorator
@inline function load1(p: usize, kind: i32): f32 {
  if (kind == KIND_F32) return load<f32>(p);
  if (kind == KIND_F16) return f16_to_f32(load<u16>(p));
  return reinterpret<f32>(<u32>load<u16>(p) << 16);
}

/**
 * y[r * rowStep] = x · W[r * rowStep] for r < count (1..4) of one token row: four weight rows rowStep rows apart
 * (see stream_rows). Rows past count repeat the last one and are not stored. x: [k] f32; w: first weight row;
 * stepBytes: bytes between the four rows; y: first output, yStepBytes between outputs.
 * NOTE: one accumulator per row, added to in order four elements at a time, then the same horizontal sum and
 * scalar tail as tile4x2: every output is summed in one order whatever path computes it, so a token's result does
 * not depend on how many rows share its batch (batch invariance). Eight elements per pass still give four
 * independent dependency chains, enough to stream from memory.
 */
// @ts-ignore: decorator
@inline function token_times_rows4(x: usize, w: usize, stepBytes: usize, y: usize, yStepBytes: usize, k: i32, count: i32, kind: i32): void {
  const w0 = w;
  const w1 = count > 1 ? w + stepBytes : w0;
  const w2 = count > 2 ? w + 2 * stepBytes : w1;
  const w3 = count > 3 ? w + 3 * stepBytes : w2;
  const eb = element_bytes(kind);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 8 <= k; i += 8) {
    const xa = v128.load(x + (<usize>i << 2));
    const xb = v128.load(x + (<usize>i << 2), 16);
    const o = <usize>i * eb;
    a0 = f32x4.add(a0, f32x4.mul(load4(w0 + o, kind), xa));
    a1 = f32x4.add(a1, f32x4.mul(load4(w1 + o, kind), xa));
    a2 = f32x4.add(a2, f32x4.mul(load4(w2 + o, kind), xa));
    a3 = f32x4.add(a3, f32x4.mul(load4(w3 + o, kind), xa));
    a0 = f32x4.add(a0, f32x4.mul(load4(w0 + o + 4 * eb, kind), xb));
    a1 = f32x4.add(a1, f32x4.mul(load4(w1 + o + 4 * eb, kind), xb));
    a2 = f32x4.add(a2, f32x4.mul(load4(w2 + o + 4 * eb, kind), xb));
    a3 = f32x4.add(a3, f32x4.mul(load4(w3 + o + 4 * eb, kind), xb));
  }
  if (i + 4 <= k) {
    const xa = v128.load(x + (<usize>i << 2));
    const o = <usize>i * eb;
    a0 = f32x4.add(a0, f32x4.mul(load4(w0 + o, kind), xa));
    a1 = f32x4.add(a1, f32x4.mul(load4(w1 + o, kind), xa));
    a2 = f32x4.add(a2, f32x4.mul(load4(w2 + o, kind), xa));
    a3 = f32x4.add(a3, f32x4.mul(load4(w3 + o, kind), xa));
    i += 4;
  }
  let s0 = horizontal_sum(a0), s1 = horizontal_sum(a1), s2 = horizontal_sum(a2), s3 = horizontal_sum(a3);
  for (; i < k; i++) {
    const xv = load<f32>(x + (<usize>i << 2));
    const o = <usize>i * eb;
    s0 += load1(w0 + o, kind) * xv;
    s1 += load1(w1 + o, kind) * xv;
    s2 += load1(w2 + o, kind) * xv;
    s3 += load1(w3 + o, kind) * xv;
  }
  store<f32>(y, s0);
  if (count > 1) store<f32>(y + yStepBytes, s1);
  if (count > 2) store<f32>(y + 2 * yStepBytes, s2);
  if (count > 3) store<f32>(y + 3 * yStepBytes, s3);
}

/**
 * Weight rows [j0, j1) times one token row, four rows at a time taken a quarter of the range apart: rows
 * j0 + i, j0 + q + i, j0 + 2q + i, j0 + 3q + i (q = ceil((j1 - j0) / 4)). NOTE: four long sequential streams
 * keep the hardware prefetchers ahead; four adjacent rows (four short streams that restart every row) halve the
 * bandwidth from DRAM.
 */
// @ts-ignore: decorator
@inline function stream_rows(x: usize, w: usize, rowBytes: usize, y: usize, k: i32, j0: i32, j1: i32, kind: i32): void {
  const total = j1 - j0;
  const q = (total + 3) >> 2;
  for (let i = 0; i < q; i++) {
    const count = min(4, (total - i + q - 1) / q);
    const j = j0 + i;
    token_times_rows4(x, w + <usize>j * rowBytes, <usize>q * rowBytes, y + (<usize>j << 2), <usize>q << 2, k, count, kind);
  }
}

/**
 * A 4-token x 2-weight-row tile: y[t][j + r] = x[t] · W[j + r] for t < 4, r < count (1 or 2).
 * x: first of four token rows (xStride bytes apart), y: y[t0][j] with yStride bytes between token rows.
 * NOTE: sums in exactly token_times_rows4's order (batch invariance): change the two together.
 */
// @ts-ignore: decorator
@inline function tile4x2(x: usize, xStride: usize, w: usize, rowBytes: usize, y: usize, yStride: usize, k: i32, count: i32, kind: i32): void {
  const w0 = w;
  const w1 = count > 1 ? w + rowBytes : w;
  const x0 = x, x1 = x + xStride, x2 = x + 2 * xStride, x3 = x + 3 * xStride;
  const eb = element_bytes(kind);
  let a00 = f32x4.splat(0), a10 = f32x4.splat(0), a20 = f32x4.splat(0), a30 = f32x4.splat(0);
  let a01 = f32x4.splat(0), a11 = f32x4.splat(0), a21 = f32x4.splat(0), a31 = f32x4.splat(0);
  let i = 0;
  for (; i + 4 <= k; i += 4) {
    const o = <usize>i * eb;
    const xo = <usize>i << 2;
    const v0 = load4(w0 + o, kind);
    const v1 = load4(w1 + o, kind);
    let xv = v128.load(x0 + xo);
    a00 = f32x4.add(a00, f32x4.mul(v0, xv));
    a01 = f32x4.add(a01, f32x4.mul(v1, xv));
    xv = v128.load(x1 + xo);
    a10 = f32x4.add(a10, f32x4.mul(v0, xv));
    a11 = f32x4.add(a11, f32x4.mul(v1, xv));
    xv = v128.load(x2 + xo);
    a20 = f32x4.add(a20, f32x4.mul(v0, xv));
    a21 = f32x4.add(a21, f32x4.mul(v1, xv));
    xv = v128.load(x3 + xo);
    a30 = f32x4.add(a30, f32x4.mul(v0, xv));
    a31 = f32x4.add(a31, f32x4.mul(v1, xv));
  }
  let s00 = horizontal_sum(a00), s10 = horizontal_sum(a10), s20 = horizontal_sum(a20), s30 = horizontal_sum(a30);
  let s01 = horizontal_sum(a01), s11 = horizontal_sum(a11), s21 = horizontal_sum(a21), s31 = horizontal_sum(a31);
  for (; i < k; i++) {
    const o = <usize>i * eb;
    const xo = <usize>i << 2;
    const v0 = load1(w0 + o, kind);
    const v1 = load1(w1 + o, kind);
    const e0 = load<f32>(x0 + xo), e1 = load<f32>(x1 + xo), e2 = load<f32>(x2 + xo), e3 = load<f32>(x3 + xo);
    s00 += v0 * e0; s10 += v0 * e1; s20 += v0 * e2; s30 += v0 * e3;
    s01 += v1 * e0; s11 += v1 * e1; s21 += v1 * e2; s31 += v1 * e3;
  }
  store<f32>(y, s00);
  store<f32>(y + yStride, s10);
  store<f32>(y + 2 * yStride, s20);
  store<f32>(y + 3 * yStride, s30);
  if (count > 1) {
    store<f32>(y, s01, 4);
    store<f32>(y + yStride, s11, 4);
    store<f32>(y + 2 * yStride, s21, 4);
    store<f32>(y + 3 * yStride, s31, 4);
  }
}

// @ts-ignore: decorator
@inline function matmul_float(x: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32, kind: i32): void {
  const rowBytes = <usize>k * element_bytes(kind);
  const xStride = <usize>k << 2;
  const yStride = <usize>n << 2;
  if (rows == 1) {
    stream_rows(x, w, rowBytes, y, k, j0, j1, kind);
    return;
  }
  const chunk = max(2, (WEIGHT_CHUNK_BYTES / <i32>rowBytes) & ~1);
  for (let c0 = j0; c0 < j1; c0 += chunk) {
    const c1 = min(j1, c0 + chunk);
    let t = 0;
    for (; t + 4 <= rows; t += 4) {
      const xt = x + <usize>t * xStride;
      const yt = y + <usize>t * yStride;
      for (let j = c0; j < c1; j += 2) {
        tile4x2(xt, xStride, w + <usize>j * rowBytes, rowBytes, yt + (<usize>j << 2), yStride, k, min(2, c1 - j), kind);
      }
    }
    for (; t < rows; t++) stream_rows(x + <usize>t * xStride, w, rowBytes, y + <usize>t * yStride, k, c0, c1, kind);
  }
}

/** y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1). x: [rows, k] f32, w: [n, k] f32, y: [rows, n] f32. */
export function matmul_f32(x: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_float(x, w, y, rows, k, n, j0, j1, KIND_F32);
}

/** As matmul_f32 with w: [n, k] IEEE half. */
export function matmul_f16(x: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_float(x, w, y, rows, k, n, j0, j1, KIND_F16);
}

/** As matmul_f32 with w: [n, k] bfloat16. */
export function matmul_bf16(x: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_float(x, w, y, rows, k, n, j0, j1, KIND_BF16);
}
