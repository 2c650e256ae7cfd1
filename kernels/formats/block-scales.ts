// Where the f16 scales of each quantized block type sit, and a scan for non-finite ones: a block whose scale is
// infinite or NaN can only come from a corrupt file, and would turn every logit it touches into NaN.
import { BLOCK_LAYOUT, GgmlType } from "./types.js";

/** Byte offsets of the f16 scales inside one block, by type (none for the float types). */
const SCALE_OFFSETS: Readonly<Record<GgmlType, readonly number[]>> = {
  [GgmlType.F32]: [], [GgmlType.F16]: [], [GgmlType.BF16]: [],
  [GgmlType.Q8_0]: [0], [GgmlType.Q4_0]: [0], [GgmlType.Q5_0]: [0],
  [GgmlType.Q4_1]: [0, 2], [GgmlType.Q5_1]: [0, 2], // d, m
  [GgmlType.Q4_K]: [0, 2], [GgmlType.Q5_K]: [0, 2], // d, dmin
  [GgmlType.Q6_K]: [208], // d
  [GgmlType.MXFP4]: [], // a u8 exponent: every value is a finite scale
};

/** A non-finite block scale: which block, and the f16 bits found there. */
export interface BadScale {
  block: number;
  blocks: number;
  bits: number;
}

/** The first block of `bytes` (whole blocks of `type`) whose f16 scale is infinite or NaN, if any. */
export function firstNonFiniteScale(type: GgmlType, bytes: Uint8Array): BadScale | undefined {
  const offsets = SCALE_OFFSETS[type];
  if (offsets.length === 0) return undefined;
  const { blockBytes } = BLOCK_LAYOUT[type];
  const blocks = Math.floor(bytes.byteLength / blockBytes);
  for (let block = 0; block < blocks; block++) {
    for (const offset of offsets) {
      const at = block * blockBytes + offset;
      const bits = bytes[at] | (bytes[at + 1] << 8);
      if ((bits & 0x7c00) === 0x7c00) return { block, blocks, bits };
    }
  }
  return undefined;
}
