// Matrix multiplication with fused dequantization for the K-quant weights Q4_K, Q5_K and Q6_K (as stored, and Q6_K
// widened at load to a byte per quant: matmul_q6_k_bytes): y = x W^T where x
// arrives pre-quantized to Q8_K (quantize_q8_k), as llama.cpp's CPU backend computes it. Per 256-value super-block
// the dot product is exact in integers (sub-block scales applied to i32 partial sums, Q4_K/Q5_K mins through the
// Q8_K group sums), then scaled by d_w * d_x (and dmin_w * d_x) in f32, as ggml_vec_dot_q4_K_q8_K does.
// rows == 1 streams twelve weight rows (a twelfth of the range apart) against one x row; rows > 1 runs four token
// rows against each weight row over cache-sized chunks of weight rows, unpacking each group of quants once.
import { STREAMS, store_streams, stream_base, stream_offset } from "../assembly/streams.as";
import { f16_scales4, store_lanes, transpose_sum_i32 } from "../assembly/convert.as";
import { dot16, scaled_dot16_add, scaled_dot16_add_vec, scaled_dot32_add, scaled_dot32_add_vec } from "../assembly/int8-dot.as";
import {
  Q4_K_QUANTS, Q6_KB_BYTES, Q6_KB_D, Q6_KB_SCALES, Q6_K_D, Q6_K_HIGH_BITS, Q6_K_SCALES, byte_of, k4_group, k4_mins, k4_scales, q6k_group,
} from "../assembly/kquant.as";

const KIND_Q4_K: i32 = 0;
const KIND_Q5_K: i32 = 1;
const KIND_Q6_K: i32 = 2;
/** Q6_K widened at load: a byte per quant (Q6_KB_* in kquant.as.ts). */
const KIND_Q6_KB: i32 = 3;
/** Bytes of one Q8_K block: f32 d, 256 int8 quants at +4, sixteen int16 sums of 16 quants at +260. */
const Q8_K_BYTES: usize = 292;
const Q8_K_QUANTS: usize = 4;
const Q8_K_SUMS: usize = 260;
/** Weight bytes per chunk of rows kept hot in L2 while every token tile passes over it (prefill). */
const WEIGHT_CHUNK_BYTES: i32 = 256 * 1024;

// @ts-ignore: decorator
@inline function block_bytes(kind: i32): usize {
  return kind == KIND_Q4_K ? 144 : kind == KIND_Q5_K ? 176 : kind == KIND_Q6_K ? 210 : Q6_KB_BYTES;
}

/** Whether the kind has sub-block mins (Q4_K, Q5_K), taken off through the Q8_K group sums. */
// @ts-ignore: decorator
@inline function has_mins(kind: i32): bool {
  return kind == KIND_Q4_K || kind == KIND_Q5_K;
}

/** Byte offset of a super-block's f16 d (Q6_K keeps it last). */
// @ts-ignore: decorator
@inline function d_offset(kind: i32): usize {
  return kind == KIND_Q6_K ? Q6_K_D : kind == KIND_Q6_KB ? Q6_KB_D : 0;
}

/** Byte offset of a Q6_K super-block's sixteen int8 scales, as stored or widened. */
// @ts-ignore: decorator
@inline function q6_scales_offset(kind: i32): usize {
  return kind == KIND_Q6_KB ? Q6_KB_SCALES : Q6_K_SCALES;
}

/**
 * Q4_K/Q5_K: sum over sub-blocks of scale * (quants · x), as four i32 lanes, for the super-block at w and the Q8_K
 * block at x. Chunk c holds sub-blocks 2c and 2c + 1 (groups 4c .. 4c + 3).
 */
// @ts-ignore: decorator
@inline function k4_scaled_dot(w: usize, x: usize, kind: i32): v128 {
  // The eight scales as i16 lanes; each chunk broadcasts lanes 0 and 1 by a shuffle, then moves the next two down
  // (three shuffles a chunk instead of a scalar extraction and a splat per sub-block). NOTE: the loop stays a loop:
  // written out four times, the matvec's four-row body spilled and ran 1.5-2.3x slower.
  let scales = scale_lanes(w);
  const fifth = kind == KIND_Q5_K;
  let acc = i32x4.splat(0);
  for (let c = 0; c < 4; c++) {
    const xc = x + Q8_K_QUANTS + (<usize>c << 6);
    let q0: v128, q1: v128, q2: v128, q3: v128;
    if (fifth) {
      q0 = k4_group(w, c, 0, true); q1 = k4_group(w, c, 1, true); q2 = k4_group(w, c, 2, true); q3 = k4_group(w, c, 3, true);
    } else {
      const low = v128.load(w + Q4_K_QUANTS + (<usize>c << 5)), high = v128.load(w + Q4_K_QUANTS + (<usize>c << 5), 16);
      q0 = q4k_part(low, high, 0); q1 = q4k_part(low, high, 1); q2 = q4k_part(low, high, 2); q3 = q4k_part(low, high, 3);
    }
    acc = scaled_dot32_add_vec(q0, q1, xc, scale_lane(scales, 0), acc);
    acc = scaled_dot32_add_vec(q2, q3, xc + 32, scale_lane(scales, 1), acc);
    scales = next_scales(scales);
  }
  return acc;
}

/**
 * Q4_K: part 0..3 (a constant once inlined) of a chunk whose two 16-byte halves are `low` and `high`: what
 * k4_group(w, c, part, false) returns, without its second load of each half and its shift by 0.
 */
// @ts-ignore: decorator
@inline function q4k_part(low: v128, high: v128, part: i32): v128 {
  const mask = i8x16.splat(0x0f);
  if (part == 0) return v128.and(low, mask);
  if (part == 1) return v128.and(high, mask);
  return v128.and(i16x8.shr_u(part == 2 ? low : high, 4), mask);
}

/** Q4_K/Q5_K: the eight sub-block scales of the super-block at w as i16 lanes (for scale_lane and next_scales). */
// @ts-ignore: decorator
@inline function scale_lanes(w: usize): v128 {
  return i16x8.extend_low_i8x16_u(i64x2.splat(<i64>k4_scales(w)));
}

/** Lane `lane` (0 or 1, a constant once inlined) of a scale vector in all eight lanes: one shuffle. */
// @ts-ignore: decorator
@inline function scale_lane(scales: v128, lane: i32): v128 {
  return lane == 0
    ? i8x16.shuffle(scales, scales, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1)
    : i8x16.shuffle(scales, scales, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
}

/** The scale vector moved down two lanes: the next chunk's pair of scales in lanes 0 and 1. */
// @ts-ignore: decorator
@inline function next_scales(scales: v128): v128 {
  return i8x16.shuffle(scales, scales, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3);
}

/** Q4_K/Q5_K: sum over sub-blocks of min * (sum of that sub-block's x quants), as four i32 lanes. */
// @ts-ignore: decorator
@inline function k4_min_dot(w: usize, x: usize): v128 {
  const mins = i64x2.splat(<i64>k4_mins(w));
  // Each min twice, against the two 16-sums of its 32-value sub-block.
  const doubled = i8x16.shuffle(mins, mins, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  return i32x4.add(
    i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(doubled), v128.load(x, Q8_K_SUMS)),
    i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(doubled), v128.load(x, Q8_K_SUMS + 16)),
  );
}

/**
 * Q6_K: sum over 16-value sub-blocks of scale * ((q - 32) · x), as four i32 lanes. The quants are used unsigned
 * (0..63) and the offset is taken back once per super-block as 32 * (scales · Q8_K group sums). The sixteen group
 * dots are gathered four to a vector (one lane each), so the scales apply in four multiplies instead of sixteen
 * broadcasts (measured 1.5x faster than a broadcast per group; the same gathering for Q4_K's eight sub-blocks was
 * slower than its per-sub-block multiply-add and is not used there).
 */
// @ts-ignore: decorator
@inline function q6k_scaled_dot(w: usize, x: usize): v128 {
  let acc = i32x4.splat(0);
  for (let h = 0; h < 2; h++) {
    const xh = x + Q8_K_QUANTS + (<usize>h << 7);
    // q6k_group's eight groups from six loads, each shift by a constant (its general form takes runtime group
    // indices: two loads and three shifts a group). Groups g and g + 4 share low bytes (low / high nibbles); groups
    // g, g + 2, g + 4, g + 6 share high bytes (bit pairs 0, 2, 4, 6, moved to bits 4-5: 16-bit shifts, masked).
    const lows = w + (<usize>h << 6), highs = w + Q6_K_HIGH_BITS + (<usize>h << 5);
    const l0 = v128.load(lows), l1 = v128.load(lows, 16), l2 = v128.load(lows, 32), l3 = v128.load(lows, 48);
    const h0 = v128.load(highs), h1 = v128.load(highs, 16);
    const nibble = i8x16.splat(0x0f), pair = i8x16.splat(0x30);
    const p0 = v128.and(i16x8.shl(h0, 4), pair), p1 = v128.and(i16x8.shl(h1, 4), pair);
    const p2 = v128.and(i16x8.shl(h0, 2), pair), p3 = v128.and(i16x8.shl(h1, 2), pair);
    const p4 = v128.and(h0, pair), p5 = v128.and(h1, pair);
    const p6 = v128.and(i16x8.shr_u(h0, 2), pair), p7 = v128.and(i16x8.shr_u(h1, 2), pair);
    // Lane g of first / second: the dot of group g / g + 4; multiplied by the eight scales as two i32x4 vectors.
    const first = transpose_sum_i32(
      dot16(v128.or(v128.and(l0, nibble), p0), xh), dot16(v128.or(v128.and(l1, nibble), p1), xh + 16),
      dot16(v128.or(v128.and(l2, nibble), p2), xh + 32), dot16(v128.or(v128.and(l3, nibble), p3), xh + 48),
    );
    const second = transpose_sum_i32(
      dot16(v128.or(v128.and(i16x8.shr_u(l0, 4), nibble), p4), xh + 64), dot16(v128.or(v128.and(i16x8.shr_u(l1, 4), nibble), p5), xh + 80),
      dot16(v128.or(v128.and(i16x8.shr_u(l2, 4), nibble), p6), xh + 96), dot16(v128.or(v128.and(i16x8.shr_u(l3, 4), nibble), p7), xh + 112),
    );
    const scales = i16x8.extend_low_i8x16_s(v128.load64_zero(w + Q6_K_SCALES + (<usize>h << 3)));
    acc = i32x4.add(acc, i32x4.add(i32x4.mul(first, i32x4.extend_low_i16x8_s(scales)), i32x4.mul(second, i32x4.extend_high_i16x8_s(scales))));
  }
  return i32x4.sub(acc, i32x4.shl(q6k_offset(w, x, KIND_Q6_K), 5));
}

/**
 * Q6_K widened: as q6k_scaled_dot, a group of 16 quants one load. Each group's scale applies to its i16 pair sums
 * in one i16 multiply-add (a broadcast of its lane of the scale vector), with no gathering of group sums.
 */
// @ts-ignore: decorator
@inline function q6kb_scaled_dot(w: usize, x: usize): v128 {
  const scales = v128.load(w, Q6_KB_SCALES);
  let acc = i32x4.splat(0);
  for (let h = 0; h < 2; h++) {
    const lanes = h == 0 ? i16x8.extend_low_i8x16_s(scales) : i16x8.extend_high_i8x16_s(scales);
    const wh = w + (<usize>h << 7), xh = x + Q8_K_QUANTS + (<usize>h << 7);
    acc = scaled_dot16_add_vec(v128.load(wh), xh, i16_lane(lanes, 0), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 16), xh + 16, i16_lane(lanes, 1), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 32), xh + 32, i16_lane(lanes, 2), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 48), xh + 48, i16_lane(lanes, 3), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 64), xh + 64, i16_lane(lanes, 4), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 80), xh + 80, i16_lane(lanes, 5), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 96), xh + 96, i16_lane(lanes, 6), acc);
    acc = scaled_dot16_add_vec(v128.load(wh, 112), xh + 112, i16_lane(lanes, 7), acc);
  }
  return i32x4.sub(acc, i32x4.shl(q6k_offset(w, x, KIND_Q6_KB), 5));
}

/** i16 lane `lane` (0..7, a constant once inlined) of v in all eight lanes: one shuffle. */
// @ts-ignore: decorator
@inline function i16_lane(v: v128, lane: i32): v128 {
  switch (lane) {
    case 0: return i8x16.shuffle(v, v, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
    case 1: return i8x16.shuffle(v, v, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    case 2: return i8x16.shuffle(v, v, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5);
    case 3: return i8x16.shuffle(v, v, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7);
    case 4: return i8x16.shuffle(v, v, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9);
    case 5: return i8x16.shuffle(v, v, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11);
    case 6: return i8x16.shuffle(v, v, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13);
    default: return i8x16.shuffle(v, v, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15);
  }
}

/** Q6_K: scales · (Q8_K group sums), as four i32 lanes: the quants' offset of 32 is taken back as 32 times this. */
// @ts-ignore: decorator
@inline function q6k_offset(w: usize, x: usize, kind: i32): v128 {
  const scales = v128.load(w + q6_scales_offset(kind));
  return i32x4.add(
    i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(scales), v128.load(x, Q8_K_SUMS)),
    i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(scales), v128.load(x, Q8_K_SUMS + 16)),
  );
}

/** The scaled integer dot of one weight super-block with one Q8_K block, as four i32 lanes (before any mins). */
// @ts-ignore: decorator
@inline function scaled_dot(w: usize, x: usize, kind: i32): v128 {
  if (kind == KIND_Q6_KB) return q6kb_scaled_dot(w, x);
  return kind == KIND_Q6_K ? q6k_scaled_dot(w, x) : k4_scaled_dot(w, x, kind);
}

/**
 * The f32 contributions of one super-block column to four dot products, from their integer sums (lane r of each
 * vector belongs to output r): d * dx * sums - dmin * dx * minSums, with d and dmin read from the four weight
 * super-blocks at w0..w3 and dx the Q8_K scale(s) in dx.
 */
// @ts-ignore: decorator
@inline function scale_sums(sums: v128, minSums: v128, w0: usize, w1: usize, w2: usize, w3: usize, dx: v128, kind: i32): v128 {
  const o = d_offset(kind);
  const scaled = f32x4.mul(f32x4.convert_i32x4_s(sums), f32x4.mul(f16_scales4(w0 + o, w1 + o, w2 + o, w3 + o), dx));
  if (!has_mins(kind)) return scaled;
  return f32x4.sub(scaled, f32x4.mul(f32x4.convert_i32x4_s(minSums), f32x4.mul(f16_scales4(w0 + 2, w1 + 2, w2 + 2, w3 + 2), dx)));
}

/** acc plus one super-block column's contributions to the four rows whose super-blocks are at w0..w3 (lane r = row r). */
// @ts-ignore: decorator
@inline function add_rows4(acc: v128, x: usize, dx: v128, w0: usize, w1: usize, w2: usize, w3: usize, kind: i32): v128 {
  const sums = transpose_sum_i32(scaled_dot(w0, x, kind), scaled_dot(w1, x, kind), scaled_dot(w2, x, kind), scaled_dot(w3, x, kind));
  const minSums = !has_mins(kind) ? sums : transpose_sum_i32(k4_min_dot(w0, x), k4_min_dot(w1, x), k4_min_dot(w2, x), k4_min_dot(w3, x));
  return f32x4.add(acc, scale_sums(sums, minSums, w0, w1, w2, w3, dx, kind));
}

/**
 * y[r * rowStep] = x · W[r * rowStep] for r < count (1..12) for one Q8_K token row x of `blocks` super-blocks:
 * twelve weight rows stepBytes apart, in groups of four; rows past count repeat the last one and are not stored.
 */
// @ts-ignore: decorator
@inline function token_times_rows12(x: usize, w: usize, stepBytes: usize, y: usize, yStepBytes: usize, blocks: i32, count: i32, kind: i32): void {
  let w0 = w;
  let w4 = stream_base(w, stepBytes, count, 1);
  let w8 = stream_base(w, stepBytes, count, 2);
  const s1 = stream_offset(stepBytes, count, 0, 1), s2 = stream_offset(stepBytes, count, 0, 2), s3 = stream_offset(stepBytes, count, 0, 3);
  const s5 = stream_offset(stepBytes, count, 1, 1), s6 = stream_offset(stepBytes, count, 1, 2), s7 = stream_offset(stepBytes, count, 1, 3);
  const s9 = stream_offset(stepBytes, count, 2, 1), s10 = stream_offset(stepBytes, count, 2, 2), s11 = stream_offset(stepBytes, count, 2, 3);
  const bb = block_bytes(kind);
  let a = f32x4.splat(0), b = f32x4.splat(0), c = f32x4.splat(0);
  for (let i = 0; i < blocks; i++, x += Q8_K_BYTES, w0 += bb, w4 += bb, w8 += bb) {
    const dx = f32x4.splat(load<f32>(x));
    a = add_rows4(a, x, dx, w0, w0 + s1, w0 + s2, w0 + s3, kind);
    b = add_rows4(b, x, dx, w4, w4 + s5, w4 + s6, w4 + s7, kind);
    c = add_rows4(c, x, dx, w8, w8 + s9, w8 + s10, w8 + s11, kind);
  }
  store_streams(y, yStepBytes, a, b, c, count);
}

/**
 * Weight rows [j0, j1) times one token row, twelve rows at a time taken a twelfth of the range apart (long
 * sequential streams keep the hardware prefetchers ahead; see matmul_quant.as.ts).
 */
// @ts-ignore: decorator
@inline function stream_rows(x: usize, w: usize, rowBytes: usize, y: usize, blocks: i32, j0: i32, j1: i32, kind: i32): void {
  const total = j1 - j0;
  const q = (total + STREAMS - 1) / STREAMS;
  for (let i = 0; i < q; i++) {
    const count = min(STREAMS, (total - i + q - 1) / q);
    const j = j0 + i;
    token_times_rows12(x, w + <usize>j * rowBytes, <usize>q * rowBytes, y + (<usize>j << 2), <usize>q << 2, blocks, count, kind);
  }
}

/** Group g (0..15: values 16g..16g+15) of the super-block at w, as unsigned quants. */
// @ts-ignore: decorator
@inline function group_quants(w: usize, g: i32, kind: i32): v128 {
  if (kind == KIND_Q6_KB) return v128.load(w + (<usize>g << 4));
  return kind == KIND_Q6_K ? q6k_group(w, g >> 3, g & 7) : k4_group(w, g >> 2, g & 3, kind == KIND_Q5_K);
}

/** The scale of group g's sub-block (Q4_K/Q5_K: sub-block g >> 1 of `scales`; Q6_K: the int8 of group g). */
// @ts-ignore: decorator
@inline function group_scale(w: usize, scales: u64, g: i32, kind: i32): i32 {
  return has_mins(kind) ? byte_of(scales, g >> 1) : <i32>load<i8>(w + q6_scales_offset(kind) + <usize>g);
}

/**
 * A 4-token x 1-weight-row tile: y[t][j] = x[t] · W[j] for four Q8_K token rows (xStride bytes apart); y points at
 * y[t0][j], yStride bytes between token rows. Each group of quants is unpacked once for the four tokens.
 */
// @ts-ignore: decorator
@inline function tokens4_times_row(x: usize, xStride: usize, w: usize, y: usize, yStride: usize, blocks: i32, kind: i32): void {
  const bb = block_bytes(kind);
  const groupsPerScale = has_mins(kind) ? 2 : 1;
  let acc = f32x4.splat(0);
  for (let b = 0; b < blocks; b++, x += Q8_K_BYTES, w += bb) {
    const x0 = x + Q8_K_QUANTS, x1 = x0 + xStride, x2 = x0 + 2 * xStride, x3 = x0 + 3 * xStride;
    let s0 = i32x4.splat(0), s1 = s0, s2 = s0, s3 = s0;
    if (kind == KIND_Q4_K) {
      // As k4_scaled_dot: a chunk's four groups from two loads, scales broadcast from a vector.
      let lanes = scale_lanes(w);
      for (let c = 0; c < 4; c++) {
        const low = v128.load(w + Q4_K_QUANTS + (<usize>c << 5)), high = v128.load(w + Q4_K_QUANTS + (<usize>c << 5), 16);
        const q0 = q4k_part(low, high, 0), q1 = q4k_part(low, high, 1), q2 = q4k_part(low, high, 2), q3 = q4k_part(low, high, 3);
        const even = scale_lane(lanes, 0), odd = scale_lane(lanes, 1);
        const at = <usize>c << 6;
        s0 = scaled_dot32_add_vec(q0, q1, x0 + at, even, s0); s1 = scaled_dot32_add_vec(q0, q1, x1 + at, even, s1);
        s2 = scaled_dot32_add_vec(q0, q1, x2 + at, even, s2); s3 = scaled_dot32_add_vec(q0, q1, x3 + at, even, s3);
        s0 = scaled_dot32_add_vec(q2, q3, x0 + at + 32, odd, s0); s1 = scaled_dot32_add_vec(q2, q3, x1 + at + 32, odd, s1);
        s2 = scaled_dot32_add_vec(q2, q3, x2 + at + 32, odd, s2); s3 = scaled_dot32_add_vec(q2, q3, x3 + at + 32, odd, s3);
        lanes = next_scales(lanes);
      }
    } else {
      const scales = has_mins(kind) ? k4_scales(w) : 0;
      for (let g = 0; g < 16; g += groupsPerScale) {
        const q = group_quants(w, g, kind);
        const scale = group_scale(w, scales, g, kind);
        const at = <usize>g << 4;
        if (groupsPerScale == 2) {
          const next = group_quants(w, g + 1, kind);
          s0 = scaled_dot32_add(q, next, x0 + at, scale, s0); s1 = scaled_dot32_add(q, next, x1 + at, scale, s1);
          s2 = scaled_dot32_add(q, next, x2 + at, scale, s2); s3 = scaled_dot32_add(q, next, x3 + at, scale, s3);
        } else {
          s0 = scaled_dot16_add(q, x0 + at, scale, s0); s1 = scaled_dot16_add(q, x1 + at, scale, s1);
          s2 = scaled_dot16_add(q, x2 + at, scale, s2); s3 = scaled_dot16_add(q, x3 + at, scale, s3);
        }
      }
    }
    const xb1 = x + xStride, xb2 = x + 2 * xStride, xb3 = x + 3 * xStride;
    let sums = transpose_sum_i32(s0, s1, s2, s3);
    let minSums = sums;
    if (!has_mins(kind)) {
      const offsets = transpose_sum_i32(q6k_offset(w, x, kind), q6k_offset(w, xb1, kind), q6k_offset(w, xb2, kind), q6k_offset(w, xb3, kind));
      sums = i32x4.sub(sums, i32x4.shl(offsets, 5));
    } else {
      minSums = transpose_sum_i32(k4_min_dot(w, x), k4_min_dot(w, xb1), k4_min_dot(w, xb2), k4_min_dot(w, xb3));
    }
    let dx = f32x4.splat(load<f32>(x));
    dx = f32x4.replace_lane(dx, 1, load<f32>(xb1));
    dx = f32x4.replace_lane(dx, 2, load<f32>(xb2));
    dx = f32x4.replace_lane(dx, 3, load<f32>(xb3));
    acc = f32x4.add(acc, scale_sums(sums, minSums, w, w, w, w, dx, kind));
  }
  store_lanes(y, yStride, acc, 4);
}

// @ts-ignore: decorator
@inline function matmul_kquant(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32, kind: i32): void {
  const blocks = k >> 8;
  const rowBytes = <usize>blocks * block_bytes(kind);
  const xStride = <usize>blocks * Q8_K_BYTES;
  const yStride = <usize>n << 2;
  if (rows == 1) {
    stream_rows(xq, w, rowBytes, y, blocks, j0, j1, kind);
    return;
  }
  const chunk = max(4, WEIGHT_CHUNK_BYTES / <i32>rowBytes);
  for (let c0 = j0; c0 < j1; c0 += chunk) {
    const c1 = min(j1, c0 + chunk);
    let t = 0;
    for (; t + 4 <= rows; t += 4) {
      const xt = xq + <usize>t * xStride;
      const yt = y + <usize>t * yStride;
      for (let j = c0; j < c1; j++) {
        tokens4_times_row(xt, xStride, w + <usize>j * rowBytes, yt + (<usize>j << 2), yStride, blocks, kind);
      }
    }
    for (; t < rows; t++) stream_rows(xq + <usize>t * xStride, w, rowBytes, y + <usize>t * yStride, blocks, c0, c1, kind);
  }
}

/**
 * y[t][j] = sum_i x[t][i] * W[j][i] for j in [j0, j1), with xq: [rows, k/256] Q8_K blocks (from quantize_q8_k),
 * w: [n, k/256] Q4_K super-blocks, y: [rows, n] f32. NOTE: k must be a multiple of 256.
 */
export function matmul_q4_k(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_kquant(xq, w, y, rows, k, n, j0, j1, KIND_Q4_K);
}

/** As matmul_q4_k with w: [n, k/256] Q5_K super-blocks. */
export function matmul_q5_k(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_kquant(xq, w, y, rows, k, n, j0, j1, KIND_Q5_K);
}

/** As matmul_q4_k with w: [n, k/256] Q6_K super-blocks. */
export function matmul_q6_k(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_kquant(xq, w, y, rows, k, n, j0, j1, KIND_Q6_K);
}

/** As matmul_q4_k with w: [n, k/256] Q6_K super-blocks widened at load to a byte per quant (Q6_KB_* in kquant.as.ts). */
export function matmul_q6_k_bytes(xq: usize, w: usize, y: usize, rows: i32, k: i32, n: i32, j0: i32, j1: i32): void {
  matmul_kquant(xq, w, y, rows, k, n, j0, j1, KIND_Q6_KB);
}
