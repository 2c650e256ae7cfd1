// Reference bidirectional multi-head attention over a dense batch (f64 arithmetic, two-pass softmax), in the layout
// of attention_dense.as.ts.

/** Shape of a dense attention: q, k, v and out are [tokens, heads, headDim]. */
export interface DenseShape {
  tokens: number;
  heads: number;
  headDim: number;
}

/**
 * out[t][h] = softmax_j(q[t][h] . k[j][h] * scale) . v[j][h] over every token j, in f64 from the f32 inputs (scale
 * rounded to f32 first, as the kernels receive it).
 */
export function attentionDenseRef(q: Float32Array, k: Float32Array, v: Float32Array, scale: number, s: DenseShape): Float32Array {
  const { tokens, heads, headDim } = s;
  const scaleF32 = Math.fround(scale);
  const out = new Float32Array(tokens * heads * headDim);
  const weights = new Float64Array(tokens);
  const acc = new Float64Array(headDim);
  for (let h = 0; h < heads; h++) {
    for (let t = 0; t < tokens; t++) {
      const qBase = (t * heads + h) * headDim;
      let max = -Infinity;
      for (let j = 0; j < tokens; j++) {
        const kBase = (j * heads + h) * headDim;
        let dot = 0;
        for (let d = 0; d < headDim; d++) dot += q[qBase + d] * k[kBase + d];
        weights[j] = dot * scaleF32;
        max = Math.max(max, weights[j]);
      }
      let sum = 0;
      for (let j = 0; j < tokens; j++) sum += weights[j] = Math.exp(weights[j] - max);
      acc.fill(0);
      for (let j = 0; j < tokens; j++) {
        const vBase = (j * heads + h) * headDim;
        for (let d = 0; d < headDim; d++) acc[d] += weights[j] * v[vBase + d];
      }
      for (let d = 0; d < headDim; d++) out[qBase + d] = acc[d] / sum;
    }
  }
  return out;
}
