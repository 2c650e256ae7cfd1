// Q8_0-style quantization of one block of 32 floats, shared by the Q8_0 (compact and wide) and Q8_1 activation
// kernels; not an entry file. Byte-identical to llama.cpp's x86 quantize_row_q8_0: d = amax/127,
// q = round-half-even(x * 127/amax).
import { horizontal_max } from "./convert.as";

/**
 * Quantizes the 32 floats at src: stores their quants at `quants` (int16 when `wide`, else int8) and returns the f32
 * scale d (each layout stores it its own way, as an f16).
 */
// @ts-ignore: decorator
@inline export function quantize_block32(src: usize, quants: usize, wide: bool): f32 {
  const v0 = v128.load(src), v1 = v128.load(src, 16), v2 = v128.load(src, 32), v3 = v128.load(src, 48);
  const v4 = v128.load(src, 64), v5 = v128.load(src, 80), v6 = v128.load(src, 96), v7 = v128.load(src, 112);
  const m = f32x4.max(
    f32x4.max(f32x4.max(f32x4.abs(v0), f32x4.abs(v1)), f32x4.max(f32x4.abs(v2), f32x4.abs(v3))),
    f32x4.max(f32x4.max(f32x4.abs(v4), f32x4.abs(v5)), f32x4.max(f32x4.abs(v6), f32x4.abs(v7))),
  );
  const amax = horizontal_max(m);
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
  return amax / 127;
}
