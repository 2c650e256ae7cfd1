// Greedy choice: the index of the largest logit, lowest index on ties.

/**
 * Index of the largest value in `logits` (the lowest such index on ties). O(n), no allocation.
 * NaN entries never win. Returns -1 only if every entry is NaN or the array is empty.
 */
export function argmax(logits: Float32Array): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const value = logits[i];
    // NOTE: strict ">" keeps the lowest index on ties; the (best < 0) arm admits an all -Infinity row.
    if (value > bestValue || (best < 0 && value === -Infinity)) {
      best = i;
      bestValue = value;
    }
  }
  return best;
}
