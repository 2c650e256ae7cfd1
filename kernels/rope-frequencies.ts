// RoPE constants shared by every backend and the rope kernels' references: the per-step angle ratio and Llama 3
// frequency factors.

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
