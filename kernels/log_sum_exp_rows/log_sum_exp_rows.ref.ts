// Reference per-row max and sum of exp(x - max), in f64 (what a row's log-sum-exp needs: max + log(sum)).

/**
 * out: [rows, 2] = (max, sum of exp(x[r][i] - max)) of each row of x: [rows, n]. NaN entries count as -Infinity (no
 * probability); a row whose max is not finite (no finite entry, or +Infinity) has sum 0.
 */
export function logSumExpRowsRef(x: Float32Array, rows: number, n: number): Float32Array {
  const out = new Float32Array(rows * 2);
  for (let r = 0; r < rows; r++) {
    let max = -Infinity;
    for (let i = 0; i < n; i++) if (x[r * n + i] > max) max = x[r * n + i];
    let sum = 0;
    if (Number.isFinite(max)) for (let i = 0; i < n; i++) if (x[r * n + i] > -Infinity) sum += Math.exp(x[r * n + i] - max);
    out[r * 2] = max;
    out[r * 2 + 1] = sum;
  }
  return out;
}
