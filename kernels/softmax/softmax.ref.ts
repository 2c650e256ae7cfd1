// Reference row-wise softmax in f64.

/** Softmax of each row of x: [rows, n] (returns a new array). */
export function softmaxRef(x: Float32Array, rows: number, n: number): Float32Array {
  const y = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    let max = -Infinity;
    for (let i = 0; i < n; i++) max = Math.max(max, x[r * n + i]);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += Math.exp(x[r * n + i] - max);
    for (let i = 0; i < n; i++) y[r * n + i] = Math.exp(x[r * n + i] - max) / sum;
  }
  return y;
}
