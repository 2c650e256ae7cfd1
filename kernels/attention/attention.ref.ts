// Reference paged causal attention and KV store (f64 arithmetic), with the cache layout of attention.as.ts.

/** Shapes shared by the attention reference functions. */
export interface AttentionShape {
  rows: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  blockSize: number;
}

/** Float offset of position p's kv head `kvHead` in a [numBlocks, blockSize, kvHeads, headDim] cache. */
function cacheOffset(blockTable: Int32Array, position: number, kvHead: number, s: AttentionShape): number {
  const slot = blockTable[Math.floor(position / s.blockSize)] * s.blockSize + (position % s.blockSize);
  return (slot * s.kvHeads + kvHead) * s.headDim;
}

/** out[t][h] = softmax(q·K * scale) · V over positions 0..positions[t]. q, out: [rows, heads, headDim]. */
export function attentionRef(q: Float32Array, kCache: Float32Array, vCache: Float32Array, blockTable: Int32Array, positions: Int32Array, scale: number, s: AttentionShape): Float32Array {
  const out = new Float32Array(s.rows * s.heads * s.headDim);
  const group = s.heads / s.kvHeads;
  for (let t = 0; t < s.rows; t++) {
    for (let h = 0; h < s.heads; h++) {
      const kvHead = Math.floor(h / group);
      const qBase = (t * s.heads + h) * s.headDim;
      const count = positions[t] + 1;
      const scores = new Float64Array(count);
      let max = -Infinity;
      for (let p = 0; p < count; p++) {
        const k = cacheOffset(blockTable, p, kvHead, s);
        let dot = 0;
        for (let d = 0; d < s.headDim; d++) dot += q[qBase + d] * kCache[k + d];
        scores[p] = dot * Math.fround(scale);
        max = Math.max(max, scores[p]);
      }
      let sum = 0;
      for (let p = 0; p < count; p++) sum += scores[p] = Math.exp(scores[p] - max);
      for (let d = 0; d < s.headDim; d++) {
        let acc = 0;
        for (let p = 0; p < count; p++) acc += scores[p] * vCache[cacheOffset(blockTable, p, kvHead, s) + d];
        out[qBase + d] = acc / sum;
      }
    }
  }
  return out;
}

/** Copies rows of k, v: [rows, kvHeads * headDim] into the caches (mutated) at their positions' slots. */
export function kvStoreRef(k: Float32Array, v: Float32Array, kCache: Float32Array, vCache: Float32Array, blockTable: Int32Array, positions: Int32Array, s: AttentionShape): void {
  const kvDim = s.kvHeads * s.headDim;
  for (let t = 0; t < s.rows; t++) {
    const offset = cacheOffset(blockTable, positions[t], 0, s);
    kCache.set(k.subarray(t * kvDim, (t + 1) * kvDim), offset);
    vCache.set(v.subarray(t * kvDim, (t + 1) * kvDim), offset);
  }
}
