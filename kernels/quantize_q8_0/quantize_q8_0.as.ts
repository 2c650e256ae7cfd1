// Quantizes f32 activation rows to Q8_0 blocks (f16 scale + 32 int8), byte-identical to llama.cpp's CPU
// activation quantization: d = amax/127 (stored as f16), q = round-half-even(x * 127/amax). A second layout,
// Q8_0 "wide", holds the same quants widened to int16 with four token rows interleaved per block (a partial last
// group padded with zeros), for the batched Q8_0 matmul (matmul_q8_0_wide), which then multiplies without widening
// each activation once per weight row.
import { f16_to_f32, f32_to_f16, horizontal_max } from "../assembly/convert.as";

/** Bytes of one Q8_0 block: f16 scale + 32 int8 quants. */
const BLOCK_BYTES: usize = 34;
/** Bytes of one wide unit: one block of four token rows, 4 x 32 int16 quants, then their four f32 scales. */
const WIDE_UNIT_BYTES: usize = 272;
const WIDE_SCALES: usize = 256;

/**
 * Quantizes the 32 floats at src: stores their quants at `quants` (int16 when `wide`, else int8) and returns the
 * bits of the f16 scale, which each layout stores its own way.
 */
// @ts-ignore: decorator
@inline function quantize_block(src: usize, quants: usize, wide: bool): u32 {
  const v0 = v128.load(src), v1 = v128.load(src, 16), v2 = v128.load(src, 32), v3 = v128.load(src, 48);
  const v4 = v128.load(src, 64), v5 = v128.load(src, 80), v6 = v128.load(src, 96), v7 = v128.load(src, 112);
  const m = f32x4.max(
    f32x4.max(f32x4.max(f32x4.abs(v0), f32x4.abs(v1)), f32x4.max(f32x4.abs(v2), f32x4.abs(v3))),
    f32x4.max(f32x4.max(f32x4.abs(v4), f32x4.abs(v5)), f32x4.max(f32x4.abs(v6), f32x4.abs(v7))),
  );
  const amax = horizontal_max(m);
  const d: f32 = amax / 127;
  const id: f32 = amax != 0 ? <f32>127 / amax : 0;
  const scale = f32x4.splat(id);
  const q0 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v0, scale)));
  const q1 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v1, scale)));
  const q2 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v2, scale)));
  const q3 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v3, scale)));
  const q4 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v4, scale)));
  const q5 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v5, scale)));
  const q6 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v6, scale)));
  const q7 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v7, scale)));
  const h01 = i16x8.narrow_i32x4_s(q0, q1), h23 = i16x8.narrow_i32x4_s(q2, q3);
  const h45 = i16x8.narrow_i32x4_s(q4, q5), h67 = i16x8.narrow_i32x4_s(q6, q7);
  if (wide) {
    // |q| <= 127 (x * 127/amax rounds to at most 127), so int16 holds the same values the int8 layout does.
    v128.store(quants, h01); v128.store(quants, h23, 16); v128.store(quants, h45, 32); v128.store(quants, h67, 48);
  } else {
    v128.store(quants, i8x16.narrow_i16x8_s(h01, h23));
    v128.store(quants, i8x16.narrow_i16x8_s(h45, h67), 16);
  }
  return f32_to_f16(d);
}

/**
 * Rows [t0, t1) of x: [rows, k] f32 to xq: [rows, k/32] Q8_0 blocks. NOTE: k must be a multiple of 32.
 */
export function quantize_q8_0(x: usize, xq: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = x + <usize>t * (<usize>k << 2);
    let dst = xq + <usize>t * <usize>blocks * BLOCK_BYTES;
    for (let b = 0; b < blocks; b++, src += 128, dst += BLOCK_BYTES) {
      store<u16>(dst, <u16>quantize_block(src, dst + 2, false));
    }
  }
}

/**
 * Rows [t0, t1) of x: [rows, k] f32 to the wide Q8_0 layout: for each group of four token rows g and block b, a
 * 272-byte unit at xw + (g * k/32 + b) * 272 holding token row 4g + i's 32 quants as int16 at 64i and its scale
 * (the f16 scale of quantize_q8_0, converted exactly to f32) at 256 + 4i. Same quants and scales as
 * quantize_q8_0. The rows missing
 * from a partial last group are written as zeros by whichever range holds row rows - 1. NOTE: k must be a
 * multiple of 32.
 */
export function quantize_q8_0_wide(x: usize, xw: usize, k: i32, rows: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = x + <usize>t * (<usize>k << 2);
    const group = xw + <usize>(t >> 2) * <usize>blocks * WIDE_UNIT_BYTES;
    let unit = group;
    const lane = <usize>(t & 3);
    for (let b = 0; b < blocks; b++, src += 128, unit += WIDE_UNIT_BYTES) {
      store<f32>(unit + WIDE_SCALES + (lane << 2), f16_to_f32(quantize_block(src, unit + (lane << 6), true)));
    }
    if (t == rows - 1) zero_missing_lanes(group, blocks, <i32>lane + 1);
  }
}

/** Zeros lanes `first`..3 (quants and scales) of every unit of the group at `group`. */
// @ts-ignore: decorator
@inline function zero_missing_lanes(group: usize, blocks: i32, first: i32): void {
  for (let lane = first; lane < 4; lane++) {
    let unit = group;
    for (let b = 0; b < blocks; b++, unit += WIDE_UNIT_BYTES) {
      memory.fill(unit + (<usize>lane << 6), 0, 64);
      store<f32>(unit + WIDE_SCALES + (<usize>lane << 2), 0);
    }
  }
}
