// Reference NeoX rotary embedding with ggml's arithmetic (see rope_neox.as.ts).
import { NO_YARN, type YarnConstants, yarnAngle } from "../rope-frequencies.js";

/**
 * Rotates x: [rows, heads, headDim] in place (returns it): pairs (i, i + rotaryDim/2) of each head by the angle
 * theta_i = position * thetaScale^i (iterated in f32), divided by freqFactors[i] when given, times freqScale (with
 * YaRN, mixed as ggml's rope_yarn does, and cos and sin multiplied by its mscale).
 */
export function ropeNeoxRef(
  x: Float32Array, positions: Int32Array, freqFactors: Float32Array | undefined,
  rows: number, heads: number, headDim: number, rotaryDim: number, thetaScale: number, freqScale = 1, yarn: YarnConstants = NO_YARN,
): Float32Array {
  const f = Math.fround;
  const half = rotaryDim / 2;
  for (let t = 0; t < rows; t++) {
    let theta = f(positions[t]);
    for (let i = 0; i < half; i++) {
      const angle = yarnAngle(freqFactors ? f(theta / freqFactors[i]) : theta, freqScale, i, yarn);
      const c = f(f(Math.cos(angle)) * yarn.mscale);
      const s = f(f(Math.sin(angle)) * yarn.mscale);
      for (let h = 0; h < heads; h++) {
        const base = (t * heads + h) * headDim;
        const x0 = x[base + i];
        const x1 = x[base + i + half];
        x[base + i] = f(f(x0 * c) - f(x1 * s));
        x[base + i + half] = f(f(x0 * s) + f(x1 * c));
      }
      theta = f(theta * thetaScale);
    }
  }
  return x;
}
