// Embedding lookup for K-quant tables (Q4_K, Q5_K, Q6_K as stored and widened at load): out[t] = dequantize(W[ids[t]]), byte-identical to the
// reference decoders: per sub-block step = d * scale and offset = dmin * min in f32, value = step * q - offset.
import { f16_to_f32 } from "../assembly/convert.as";
import { Q6_KB_BYTES, Q6_KB_D, Q6_KB_SCALES, Q6_K_D, Q6_K_SCALES, byte_of, k4_group, k4_mins, k4_scales, q6k_group } from "../assembly/kquant.as";

/** Sixteen unsigned quants (u8x16) to floats at dst: (q - bias) * step - offset, in that order of f32 operations. */
// @ts-ignore: decorator
@inline function store_group(dst: usize, q: v128, bias: i32, step: f32, offset: f32): void {
  const s = f32x4.splat(step), o = f32x4.splat(offset), b = i32x4.splat(bias);
  const low = i16x8.extend_low_i8x16_u(q), high = i16x8.extend_high_i8x16_u(q);
  v128.store(dst, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(i32x4.extend_low_i16x8_u(low), b)), s), o));
  v128.store(dst, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(i32x4.extend_high_i16x8_u(low), b)), s), o), 16);
  v128.store(dst, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(i32x4.extend_low_i16x8_u(high), b)), s), o), 32);
  v128.store(dst, f32x4.sub(f32x4.mul(f32x4.convert_i32x4_s(i32x4.sub(i32x4.extend_high_i16x8_u(high), b)), s), o), 48);
}

/** One Q4_K (fifth = false) or Q5_K super-block at src into 256 floats at dst. */
// @ts-ignore: decorator
@inline function dequantize_k4_block(src: usize, dst: usize, fifth: bool): void {
  const d = f16_to_f32(load<u16>(src)), dmin = f16_to_f32(load<u16>(src, 2));
  const scales = k4_scales(src), mins = k4_mins(src);
  for (let c = 0; c < 4; c++) {
    for (let sub = 0; sub < 2; sub++) {
      const j = 2 * c + sub;
      const step = d * <f32>byte_of(scales, j), offset = dmin * <f32>byte_of(mins, j);
      const to = dst + (<usize>j << 7);
      store_group(to, k4_group(src, c, 2 * sub, fifth), 0, step, offset);
      store_group(to + 64, k4_group(src, c, 2 * sub + 1, fifth), 0, step, offset);
    }
  }
}

/** One Q6_K super-block at src into 256 floats at dst: d * scale * (q - 32). */
// @ts-ignore: decorator
@inline function dequantize_q6k_block(src: usize, dst: usize): void {
  const d = f16_to_f32(load<u16>(src + Q6_K_D));
  for (let h = 0; h < 2; h++) {
    for (let g = 0; g < 8; g++) {
      const step = d * <f32>load<i8>(src + Q6_K_SCALES + (<usize>h << 3) + <usize>g);
      store_group(dst + (<usize>(h * 128 + g * 16) << 2), q6k_group(src, h, g), 32, step, 0);
    }
  }
}

/** One widened Q6_K super-block at src (Q6_KB_* in kquant.as.ts) into 256 floats at dst, as dequantize_q6k_block. */
// @ts-ignore: decorator
@inline function dequantize_q6kb_block(src: usize, dst: usize): void {
  const d = f16_to_f32(load<u16>(src + Q6_KB_D));
  for (let g = 0; g < 16; g++) {
    const step = d * <f32>load<i8>(src + Q6_KB_SCALES + <usize>g);
    store_group(dst + (<usize>g << 6), v128.load(src + (<usize>g << 4)), 32, step, 0);
  }
}

/** out[t] = W[ids[t]] for t in [t0, t1) with w: [vocab, k/256] Q4_K super-blocks. NOTE: k must be a multiple of 256. */
export function get_rows_q4_k(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 8;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * 144;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 144, dst += 1024) dequantize_k4_block(src, dst, false);
  }
}

/** As get_rows_q4_k with w: [vocab, k/256] Q5_K super-blocks. */
export function get_rows_q5_k(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 8;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * 176;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 176, dst += 1024) dequantize_k4_block(src, dst, true);
  }
}

/** As get_rows_q4_k with w: [vocab, k/256] Q6_K super-blocks. */
export function get_rows_q6_k(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 8;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * 210;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += 210, dst += 1024) dequantize_q6k_block(src, dst);
  }
}

/** As get_rows_q4_k with w: [vocab, k/256] Q6_K super-blocks widened at load (Q6_KB_* in kquant.as.ts). */
export function get_rows_q6_k_bytes(w: usize, ids: usize, out: usize, k: i32, t0: i32, t1: i32): void {
  const blocks = k >> 8;
  for (let t = t0; t < t1; t++) {
    let src = w + <usize>load<i32>(ids + (<usize>t << 2)) * <usize>blocks * Q6_KB_BYTES;
    let dst = out + <usize>t * (<usize>k << 2);
    for (let b = 0; b < blocks; b++, src += Q6_KB_BYTES, dst += 1024) dequantize_q6kb_block(src, dst);
  }
}
