// Quantizes f32 activation rows to Q8_1 blocks (f16 d, f16 s, 32 int8), byte-identical to llama.cpp's x86 CPU
// activation quantization for Q4_1 / Q5_1 weights (quantize_row_q8_1): d = amax/127 (stored as f16),
// q = round-half-even(x * 127/amax) (Q8_0's quants), s = d * sum(q) rounded to f16.
import { f32_to_f16 } from "../assembly/convert.as";
import { quantize_block32 } from "../assembly/quantize-block.as";

/** Bytes of one Q8_1 block: f16 d, f16 s, 32 int8 quants. */
const BLOCK_BYTES: usize = 36;

/** Quantizes the 32 floats at src into the Q8_1 block at dst: Q8_0's quants and d, then s from the stored quants. */
// @ts-ignore: decorator
@inline function quantize_block(src: usize, dst: usize): void {
  const d = quantize_block32(src, dst + 4, false);
  const pairs = i16x8.add(i16x8.extadd_pairwise_i8x16_s(v128.load(dst, 4)), i16x8.extadd_pairwise_i8x16_s(v128.load(dst, 20)));
  const total = i32x4.extadd_pairwise_i16x8_s(pairs);
  const sum = i32x4.extract_lane(total, 0) + i32x4.extract_lane(total, 1) + i32x4.extract_lane(total, 2) + i32x4.extract_lane(total, 3);
  store<u16>(dst, <u16>f32_to_f16(d));
  store<u16>(dst, <u16>f32_to_f16(d * <f32>sum), 2);
}

/** Rows [t0, t1) of x: [rows, k] f32 to xq: [rows, k/32] Q8_1 blocks. NOTE: k must be a multiple of 32. */
export function quantize_q8_1(x: usize, xq: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = x + <usize>t * (<usize>k << 2);
    let dst = xq + <usize>t * <usize>blocks * BLOCK_BYTES;
    for (let b = 0; b < blocks; b++, src += 128, dst += BLOCK_BYTES) quantize_block(src, dst);
  }
}
