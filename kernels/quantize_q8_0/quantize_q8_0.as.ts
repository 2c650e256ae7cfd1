// Quantizes f32 activation rows to Q8_0 blocks (f16 scale + 32 int8), byte-identical to llama.cpp's CPU
// activation quantization: d = amax/127 (stored as f16), q = round-half-even(x * 127/amax).
import { f32_to_f16, horizontal_max } from "../assembly/convert.as";

/** Bytes of one Q8_0 block: f16 scale + 32 int8 quants. */
const BLOCK_BYTES: usize = 34;

/**
 * Rows [t0, t1) of x: [rows, k] f32 to xq: [rows, k/32] Q8_0 blocks. NOTE: k must be a multiple of 32.
 */
export function quantize_q8_0(x: usize, xq: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 5;
  for (let t = t0; t < t1; t++) {
    let src = x + <usize>t * (<usize>k << 2);
    let dst = xq + <usize>t * <usize>blocks * BLOCK_BYTES;
    for (let b = 0; b < blocks; b++, src += 128, dst += BLOCK_BYTES) {
      const v0 = v128.load(src), v1 = v128.load(src, 16), v2 = v128.load(src, 32), v3 = v128.load(src, 48);
      const v4 = v128.load(src, 64), v5 = v128.load(src, 80), v6 = v128.load(src, 96), v7 = v128.load(src, 112);
      const m = f32x4.max(
        f32x4.max(f32x4.max(f32x4.abs(v0), f32x4.abs(v1)), f32x4.max(f32x4.abs(v2), f32x4.abs(v3))),
        f32x4.max(f32x4.max(f32x4.abs(v4), f32x4.abs(v5)), f32x4.max(f32x4.abs(v6), f32x4.abs(v7))),
      );
      const amax = horizontal_max(m);
      const d: f32 = amax / 127;
      const id: f32 = amax != 0 ? <f32>127 / amax : 0;
      store<u16>(dst, <u16>f32_to_f16(d));
      const scale = f32x4.splat(id);
      const q0 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v0, scale)));
      const q1 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v1, scale)));
      const q2 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v2, scale)));
      const q3 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v3, scale)));
      const q4 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v4, scale)));
      const q5 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v5, scale)));
      const q6 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v6, scale)));
      const q7 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v7, scale)));
      v128.store(dst, i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q0, q1), i16x8.narrow_i32x4_s(q2, q3)), 2);
      v128.store(dst, i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q4, q5), i16x8.narrow_i32x4_s(q6, q7)), 18);
    }
  }
}
