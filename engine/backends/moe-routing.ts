// Mixture-of-experts routing, as llama.cpp's build_moe_ffn does it for a softmax router: each token's router logits
// through a softmax, the top k experts by probability (highest first), their probabilities renormalised to sum to 1;
// then the tokens of a step grouped by expert, so that each expert's weights are read once per step.

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

/**
 * Routes `tokens` rows of router logits ([tokens, expertCount] f32) to `k` experts each. Probabilities are computed
 * in f32 as ggml's softmax does (exp of x - max, scaled by the f32 reciprocal of their double-precision sum); ties
 * in probability go to the lower expert index.
 */
export function routeTokens(logits: Float32Array, tokens: number, expertCount: number, k: number, normalize: boolean): Routing {
  const experts = new Int32Array(tokens * k);
  const weights = new Float32Array(tokens * k);
  const groups = new Map<number, number[]>();
  const probs = new Float32Array(expertCount);
  const order = Array.from({ length: expertCount }, (_, i) => i);
  for (let t = 0; t < tokens; t++) {
    const row = logits.subarray(t * expertCount, (t + 1) * expertCount);
    let max = -Infinity;
    for (const value of row) max = Math.max(max, value);
    let sum = 0;
    for (let e = 0; e < expertCount; e++) sum += probs[e] = f(Math.exp(f(row[e]! - max)));
    const scale = f(1 / sum);
    for (let e = 0; e < expertCount; e++) probs[e] = f(probs[e]! * scale);
    order.sort((a, b) => probs[b]! - probs[a]! || a - b);
    let selected = 0;
    for (let s = 0; s < k; s++) selected += probs[order[s]!]!;
    const divisor = f(Math.max(f(selected), MIN_WEIGHT_SUM));
    for (let s = 0; s < k; s++) {
      const expert = order[s]!;
      experts[t * k + s] = expert;
      weights[t * k + s] = normalize ? f(probs[expert]! / divisor) : probs[expert]!;
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
