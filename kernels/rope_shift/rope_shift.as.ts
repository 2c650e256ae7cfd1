// Re-rotates cached keys by a RoPE position delta, in the paged KV layout (f32 or IEEE half cache): what relocating
// a span of KV to new positions needs (the section-pruning cache moves a reused span next to the prefix it follows).
// Rotations compose, so keys rotated for position p and then by delta equal keys rotated for p + delta, up to f32
// rounding (and, for an f16 cache, one more rounding to half per shift).
import { ROW_F16, ROW_F32, rotate_row } from "../assembly/rotary.as";

// @ts-ignore: decorator
@inline function shift_rows(kCache: usize, blockTable: usize, start: i32, kvHeads: i32, headDim: i32, rotaryDim: i32, blockSize: i32, delta: i32, freqFactors: usize, thetaScale: f32, freqScale: f32, extFactor: f32, corrLow: f32, corrHigh: f32, r0: i32, r1: i32, kind: i32): void {
  const rowBytes = <usize>kvHeads * <usize>headDim * (kind == ROW_F32 ? 4 : 2);
  for (let r = r0; r < r1; r++) {
    const position = start + r;
    const block = load<i32>(blockTable + (<usize>(position / blockSize) << 2));
    const slot = <usize>block * <usize>blockSize + <usize>(position % blockSize);
    rotate_row(kCache + slot * rowBytes, kvHeads, headDim, rotaryDim, delta, freqFactors, thetaScale, freqScale, extFactor, corrLow, corrHigh, 1, kind);
  }
}

/**
 * Rotates the keys at sequence positions [start + r0, start + r1) by `delta` positions, in place.
 * kCache: one layer's block pool [numBlocks, blockSize, kvHeads, headDim] f32; blockTable: [blocks] i32 mapping the
 * sequence's logical blocks to physical ones; freqFactors, thetaScale, freqScale and YaRN's extFactor, corrLow and
 * corrHigh as for rope_neox. The keys already carry YaRN's mscale from their first rotation, so the shift is a pure
 * rotation (mscale 1). NOTE: llama.cpp's KV shift passes its attention factor again; rotations here compose exactly.
 */
export function rope_shift(kCache: usize, blockTable: usize, start: i32, kvHeads: i32, headDim: i32, rotaryDim: i32, blockSize: i32, delta: i32, freqFactors: usize, thetaScale: f32, freqScale: f32, extFactor: f32, corrLow: f32, corrHigh: f32, r0: i32, r1: i32): void {
  shift_rows(kCache, blockTable, start, kvHeads, headDim, rotaryDim, blockSize, delta, freqFactors, thetaScale, freqScale, extFactor, corrLow, corrHigh, r0, r1, ROW_F32);
}

/**
 * As rope_shift on an f16 key cache (kCache: [numBlocks, blockSize, kvHeads, headDim] IEEE half): each key is
 * widened to f32 exactly, rotated as rope_shift rotates, and stored rounded to nearest even.
 */
export function rope_shift_f16(kCache: usize, blockTable: usize, start: i32, kvHeads: i32, headDim: i32, rotaryDim: i32, blockSize: i32, delta: i32, freqFactors: usize, thetaScale: f32, freqScale: f32, extFactor: f32, corrLow: f32, corrHigh: f32, r0: i32, r1: i32): void {
  shift_rows(kCache, blockTable, start, kvHeads, headDim, rotaryDim, blockSize, delta, freqFactors, thetaScale, freqScale, extFactor, corrLow, corrHigh, r0, r1, ROW_F16);
}
