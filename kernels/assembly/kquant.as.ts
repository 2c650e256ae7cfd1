// The K-quant super-block layouts (Q4_K, Q5_K, Q6_K; 256 values each) unpacked into SIMD vectors of quants, shared
// by the matmul and get_rows kernels; not an entry file. A "group" is 16 consecutive values of a super-block: group
// g holds values 16g..16g+15, as unsigned quants (Q4_K 0..15, Q5_K 0..31, Q6_K 0..63, before Q6_K's offset -32).
// Group indices may be runtime values: the unpacking is branch-free (shift amounts, not selects).

/** Byte offsets inside a Q4_K / Q5_K super-block: f16 d, f16 dmin, 12 bytes of packed 6-bit scales and mins. */
export const K4_SCALES: usize = 4;
/** Q5_K: 32 bytes of fifth bits (bit j of byte i belongs to value 32j + i). */
export const Q5_K_HIGH_BITS: usize = 16;
/** Byte offset of the 128 bytes of low nibbles in Q4_K and Q5_K super-blocks. */
export const Q4_K_QUANTS: usize = 16;
export const Q5_K_QUANTS: usize = 48;
/** Q6_K: 128 bytes of low nibbles, 64 bytes of high bit pairs, sixteen int8 scales, then the f16 d. */
export const Q6_K_HIGH_BITS: usize = 128;
export const Q6_K_SCALES: usize = 192;
export const Q6_K_D: usize = 208;
/**
 * Q6_K widened at load (the "Q6_K bytes" layout, kernels/formats/q6_k-bytes.ts): 256 unsigned quants (0..63) one per
 * byte in value order, then Q6_K's sixteen int8 scales and its f16 d; 274 bytes a super-block. The quants need no
 * unpacking: a group of 16 values is one load.
 */
export const Q6_KB_SCALES: usize = 256;
export const Q6_KB_D: usize = 272;
export const Q6_KB_BYTES: usize = 274;

/** Q4_K/Q5_K: the eight 6-bit sub-block scales of the super-block at w, as bytes 0..7 (GGML's utmp unpacking). */
// @ts-ignore: decorator
@inline export function k4_scales(w: usize): u64 {
  const s0 = load<u32>(w, K4_SCALES), s2 = load<u32>(w, K4_SCALES + 8);
  const low = s0 & 0x3f3f3f3f;
  const high = (s2 & 0x0f0f0f0f) | (((s0 >> 6) & 0x03030303) << 4);
  return <u64>low | (<u64>high << 32);
}

/** Q4_K/Q5_K: the eight 6-bit sub-block mins of the super-block at w, as bytes 0..7. */
// @ts-ignore: decorator
@inline export function k4_mins(w: usize): u64 {
  const s0 = load<u32>(w, K4_SCALES), s1 = load<u32>(w, K4_SCALES + 4), s2 = load<u32>(w, K4_SCALES + 8);
  const low = s1 & 0x3f3f3f3f;
  const high = ((s2 >> 4) & 0x0f0f0f0f) | (((s1 >> 6) & 0x03030303) << 4);
  return <u64>low | (<u64>high << 32);
}

/** Byte `index` (0..7) of a packed u64 of scales or mins. */
// @ts-ignore: decorator
@inline export function byte_of(packed: u64, index: i32): i32 {
  return <i32>((packed >> (<u64>index << 3)) & 0xff);
}

/**
 * Bits `bit`, `bit` + 1 .. of each byte of h moved down to bit 4 and up, other bits of each byte kept only where
 * `mask` allows. Branch-free for a runtime `bit`: in each 16-bit lane the right shift drags the high byte's low bits
 * into the low byte's top, and the left shift by 4 moves them to bits 12 - bit .. 11, below the high byte's bit 4.
 */
// @ts-ignore: decorator
@inline function bits_to_4(h: v128, bit: i32, mask: i32): v128 {
  return v128.and(i16x8.shl(i16x8.shr_u(h, bit), 4), i8x16.splat(<i8>mask));
}

/**
 * Q4_K (fifth = false) or Q5_K (fifth = true): group 4c + part of the super-block at w, part 0..3. Chunk c's 32
 * bytes hold sub-block 2c in their low nibbles (parts 0, 1) and sub-block 2c + 1 in their high nibbles (parts 2, 3).
 */
// @ts-ignore: decorator
@inline export function k4_group(w: usize, c: i32, part: i32, fifth: bool): v128 {
  const half = <usize>(part & 1) << 4;
  const packed = v128.load(w + (fifth ? Q5_K_QUANTS : Q4_K_QUANTS) + (<usize>c << 5) + half);
  const nibbles = v128.and(i16x8.shr_u(packed, (part >> 1) << 2), i8x16.splat(0x0f));
  if (!fifth) return nibbles;
  return v128.or(nibbles, bits_to_4(v128.load(w + Q5_K_HIGH_BITS + half), 2 * c + (part >> 1), 0x10));
}

/**
 * Q6_K: group g (0..7) of half h (0, 1) of the super-block at w, i.e. values 128h + 16g .., unsigned (0..63); its
 * scale is the int8 at w + Q6_K_SCALES + 8h + g. Low nibbles: byte 16(g & 3) of the half's 64, high nibble for g >= 4;
 * high bit pair: bits 2(g >> 1) of byte 16(g & 1) of the half's 32.
 */
// @ts-ignore: decorator
@inline export function q6k_group(w: usize, h: i32, g: i32): v128 {
  const low = v128.load(w + (<usize>h << 6) + (<usize>(g & 3) << 4));
  const high = v128.load(w + Q6_K_HIGH_BITS + (<usize>h << 5) + (<usize>(g & 1) << 4));
  const nibbles = v128.and(i16x8.shr_u(low, (g >> 2) << 2), i8x16.splat(0x0f));
  return v128.or(nibbles, bits_to_4(high, (g >> 1) << 1, 0x30)); // bits 2s, 2s + 1 (s = g >> 1) to bits 4, 5
}
