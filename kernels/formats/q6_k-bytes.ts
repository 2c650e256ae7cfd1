// The "Q6_K bytes" layout: Q6_K widened at load so the WebAssembly kernels read a group of 16 quants with one load
// instead of unpacking nibbles and bit pairs (matmul_q6_k_bytes, get_rows_q6_k_bytes). Lossless: the same quants,
// scales and d, 274 bytes a super-block of 256 values against Q6_K's 210 (1.30x):
//   bytes 0..255    the unsigned quants q (0..63), value i at byte i (value = d * scale * (q - 32))
//   bytes 256..271  Q6_K's sixteen int8 sub-block scales, unchanged
//   bytes 272..273  Q6_K's f16 d, unchanged
// The constants match Q6_KB_* in kernels/assembly/kquant.as.ts.
import { QK_K } from "./k-quant.js";

/** Bytes of one Q6_K super-block as stored in GGUF. */
export const Q6_K_BLOCK_BYTES = 210;
/** Bytes of one super-block in the widened layout. */
export const Q6_K_BYTES_BLOCK_BYTES = 274;

/** Bytes that `q6kBytes` of Q6_K super-blocks take once widened. */
export function q6kBytesLength(q6kBytes: number): number {
  if (q6kBytes % Q6_K_BLOCK_BYTES !== 0) throw new RangeError(`Q6_K data is whole ${Q6_K_BLOCK_BYTES}-byte super-blocks, got ${q6kBytes} bytes`);
  return (q6kBytes / Q6_K_BLOCK_BYTES) * Q6_K_BYTES_BLOCK_BYTES;
}

/** Writes the Q6_K super-blocks of `source` into `target` (q6kBytesLength(source.length) bytes) in the widened layout. */
export function widenQ6_K(source: Uint8Array, target: Uint8Array): void {
  const blocks = source.length / Q6_K_BLOCK_BYTES;
  if (target.length !== q6kBytesLength(source.length)) {
    throw new RangeError(`widened Q6_K of ${blocks} super-blocks takes ${blocks * Q6_K_BYTES_BLOCK_BYTES} bytes, the target has ${target.length}`);
  }
  for (let b = 0; b < blocks; b++) {
    const from = b * Q6_K_BLOCK_BYTES, to = b * Q6_K_BYTES_BLOCK_BYTES;
    // Per half of 128 values, byte l of the 64 low-nibble bytes and of the 32 high-pair bytes carry four values
    // (dequantizeQ6_K in q6_k.ts: l, l + 32, l + 64, l + 96).
    for (let half = 0; half < 2; half++) {
      const ql = from + half * 64, qh = from + 128 + half * 32, y = to + half * 128;
      for (let l = 0; l < 32; l++) {
        const high = source[qh + l]!, low = source[ql + l]!, low2 = source[ql + l + 32]!;
        target[y + l] = (low & 0xf) | ((high & 3) << 4);
        target[y + l + 32] = (low2 & 0xf) | (((high >> 2) & 3) << 4);
        target[y + l + 64] = (low >> 4) | (((high >> 4) & 3) << 4);
        target[y + l + 96] = (low2 >> 4) | (((high >> 6) & 3) << 4);
      }
    }
    target.set(source.subarray(from + 192, from + Q6_K_BLOCK_BYTES), to + QK_K);
  }
}

/** The Q6_K super-blocks of `source` in the widened layout, in a new array. */
export function widenedQ6_K(source: Uint8Array): Uint8Array {
  const target = new Uint8Array(q6kBytesLength(source.length));
  widenQ6_K(source, target);
  return target;
}
