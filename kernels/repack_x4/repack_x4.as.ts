// Repacks Q8_0 / Q4_0 weight matrices into the four-row interleaved layouts that matmul_q8_0x4 / matmul_q4_0x4
// and get_rows_q8_0x4 / get_rows_q4_0x4 read (optional: ~10% faster per core than the plain layouts):
// for each group of four rows and each 32-column block, the four f16 scales, then the four rows' quants.
//   Q8_0x4 group-block: d0 d1 d2 d3 (4 x f16) | q_r0[32] | q_r1[32] | q_r2[32] | q_r3[32]  = 136 bytes
//   Q4_0x4 group-block: d0 d1 d2 d3 (4 x f16) | qs_r0[16] | qs_r1[16] | qs_r2[16] | qs_r3[16] = 72 bytes
// Rows past n (when n is not a multiple of 4) are zero. Packed size = ceil(n/4) * 4 rows, i.e. the source size
// when n % 4 == 0.

// @ts-ignore: decorator
@inline function repack(w: usize, packed: usize, n: i32, k: i32, g0: i32, g1: i32, quantBytes: usize): void {
  const blocks = k >> 5;
  const blockBytes: usize = 2 + quantBytes;
  const rowBytes = <usize>blocks * blockBytes;
  const groupBlockBytes: usize = 8 + 4 * quantBytes;
  for (let g = g0; g < g1; g++) {
    let dst = packed + <usize>g * <usize>blocks * groupBlockBytes;
    for (let b = 0; b < blocks; b++, dst += groupBlockBytes) {
      for (let r = 0; r < 4; r++) {
        const row = (g << 2) + r;
        const q = dst + 8 + <usize>r * quantBytes;
        if (row < n) {
          const src = w + <usize>row * rowBytes + <usize>b * blockBytes;
          store<u16>(dst + (<usize>r << 1), load<u16>(src));
          v128.store(q, v128.load(src, 2));
          if (quantBytes == 32) v128.store(q, v128.load(src, 18), 16);
        } else {
          store<u16>(dst + (<usize>r << 1), 0);
          v128.store(q, i32x4.splat(0));
          if (quantBytes == 32) v128.store(q, i32x4.splat(0), 16);
        }
      }
    }
  }
}

/**
 * Groups [g0, g1) of w: [n, k/32] Q8_0 blocks into packed: [ceil(n/4), k/32] Q8_0x4 group-blocks.
 * NOTE: w and packed must not overlap.
 */
export function repack_q8_0x4(w: usize, packed: usize, n: i32, k: i32, g0: i32, g1: i32): void {
  repack(w, packed, n, k, g0, g1, 32);
}

/** Groups [g0, g1) of w: [n, k/32] Q4_0 blocks into packed: [ceil(n/4), k/32] Q4_0x4 group-blocks. */
export function repack_q4_0x4(w: usize, packed: usize, n: i32, k: i32, g0: i32, g1: i32): void {
  repack(w, packed, n, k, g0, g1, 16);
}
