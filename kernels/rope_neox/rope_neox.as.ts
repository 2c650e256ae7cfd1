// Rotary position embedding, NeoX style (rotate-half pairs (i, i + rotaryDim/2)), in place, mirroring ggml's
// arithmetic: theta starts at f32(position) and is multiplied by thetaScale (f32) per pair; cos and sin are
// computed in f64 and rounded to f32; x0' = x0 c - x1 s, x1' = x0 s + x1 c in f32.
import { ROW_F32, rotate_row } from "../assembly/rotary.as";

/**
 * Rotates rows [t0, t1) of x: [rows, heads, headDim] f32 in place. positions: [rows] i32; freqFactors: [rotaryDim/2]
 * f32 divisors of the angle (Llama 3 scaling) or 0 for none; freqScale: linear scaling's multiplier of every angle
 * (1: none); extFactor, corrLow, corrHigh, mscale: YaRN's (see rotate_row; 0, 0, 0, 1 for none); dimensions >=
 * rotaryDim are left as they are.
 */
export function rope_neox(x: usize, positions: usize, freqFactors: usize, rows: i32, heads: i32, headDim: i32, rotaryDim: i32, thetaScale: f32, freqScale: f32, extFactor: f32, corrLow: f32, corrHigh: f32, mscale: f32, t0: i32, t1: i32): void {
  const rowBytes = <usize>heads * (<usize>headDim << 2);
  for (let t = t0; t < t1; t++) {
    rotate_row(x + <usize>t * rowBytes, heads, headDim, rotaryDim, load<i32>(positions + (<usize>t << 2)), freqFactors, thetaScale, freqScale, extFactor, corrLow, corrHigh, mscale, ROW_F32);
  }
}
