// Widens Q6_K super-blocks to the "q6_k-bytes" layout the matmul and get_rows kernels read (kernels/formats/
// q6_k-bytes.ts has the layout and the reference): 256 quants a byte each, then the sixteen scales and d unchanged.
// Each block is loaded whole before any of it is stored, so one call may widen in place, front to back: with the
// file's blocks read into the tail of the widened tensor's memory (src = dst + 64 * blocks), block b's output ends
// at dst + 274 (b + 1), no later than block b + 1's input starts. Only a single call over all blocks is in place;
// split across threads, src and dst must not overlap.
import { Q6_KB_BYTES, Q6_KB_D, Q6_KB_SCALES, Q6_K_D, Q6_K_HIGH_BITS, Q6_K_SCALES } from "../assembly/kquant.as";

const Q6_K_BYTES: usize = 210;

/**
 * One half (128 values) of a super-block: low nibbles l0..l3 (bytes 0..63 of the half), high bit pairs h0, h1
 * (bytes 0..31): value l + 32j takes nibble byte l + 32 (j & 1) (low nibble for j < 2, high for j >= 2) and bit pair
 * j of high byte l, as dequantizeQ6_K reads them.
 */
// @ts-ignore: decorator
@inline function store_half(dst: usize, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128): void {
  const nibble = i8x16.splat(0x0f), pair = i8x16.splat(0x30);
  v128.store(dst, v128.or(v128.and(l0, nibble), v128.and(i8x16.shl(h0, 4), pair)));
  v128.store(dst, v128.or(v128.and(l1, nibble), v128.and(i8x16.shl(h1, 4), pair)), 16);
  v128.store(dst, v128.or(v128.and(l2, nibble), v128.and(i8x16.shl(h0, 2), pair)), 32);
  v128.store(dst, v128.or(v128.and(l3, nibble), v128.and(i8x16.shl(h1, 2), pair)), 48);
  v128.store(dst, v128.or(i8x16.shr_u(l0, 4), v128.and(h0, pair)), 64);
  v128.store(dst, v128.or(i8x16.shr_u(l1, 4), v128.and(h1, pair)), 80);
  v128.store(dst, v128.or(i8x16.shr_u(l2, 4), v128.and(i8x16.shr_u(h0, 2), pair)), 96);
  v128.store(dst, v128.or(i8x16.shr_u(l3, 4), v128.and(i8x16.shr_u(h1, 2), pair)), 112);
}

/** Super-blocks [b0, b1) of the Q6_K data at src, widened into dst (Q6_KB_BYTES a block). */
export function widen_q6_k(src: usize, dst: usize, b0: i32, b1: i32): void {
  for (let b = b0; b < b1; b++) {
    const s = src + <usize>b * Q6_K_BYTES, d = dst + <usize>b * Q6_KB_BYTES;
    const a0 = v128.load(s), a1 = v128.load(s, 16), a2 = v128.load(s, 32), a3 = v128.load(s, 48);
    const c0 = v128.load(s, 64), c1 = v128.load(s, 80), c2 = v128.load(s, 96), c3 = v128.load(s, 112);
    const ha0 = v128.load(s + Q6_K_HIGH_BITS), ha1 = v128.load(s + Q6_K_HIGH_BITS, 16);
    const hc0 = v128.load(s + Q6_K_HIGH_BITS, 32), hc1 = v128.load(s + Q6_K_HIGH_BITS, 48);
    const scales = v128.load(s + Q6_K_SCALES);
    const scale = load<u16>(s + Q6_K_D);
    store_half(d, a0, a1, a2, a3, ha0, ha1);
    store_half(d + 128, c0, c1, c2, c3, hc0, hc1);
    v128.store(d + Q6_KB_SCALES, scales);
    store<u16>(d + Q6_KB_D, scale);
  }
}
