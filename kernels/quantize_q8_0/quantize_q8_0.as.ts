// Quantizes f32 activation rows to Q8_0 blocks (f16 scale + 32 int8), byte-identical to llama.cpp's CPU
// activation quantization: d = amax/127 (stored as f16), q = round-half-even(x * 127/amax). A second layout,
// Q8_0 "wide", holds the same quants widened to int16 with four token rows interleaved per block (a partial last
// group padded with zeros), for the batched Q8_0 matmul (matmul_q8_0_wide), which then multiplies without widening
// each activation once per weight row.
import { f16_to_f32, f32_to_f16 } from "../assembly/convert.as";
import { quantize_block32 } from "../assembly/quantize-block.as";

/** Bytes of one Q8_0 block: f16 scale + 32 int8 quants. */
const BLOCK_BYTES: usize = 34;
/** Bytes of one wide unit: one block of four token rows, 4 x 32 int16 quants, then their four f32 scales. */
const WIDE_UNIT_BYTES: usize = 272;
const WIDE_SCALES: usize = 256;

/**
 * Rows [t0, t1) of x: [rows, k] f32 to xq: [rows, k/32] Q8_0 blocks. NOTE: k must be a multiple of 32.
 */
export function quantize_q8_0(x: usize, xq: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = x + <usize>t * (<usize>k << 2);
    let dst = xq + <usize>t * <usize>blocks * BLOCK_BYTES;
    for (let b = 0; b < blocks; b++, src += 128, dst += BLOCK_BYTES) {
      store<u16>(dst, <u16>f32_to_f16(quantize_block32(src, dst + 2, false)));
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
      store<f32>(unit + WIDE_SCALES + (lane << 2), f16_to_f32(f32_to_f16(quantize_block32(src, unit + (lane << 6), true))));
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
