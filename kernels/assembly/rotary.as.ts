// The NeoX rotary rotation of one row of heads, shared by rope_neox (new tokens) and rope_shift / rope_shift_f16
// (cached keys, f32 or IEEE half).
import { f16_to_f32, f32_to_f16, load_f16x4_exact, store_f16x4 } from "./convert.as";

/** Element types rotate_row works on (compile-time constants: each use inlines one specialisation). */
export const ROW_F32: i32 = 0;
export const ROW_F16: i32 = 1;

/** Four consecutive elements at p as f32x4 (halves converted exactly). */
// @ts-ignore: decorator
@inline function load4(p: usize, kind: i32): v128 {
  return kind == ROW_F32 ? v128.load(p) : load_f16x4_exact(p);
}

/** Stores four floats at p (as halves rounded to nearest even for ROW_F16). */
// @ts-ignore: decorator
@inline function store4(p: usize, v: v128, kind: i32): void {
  if (kind == ROW_F32) v128.store(p, v);
  else store_f16x4(p, v);
}

// @ts-ignore: decorator
@inline function load1(p: usize, kind: i32): f32 {
  return kind == ROW_F32 ? load<f32>(p) : f16_to_f32(load<u16>(p));
}

// @ts-ignore: decorator
@inline function store1(p: usize, v: f32, kind: i32): void {
  if (kind == ROW_F32) store<f32>(p, v);
  else store<u16>(p, <u16>f32_to_f16(v));
}

/**
 * The angle of pair i whose unscaled angle is thetaExtrap, as ggml's rope_yarn computes it in f32: freqScale times it,
 * or with YaRN (extFactor != 0) that mixed with thetaExtrap by ramp(i) * extFactor, the ramp falling from 1 to 0
 * between the correction dimensions corrLow and corrHigh.
 */
// @ts-ignore: decorator
@inline function yarn_angle(thetaExtrap: f32, freqScale: f32, i: i32, extFactor: f32, corrLow: f32, corrHigh: f32): f32 {
  const thetaInterp = freqScale * thetaExtrap;
  if (extFactor == 0) return thetaInterp;
  const y = (<f32>i - corrLow) / max(<f32>0.001, corrHigh - corrLow);
  const rampMix: f32 = (<f32>1 - min(<f32>1, max(<f32>0, y))) * extFactor;
  return thetaInterp * (<f32>1 - rampMix) + thetaExtrap * rampMix;
}

/**
 * Rotates one row of `heads` heads (at `row`, elements of `kind`: ROW_F32 or ROW_F16) in place by the angles of
 * `position`: the shared body of rope_neox and of rope_shift (which rotates cached keys by a position delta). Each
 * angle is freqScale * (theta / factor), as ggml's rope with linear scaling (freq_scale) and frequency factors; with
 * YaRN (extFactor != 0), ggml's rope_yarn mix (yarn_angle); cos and sin are multiplied by mscale, YaRN's attention
 * factor (1 without YaRN).
 * Halves are widened to f32, rotated in f32 exactly as f32 rows are, and rounded back to nearest even.
 */
// @ts-ignore: decorator
@inline export function rotate_row(row: usize, heads: i32, headDim: i32, rotaryDim: i32, position: i32, freqFactors: usize, thetaScale: f32, freqScale: f32, extFactor: f32, corrLow: f32, corrHigh: f32, mscale: f32, kind: i32): void {
  const eb: usize = kind == ROW_F32 ? 4 : 2;
  const half = rotaryDim >> 1;
  const halfBytes = <usize>half * eb;
  const headBytes = <usize>headDim * eb;
  let theta = <f32>position;
  let i = 0;
  // Four frequencies at a time: their cos/sin as vectors, applied to every head.
  for (; i + 4 <= half; i += 4) {
    let c = f32x4.splat(0), s = f32x4.splat(0);
    for (let lane = 0; lane < 4; lane++) {
      const angle = yarn_angle(freqFactors != 0 ? theta / load<f32>(freqFactors + (<usize>(i + lane) << 2)) : theta, freqScale, i + lane, extFactor, corrLow, corrHigh);
      const cosine = <f32>Math.cos(<f64>angle) * mscale;
      const sine = <f32>Math.sin(<f64>angle) * mscale;
      // NOTE: replace_lane needs a constant lane index.
      if (lane == 0) { c = f32x4.replace_lane(c, 0, cosine); s = f32x4.replace_lane(s, 0, sine); }
      else if (lane == 1) { c = f32x4.replace_lane(c, 1, cosine); s = f32x4.replace_lane(s, 1, sine); }
      else if (lane == 2) { c = f32x4.replace_lane(c, 2, cosine); s = f32x4.replace_lane(s, 2, sine); }
      else { c = f32x4.replace_lane(c, 3, cosine); s = f32x4.replace_lane(s, 3, sine); }
      theta = theta * thetaScale;
    }
    for (let h = 0; h < heads; h++) {
      const p = row + <usize>h * headBytes + <usize>i * eb;
      const x0 = load4(p, kind);
      const x1 = load4(p + halfBytes, kind);
      store4(p, f32x4.sub(f32x4.mul(x0, c), f32x4.mul(x1, s)), kind);
      store4(p + halfBytes, f32x4.add(f32x4.mul(x0, s), f32x4.mul(x1, c)), kind);
    }
  }
  for (; i < half; i++) {
    const angle = yarn_angle(freqFactors != 0 ? theta / load<f32>(freqFactors + (<usize>i << 2)) : theta, freqScale, i, extFactor, corrLow, corrHigh);
    const c = <f32>Math.cos(<f64>angle) * mscale;
    const s = <f32>Math.sin(<f64>angle) * mscale;
    for (let h = 0; h < heads; h++) {
      const p = row + <usize>h * headBytes + <usize>i * eb;
      const x0 = load1(p, kind);
      const x1 = load1(p + halfBytes, kind);
      store1(p, x0 * c - x1 * s, kind);
      store1(p + halfBytes, x0 * s + x1 * c, kind);
    }
    theta = theta * thetaScale;
  }
}
