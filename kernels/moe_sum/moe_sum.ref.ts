// Reference mixture-of-experts output sum (moe_sum.wgsl), in f32 as the WebAssembly backend sums it.

/**
 * out[t] = sum over slots s, in order, of weights[t * k + s] * expertOut[rows[t * k + s]] ([tokens, width]), each
 * product and each addition rounded to f32.
 */
export function moeSumRef(expertOut: Float32Array, rows: Int32Array, weights: Float32Array, tokens: number, k: number, width: number): Float32Array {
  const f = Math.fround;
  const out = new Float32Array(tokens * width);
  for (let t = 0; t < tokens; t++) {
    for (let c = 0; c < width; c++) {
      let sum = 0;
      for (let s = 0; s < k; s++) {
        const product = f(expertOut[rows[t * k + s] * width + c] * weights[t * k + s]);
        sum = s === 0 ? product : f(sum + product);
      }
      out[t * width + c] = sum;
    }
  }
  return out;
}
