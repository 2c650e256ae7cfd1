// Reference repacking of Q8_0 / Q4_0 matrices into the four-row interleaved layouts (see repack_x4.as.ts).

/** w: [n, k/32] blocks of `quantBytes` quant bytes (32 for Q8_0, 16 for Q4_0) -> [ceil(n/4), k/32] group-blocks. */
export function repackX4Ref(w: Uint8Array, n: number, k: number, quantBytes: 32 | 16): Uint8Array {
  const blocks = k / 32;
  const blockBytes = 2 + quantBytes;
  const groupBlockBytes = 8 + 4 * quantBytes;
  const groups = Math.ceil(n / 4);
  const out = new Uint8Array(groups * blocks * groupBlockBytes);
  for (let g = 0; g < groups; g++) {
    for (let b = 0; b < blocks; b++) {
      const dst = (g * blocks + b) * groupBlockBytes;
      for (let r = 0; r < 4; r++) {
        const row = g * 4 + r;
        if (row >= n) continue; // padding rows stay zero
        const src = (row * blocks + b) * blockBytes;
        out[dst + 2 * r] = w[src];
        out[dst + 2 * r + 1] = w[src + 1];
        out.set(w.subarray(src + 2, src + 2 + quantBytes), dst + 8 + r * quantBytes);
      }
    }
  }
  return out;
}
