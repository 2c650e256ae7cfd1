// Reference for sample.wgsl: the same thresholds (top_k value, top_p threshold with ties kept, min_p) and the same
// inverse-CDF walk in token id order, in f64 over one row of logits.
import { argmax } from "./argmax.js";

/** One row's sampling settings, as the kernel's RowSampling (random: the uniform draw in [0, 1)). */
export interface RowSamplingRef {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  random: number;
}

/** The token sample.wgsl picks: the argmax at temperature 0, -1 for an all-NaN row, -2 when nothing has weight. */
export function sampleRowRef(logits: Float32Array, s: RowSamplingRef): number {
  if (s.temperature === 0) return argmax(logits);
  const live = Array.from(logits).filter((value) => !Number.isNaN(value));
  if (live.length === 0) return -1;
  const top = live.reduce((a, b) => Math.max(a, b), -Infinity);
  let threshold = -Infinity;
  if (s.topK > 0 && s.topK < logits.length) threshold = [...live].sort((a, b) => b - a)[Math.min(s.topK, live.length) - 1];
  if (s.topP < 1) {
    const survivors = live.filter((value) => Number.isFinite(value) && value >= threshold).sort((a, b) => b - a);
    const mass = (from: number) => survivors.reduce((sum, value) => sum + (value >= from ? Math.exp(value - top) : 0), 0);
    const target = s.topP * mass(-Infinity);
    // The largest survivor value whose best-first prefix (ties included) reaches the target.
    const reaching = survivors.find((value) => mass(value) >= target);
    if (reaching !== undefined) threshold = Math.max(threshold, reaching);
  }
  if (s.minP > 0) threshold = Math.max(threshold, Math.fround(top + Math.fround(Math.log(s.minP))));
  const weights = Array.from(logits, (value) => (Number.isFinite(value) && value >= threshold ? Math.exp((value - top) / s.temperature) : 0));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (!(total > 0) || !Number.isFinite(total)) return -2;
  const target = s.random * total;
  let cumulative = 0;
  let last = -1;
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] === 0) continue;
    cumulative += weights[i];
    last = i;
    if (target < cumulative) return i;
  }
  return last;
}
