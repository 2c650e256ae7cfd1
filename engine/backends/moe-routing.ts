// Mixture-of-experts routing, as llama.cpp's build_moe_ffn does it: for a softmax router (Qwen3-MoE) each token's
// router logits through a softmax, the top k experts by probability (highest first), their probabilities optionally
// renormalised to sum to 1; for a softmax-weight router (gpt-oss) the top k experts by logit, their weights a softmax
// over those k logits. Then the tokens of a step grouped by expert, so that each expert's weights are read once per step.

/** Which experts a step's tokens use, and with what weights. */
export interface Routing {
  /** [tokens * k]: token t's slot s went to expert experts[t * k + s] (slots by falling probability). */
  experts: Int32Array;
  /** [tokens * k] f32: the weight of each slot's expert output. */
  weights: Float32Array;
  /** Per expert in use (ascending), the rows (t * k + s) routed to it, in token order. */
  groups: Map<number, number[]>;
}

const f = Math.fround;
/** Smallest f16 normal: llama.cpp clamps the sum of the selected probabilities to it before dividing. */
const MIN_WEIGHT_SUM = 6.103515625e-5;

/** How a router's logits become weights (see the file comment). */
export type Gating = "softmax" | "softmax_weight";

/** Softmax of `values` in place, in f32 as ggml's soft_max computes it (exp of x - max, times the f32 reciprocal of the double sum). */
function softmaxInPlace(values: Float32Array): void {
  let max = -Infinity;
  for (const value of values) max = Math.max(max, value);
  let sum = 0;
  for (let e = 0; e < values.length; e++) sum += values[e] = f(Math.exp(f(values[e]! - max)));
  const scale = f(1 / sum);
  for (let e = 0; e < values.length; e++) values[e] = f(values[e]! * scale);
}

/**
 * Routes `tokens` rows of router logits ([tokens, expertCount] f32) to `k` experts each, by `gating`; `normalize`
 * renormalises the k weights to sum to 1. Ties go to the lower expert index.
 */
export function routeTokens(logits: Float32Array, tokens: number, expertCount: number, k: number, normalize: boolean, gating: Gating = "softmax"): Routing {
  const experts = new Int32Array(tokens * k);
  const weights = new Float32Array(tokens * k);
  const groups = new Map<number, number[]>();
  const probs = new Float32Array(expertCount);
  const chosen = new Float32Array(k);
  const order = Array.from({ length: expertCount }, (_, i) => i);
  for (let t = 0; t < tokens; t++) {
    probs.set(logits.subarray(t * expertCount, (t + 1) * expertCount));
    if (gating === "softmax") softmaxInPlace(probs);
    order.sort((a, b) => probs[b]! - probs[a]! || a - b);
    for (let s = 0; s < k; s++) chosen[s] = probs[order[s]!]!;
    if (gating === "softmax_weight") softmaxInPlace(chosen);
    let selected = 0;
    for (let s = 0; s < k; s++) selected += chosen[s]!;
    const divisor = f(Math.max(f(selected), MIN_WEIGHT_SUM));
    for (let s = 0; s < k; s++) {
      experts[t * k + s] = order[s]!;
      weights[t * k + s] = normalize ? f(chosen[s]! / divisor) : chosen[s]!;
    }
  }
  for (let row = 0; row < tokens * k; row++) {
    const expert = experts[row]!;
    let group = groups.get(expert);
    if (!group) groups.set(expert, (group = []));
    group.push(row);
  }
  return { experts, weights, groups: new Map([...groups.entries()].sort(([a], [b]) => a - b)) };
}
