// Reference layer normalisation, step for step as ggml's CPU path (ggml_norm, then ggml_mul by the weight and
// ggml_add of the bias, each a separate op rounded to f32).

/**
 * y = ((x - mean) * scale) * weight + bias per row of n, as ggml_compute_forward_norm_f32's scalar path computes it:
 * the sum of the row in f64, mean = f32(sum) / n in f32; the centred squares f32(d * d) summed in f64, variance =
 * f32(sum / n); scale = 1 / sqrt(variance + eps) in f32. x: [rows, n], weight and bias: [n].
 */
export function layerNormRef(x: Float32Array, weight: Float32Array, bias: Float32Array, rows: number, n: number, eps: number): Float32Array {
  const f = Math.fround;
  const y = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * n, (r + 1) * n);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += row[i];
    const mean = f(f(sum) / n);
    let squares = 0;
    for (let i = 0; i < n; i++) {
      const d = f(row[i] - mean);
      squares += f(d * d);
    }
    const variance = f(squares / n);
    const scale = f(1 / f(Math.sqrt(f(variance + f(eps)))));
    for (let i = 0; i < n; i++) y[r * n + i] = f(f(f(f(row[i] - mean) * scale) * weight[i]) + bias[i]);
  }
  return y;
}
