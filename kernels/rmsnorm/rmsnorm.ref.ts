// Reference RMS normalisation, step for step as ggml's CPU path (sum of f32 squares in f64, the rest in f32).

/** y = (x * scale) * weight per row, scale = 1/sqrt(f32(sum(x^2)/d) + eps). x: [rows, d], weight: [d]. */
export function rmsnormRef(x: Float32Array, weight: Float32Array, rows: number, d: number, eps: number): Float32Array {
  const f = Math.fround;
  const y = new Float32Array(rows * d);
  for (let t = 0; t < rows; t++) {
    let sum = 0;
    for (let i = 0; i < d; i++) sum += f(x[t * d + i] * x[t * d + i]);
    const mean = f(sum / d);
    const scale = f(1 / f(Math.sqrt(f(mean + f(eps)))));
    for (let i = 0; i < d; i++) y[t * d + i] = f(f(x[t * d + i] * scale) * weight[i]);
  }
  return y;
}
