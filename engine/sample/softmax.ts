// Probability helpers over a row of logits: softmax with temperature and log-softmax (for logprobs).

/**
 * softmax(logits / temperature) into `out` (a new Float32Array unless given), computed in double precision.
 * @param temperature must be > 0.
 */
export function probabilities(logits: Float32Array, temperature = 1, out?: Float32Array): Float32Array {
  if (!(temperature > 0)) throw new RangeError(`temperature must be > 0, got ${temperature}`);
  const result = out ?? new Float32Array(logits.length);
  if (result.length < logits.length) throw new RangeError(`out has ${result.length} entries, needs ${logits.length}`);
  const max = maxOf(logits);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] - max) / temperature);
  for (let i = 0; i < logits.length; i++) result[i] = Math.exp((logits[i] - max) / temperature) / sum;
  return result;
}

/** log(softmax(logits)) into `out` (a new Float32Array unless given): `logits - max - log(sum(exp(logits - max)))`. */
export function logSoftmax(logits: Float32Array, out?: Float32Array): Float32Array {
  const result = out ?? new Float32Array(logits.length);
  if (result.length < logits.length) throw new RangeError(`out has ${result.length} entries, needs ${logits.length}`);
  const max = maxOf(logits);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const logSum = max + Math.log(sum);
  for (let i = 0; i < logits.length; i++) result[i] = logits[i] - logSum;
  return result;
}

function maxOf(values: Float32Array): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) if (values[i] > max) max = values[i];
  return max;
}
