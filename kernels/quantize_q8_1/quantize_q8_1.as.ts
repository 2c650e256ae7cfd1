// Quantizes f32 activation rows to Q8_1 blocks (f16 d, f16 s, 32 int8), byte-identical to llama.cpp's x86 CPU
// activation quantization for Q4_1 / Q5_1 weights (quantize_row_q8_1): d = amax/127 (stored as f16),
// q = round-half-even(x * 127/amax) (Q8_0's quants), s = d * sum(q) rounded to f16.
import { f32_to_f16, horizontal_max } from "../assembly/convert.as";

/** Bytes of one Q8_1 block: f16 d, f16 s, 32 int8 quants. */
const BLOCK_BYTES: usize = 36;

/** Quantizes the 32 floats at src into the Q8_1 block at dst. */
// @ts-ignore: decorator
@inline function quantize_block(src: usize, dst: usize): void {
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
  const total = i32x4.add(i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3)), i32x4.add(i32x4.add(q4, q5), i32x4.add(q6, q7)));
  const sum = i32x4.extract_lane(total, 0) + i32x4.extract_lane(total, 1) + i32x4.extract_lane(total, 2) + i32x4.extract_lane(total, 3);
  v128.store(dst + 4, i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q0, q1), i16x8.narrow_i32x4_s(q2, q3)));
  v128.store(dst + 4, i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q4, q5), i16x8.narrow_i32x4_s(q6, q7)), 16);
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
