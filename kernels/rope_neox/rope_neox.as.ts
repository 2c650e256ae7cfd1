// Rotary position embedding, NeoX style (rotate-half pairs (i, i + rotaryDim/2)), in place, mirroring ggml's
// arithmetic: theta starts at f32(position) and is multiplied by thetaScale (f32) per pair; cos and sin are
// computed in f64 and rounded to f32; x0' = x0 c - x1 s, x1' = x0 s + x1 c in f32.

/**
 * Rotates rows [t0, t1) of x: [rows, heads, headDim] f32 in place. positions: [rows] i32; freqFactors: [rotaryDim/2]
 * f32 divisors of the angle (Llama 3 scaling) or 0 for none; dimensions >= rotaryDim are left as they are.
 */
export function rope_neox(x: usize, positions: usize, freqFactors: usize, rows: i32, heads: i32, headDim: i32, rotaryDim: i32, thetaScale: f32, t0: i32, t1: i32): void {
  const half = rotaryDim >> 1;
  const halfBytes = <usize>half << 2;
  const headBytes = <usize>headDim << 2;
  for (let t = t0; t < t1; t++) {
    const row = x + <usize>t * <usize>heads * headBytes;
    let theta = <f32>load<i32>(positions + (<usize>t << 2));
    let i = 0;
    // Four frequencies at a time: their cos/sin as vectors, applied to every head.
    for (; i + 4 <= half; i += 4) {
      let c = f32x4.splat(0), s = f32x4.splat(0);
      for (let lane = 0; lane < 4; lane++) {
        const angle: f32 = freqFactors != 0 ? theta / load<f32>(freqFactors + (<usize>(i + lane) << 2)) : theta;
        const cosine = <f32>Math.cos(<f64>angle);
        const sine = <f32>Math.sin(<f64>angle);
        // NOTE: replace_lane needs a constant lane index.
        if (lane == 0) { c = f32x4.replace_lane(c, 0, cosine); s = f32x4.replace_lane(s, 0, sine); }
        else if (lane == 1) { c = f32x4.replace_lane(c, 1, cosine); s = f32x4.replace_lane(s, 1, sine); }
        else if (lane == 2) { c = f32x4.replace_lane(c, 2, cosine); s = f32x4.replace_lane(s, 2, sine); }
        else { c = f32x4.replace_lane(c, 3, cosine); s = f32x4.replace_lane(s, 3, sine); }
        theta = theta * thetaScale;
      }
      for (let h = 0; h < heads; h++) {
        const p = row + <usize>h * headBytes + (<usize>i << 2);
        const x0 = v128.load(p);
        const x1 = v128.load(p + halfBytes);
        v128.store(p, f32x4.sub(f32x4.mul(x0, c), f32x4.mul(x1, s)));
        v128.store(p + halfBytes, f32x4.add(f32x4.mul(x0, s), f32x4.mul(x1, c)));
      }
    }
    for (; i < half; i++) {
      const angle: f32 = freqFactors != 0 ? theta / load<f32>(freqFactors + (<usize>i << 2)) : theta;
      const c = <f32>Math.cos(<f64>angle);
      const s = <f32>Math.sin(<f64>angle);
      for (let h = 0; h < heads; h++) {
        const p = row + <usize>h * headBytes + (<usize>i << 2);
        const x0 = load<f32>(p);
        const x1 = load<f32>(p + halfBytes);
        store<f32>(p, x0 * c - x1 * s);
        store<f32>(p + halfBytes, x0 * s + x1 * c);
      }
      theta = theta * thetaScale;
    }
  }
}
