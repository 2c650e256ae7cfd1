// How far two next-token distributions are apart, from their logits: log-softmax and KL divergence in float64 (a
// float32 sum over a 150k vocabulary loses the small differences this is meant to show), entropy and the top-1 token.

/** log softmax(logits) at temperature 1, in float64; -Infinity logits give -Infinity (probability 0). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    if (Number.isNaN(logits[i])) throw new RangeError(`logit ${i} is NaN`);
    if (logits[i] > max) max = logits[i];
  }
  if (max === -Infinity || max === Infinity) throw new RangeError(`logits need a finite maximum, got ${max}`);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const logSum = max + Math.log(sum);
  const result = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) result[i] = logits[i] - logSum;
  return result;
}

/**
 * KL(P || Q) in nats, where P = softmax(`p`) and Q = softmax(`q`): the expected extra log-loss of predicting with Q
 * the tokens P draws. 0 for equal distributions (up to rounding); Infinity where Q gives 0 to a token P does not.
 */
export function klDivergence(p: ArrayLike<number>, q: ArrayLike<number>): number {
  if (p.length !== q.length) throw new RangeError(`logit rows differ in length: ${p.length} and ${q.length}`);
  const logP = logSoftmax(p);
  const logQ = logSoftmax(q);
  let divergence = 0;
  for (let i = 0; i < logP.length; i++) {
    if (logP[i] === -Infinity) continue; // 0 * log(0 / q) = 0
    if (logQ[i] === -Infinity) return Infinity;
    divergence += Math.exp(logP[i]) * (logP[i] - logQ[i]);
  }
  // Rounding can leave a tiny negative sum for (near-)equal rows; KL itself is never negative.
  return Math.max(0, divergence);
}

/** The entropy of softmax(`logits`) in nats: 0 for a certain token, log(n) for n tied tokens. */
export function entropy(logits: ArrayLike<number>): number {
  const logP = logSoftmax(logits);
  let sum = 0;
  for (const value of logP) if (value !== -Infinity) sum -= Math.exp(value) * value;
  return sum;
}

/** The index of the largest logit, the lowest on ties (as the greedy sampler picks). */
export function topToken(logits: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}
