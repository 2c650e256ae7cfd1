// RoPE constants shared by every backend and the rope kernels' references: the per-step angle ratio, Llama 3
// frequency factors and YaRN's constants.

/** The fields of a Llama 3 `rope_scaling` (config.json's names) the frequency factors depend on. */
export interface Llama3FrequencyScaling {
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
}

/**
 * theta_scale = base^(-2/rotaryDim) rounded to f32, the ratio between consecutive rotation frequencies
 * (ggml computes the angles iteratively from it, so kernels take this and not a frequency table).
 */
export function ropeThetaScale(base: number, rotaryDim: number): number {
  return Math.fround(Math.pow(base, -2 / rotaryDim));
}

/**
 * Per-frequency divisors for Llama 3 RoPE scaling, as llama.cpp's converter writes `rope_freqs.weight`.
 * NOTE: the converter computes in torch float32, so every step here is rounded to f32 to give identical factors.
 */
export function llama3RopeFreqFactors(scaling: Llama3FrequencyScaling, base: number, rotaryDim: number): Float32Array {
  const f = Math.fround;
  const lowFreqWavelen = scaling.original_max_position_embeddings / scaling.low_freq_factor;
  const highFreqWavelen = scaling.original_max_position_embeddings / scaling.high_freq_factor;
  const factors = new Float32Array(rotaryDim / 2);
  for (let i = 0; i < rotaryDim / 2; i++) {
    const freq = f(1 / f(Math.pow(base, f((2 * i) / rotaryDim))));
    const wavelen = f((2 * Math.PI) / freq);
    if (wavelen < highFreqWavelen) factors[i] = 1;
    else if (wavelen > lowFreqWavelen) factors[i] = scaling.factor;
    else {
      const smooth = f(f(f(scaling.original_max_position_embeddings / wavelen) - scaling.low_freq_factor) / (scaling.high_freq_factor - scaling.low_freq_factor));
      factors[i] = f(1 / f(f(f(1 - smooth) / scaling.factor) + smooth));
    }
  }
  return factors;
}

/**
 * YaRN's constants for the rope kernels (ggml's rope_yarn): extFactor (0: no YaRN), the correction dimensions between
 * which each pair's angle moves from the unscaled to the scaled one, and the multiplier of cos and sin.
 */
export interface YarnConstants {
  extFactor: number;
  corrLow: number;
  corrHigh: number;
  mscale: number;
}

/** No YaRN: every angle scaled by freq_scale alone, cos and sin as they are. */
export const NO_YARN: YarnConstants = Object.freeze({ extFactor: 0, corrLow: 0, corrHigh: 0, mscale: 1 });

/** The YaRN scaling of a model, as llama.cpp reads it from GGUF (rope.scaling.* keys). */
export interface YarnScaling {
  /** rope.scaling.factor: the context extension (freq_scale = 1 / factor). */
  factor: number;
  /** rope.scaling.original_context_length (llama.cpp's n_ctx_orig_yarn). */
  originalContext: number;
  /** Defaults 32 and 1. */
  betaFast: number;
  betaSlow: number;
  /** rope.scaling.yarn_log_multiplier (DeepSeek's mscale_all_dim; 0: none). */
  logMultiplier: number;
  /** rope.scaling.attn_factor (default 1). */
  attnFactor: number;
}

const f = Math.fround;
const logf = (x: number) => f(Math.log(x));

/**
 * The kernels' YaRN constants for a RoPE of `rotaryDim` dimensions with base `base`, as llama.cpp derives them:
 * the correction dimensions of ggml_rope_yarn_corr_dims, and the attention factor llama_context computes
 * (get_mscale(factor) divided by the 1 + 0.1 ln(factor) that rope_yarn multiplies back), times that multiplier.
 * Every step is rounded to f32 as in C.
 */
export function yarnConstants(scaling: YarnScaling, base: number, rotaryDim: number): YarnConstants {
  const freqScale = f(1 / scaling.factor);
  const factor = f(1 / freqScale);
  const corrDim = (beta: number) => f(f(rotaryDim * logf(f(scaling.originalContext / f(f(beta * 2) * f(Math.PI))))) / f(2 * logf(base)));
  const corrLow = Math.max(0, Math.floor(corrDim(scaling.betaFast)));
  const corrHigh = Math.min(rotaryDim - 1, Math.ceil(corrDim(scaling.betaSlow)));
  const getMscale = (scale: number, mscale: number) => (scale <= 1 ? 1 : f(f(f(0.1 * mscale) * logf(scale)) + 1));
  let attnFactor = scaling.logMultiplier !== 0 ? f(getMscale(factor, 1) / getMscale(factor, scaling.logMultiplier)) : getMscale(factor, 1);
  attnFactor = f(attnFactor * f(1 / f(1 + f(0.1 * logf(factor)))));
  attnFactor = f(attnFactor * scaling.attnFactor);
  // rope_yarn multiplies the attention factor by 1 + 0.1 ln(1 / freq_scale) whenever extFactor != 0.
  const mscale = f(attnFactor * f(1 + f(0.1 * logf(f(1 / freqScale)))));
  return { extFactor: 1, corrLow, corrHigh, mscale };
}

/** The angle of pair i whose unscaled angle is thetaExtrap (f32), as ggml's rope_yarn computes it. */
export function yarnAngle(thetaExtrap: number, freqScale: number, i: number, yarn: YarnConstants): number {
  const thetaInterp = f(f(freqScale) * thetaExtrap);
  if (yarn.extFactor === 0) return thetaInterp;
  const y = f(f(i - yarn.corrLow) / Math.max(f(0.001), f(yarn.corrHigh - yarn.corrLow)));
  const rampMix = f(f(1 - Math.min(1, Math.max(0, y))) * yarn.extFactor);
  return f(f(thetaInterp * f(1 - rampMix)) + f(thetaExtrap * rampMix));
}
