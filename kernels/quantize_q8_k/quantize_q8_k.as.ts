// Quantizes f32 activation rows to Q8_K blocks (f32 d + 256 int8 + sixteen int16 sums of 16), byte-identical to
// llama.cpp's CPU path (quantize_row_q8_K_ref): the first value of largest magnitude maps to -127,
// q = min(127, round-half-even(x * iscale)) with iscale = -127 / that value, d = 1 / iscale.

/** Values per Q8_K block. */
const QK_K: i32 = 256;
/** Bytes of one Q8_K block. */
const BLOCK_BYTES: usize = 292;

/** Sixteen floats at src times scale, rounded half to even, clamped at 127, stored as int8 at dst; returns their sum. */
// @ts-ignore: decorator
@inline function quantize16(src: usize, scale: v128, dst: usize): i32 {
  const limit = i32x4.splat(127);
  const q0 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(src), scale))), limit);
  const q1 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(src, 16), scale))), limit);
  const q2 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(src, 32), scale))), limit);
  const q3 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(src, 48), scale))), limit);
  v128.store(dst, i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q0, q1), i16x8.narrow_i32x4_s(q2, q3)));
  const s = i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3));
  return (i32x4.extract_lane(s, 0) + i32x4.extract_lane(s, 1)) + (i32x4.extract_lane(s, 2) + i32x4.extract_lane(s, 3));
}

/** Rows [t0, t1) of x: [rows, k] f32 to xq: [rows, k/256] Q8_K blocks. NOTE: k must be a multiple of 256. */
export function quantize_q8_k(x: usize, xq: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 8;
  for (let t = t0; t < t1; t++) {
    let src = x + <usize>t * (<usize>k << 2);
    let dst = xq + <usize>t * <usize>blocks * BLOCK_BYTES;
    for (let b = 0; b < blocks; b++, src += <usize>QK_K << 2, dst += BLOCK_BYTES) {
      // pmax keeps the accumulator when a lane is NaN, as the reference's `>` comparison skips NaN.
      let m = f32x4.splat(0);
      for (let i = 0; i < QK_K; i += 4) m = f32x4.pmax(m, f32x4.abs(v128.load(src + (<usize>i << 2))));
      const amax = max(max(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1)), max(f32x4.extract_lane(m, 2), f32x4.extract_lane(m, 3)));
      if (amax == 0) {
        memory.fill(dst, 0, BLOCK_BYTES);
        continue;
      }
      let extreme: f32 = 0;
      for (let i = 0; i < QK_K; i++) {
        const value = load<f32>(src + (<usize>i << 2));
        if (abs(value) == amax) { extreme = value; break; }
      }
      const iscale: f32 = <f32>-127 / extreme;
      const scale = f32x4.splat(iscale);
      for (let g = 0; g < 16; g++) {
        store<i16>(dst + 4 + <usize>QK_K + (<usize>g << 1), <i16>quantize16(src + (<usize>g << 6), scale, dst + 4 + (<usize>g << 4)));
      }
      store<f32>(dst, <f32>1 / iscale);
    }
  }
}
