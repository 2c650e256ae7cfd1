// The NeoX rotary rotation of one row of heads, shared by rope_neox (new tokens) and rope_shift (cached keys).

/**
 * Rotates one row of `heads` heads (at `row`) in place by the angles of `position`: the shared body of rope_neox
 * and of rope_shift (which rotates cached keys by a position delta).
 */
// @ts-ignore: decorator
@inline export function rotate_row(row: usize, heads: i32, headDim: i32, rotaryDim: i32, position: i32, freqFactors: usize, thetaScale: f32): void {
  const half = rotaryDim >> 1;
  const halfBytes = <usize>half << 2;
  const headBytes = <usize>headDim << 2;
  let theta = <f32>position;
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
