// The twelve weight rows a decode matvec streams side by side (matmul_quant, matmul_mxfp4, matmul_kquant): rows
// j0 + i + r * q of a thread's range, in three groups of four whose block sums gather into one vector each. Rows past
// `count` (the range's short tail) repeat the last row and are not stored.
import { store_lanes } from "./convert.as";

/** Weight rows a token row streams side by side. */
export const STREAMS: i32 = 12;

/** The first weight row of group `group` (0..2): row 4 * group, or the last row when there are fewer. */
// @ts-ignore: decorator
@inline export function stream_base(w: usize, stepBytes: usize, count: i32, group: i32): usize {
  return <usize>min(4 * group, count - 1) * stepBytes + w;
}

/** Byte offset of row r (1..3) of group `group` from the group's first row (0 for rows past count). */
// @ts-ignore: decorator
@inline export function stream_offset(stepBytes: usize, count: i32, group: i32, r: i32): usize {
  return <usize>min(r, max(0, count - 1 - 4 * group)) * stepBytes;
}

/** Stores the three groups' lanes, rows 0..count - 1, yStepBytes apart. */
// @ts-ignore: decorator
@inline export function store_streams(y: usize, yStepBytes: usize, a: v128, b: v128, c: v128, count: i32): void {
  store_lanes(y, yStepBytes, a, min(count, 4));
  if (count > 4) store_lanes(y + 4 * yStepBytes, yStepBytes, b, count - 4);
  if (count > 8) store_lanes(y + 8 * yStepBytes, yStepBytes, c, count - 8);
}
