// Reference paged causal attention (f64 arithmetic; one chunk or a batch of chunks), KV store (f32 and f16 caches)
// and KV copy, with the cache layout of attention.as.ts.
import { f16ToF32, f32BitsToF16 } from "../formats/f16.js";

/** Shapes shared by the attention reference functions. */
export interface AttentionShape {
  rows: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  blockSize: number;
  /** A sliding window: each row sees only the last `window` positions, its own included (0 or absent: all). */
  window?: number;
  /** Per head, an attention-sink logit counted in the softmax's sum (gpt-oss); absent: none. */
  sinks?: Float32Array;
}

/** Float offset of position p's kv head `kvHead` in a [numBlocks, blockSize, kvHeads, headDim] cache. */
function cacheOffset(blockTable: Int32Array, position: number, kvHead: number, s: AttentionShape): number {
  const slot = blockTable[Math.floor(position / s.blockSize)] * s.blockSize + (position % s.blockSize);
  return (slot * s.kvHeads + kvHead) * s.headDim;
}

/**
 * out[t][h] = softmax(q·K * scale) · V over positions 0..positions[t], or below keyEnds[t] when given (an image's
 * rows see the whole image); with a window, from positions[t] - window + 1 only. With sinks, head h's sink logit
 * takes its share of the softmax's sum. q, out: [rows, heads, headDim].
 */
export function attentionRef(q: Float32Array, kCache: Float32Array, vCache: Float32Array, blockTable: Int32Array, positions: Int32Array, scale: number, s: AttentionShape, keyEnds?: Int32Array): Float32Array {
  const out = new Float32Array(s.rows * s.heads * s.headDim);
  const group = s.heads / s.kvHeads;
  for (let t = 0; t < s.rows; t++) {
    for (let h = 0; h < s.heads; h++) {
      const kvHead = Math.floor(h / group);
      const qBase = (t * s.heads + h) * s.headDim;
      const count = keyEnds ? keyEnds[t] : positions[t] + 1;
      const first = s.window ? Math.max(0, positions[t] + 1 - s.window) : 0;
      const scores = new Float64Array(count);
      let max = -Infinity;
      for (let p = first; p < count; p++) {
        const k = cacheOffset(blockTable, p, kvHead, s);
        let dot = 0;
        for (let d = 0; d < s.headDim; d++) dot += q[qBase + d] * kCache[k + d];
        scores[p] = dot * Math.fround(scale);
        max = Math.max(max, scores[p]);
      }
      const sink = s.sinks ? s.sinks[h] : -Infinity;
      max = Math.max(max, sink);
      let sum = s.sinks ? Math.exp(sink - max) : 0;
      for (let p = first; p < count; p++) sum += scores[p] = Math.exp(scores[p] - max);
      for (let d = 0; d < s.headDim; d++) {
        let acc = 0;
        for (let p = first; p < count; p++) acc += scores[p] * vCache[cacheOffset(blockTable, p, kvHead, s) + d];
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

/** One chunk of attention_chunks: `rows` consecutive token rows of one sequence, from q/out row `firstRow`. */
export interface ChunkRef {
  firstRow: number;
  rows: number;
  blockTable: Int32Array;
  /** [rows] positions of the chunk's rows. */
  positions: Int32Array;
  /** [rows] exclusive ends of the keys each row sees (absent: causal, positions + 1). */
  keyEnds?: Int32Array;
}

/**
 * attentionRef for every chunk of a batch. q, out: [totalRows, heads, headDim]; caches as floats (widen an f16 cache
 * with f16CacheToF32 first); rows of out no chunk covers stay NaN.
 */
export function attentionChunksRef(q: Float32Array, kCache: Float32Array, vCache: Float32Array, chunks: readonly ChunkRef[], scale: number, s: Omit<AttentionShape, "rows">, totalRows: number): Float32Array {
  const tokenFloats = s.heads * s.headDim;
  const out = new Float32Array(totalRows * tokenFloats).fill(NaN);
  for (const chunk of chunks) {
    const rowsQ = q.subarray(chunk.firstRow * tokenFloats, (chunk.firstRow + chunk.rows) * tokenFloats);
    out.set(attentionRef(rowsQ, kCache, vCache, chunk.blockTable, chunk.positions, scale, { ...s, rows: chunk.rows }, chunk.keyEnds), chunk.firstRow * tokenFloats);
  }
  return out;
}

/** An IEEE-half cache widened to floats, exactly. */
export function f16CacheToF32(cache: Uint16Array): Float32Array {
  return Float32Array.from(cache, f16ToF32);
}

/** As kvStoreRef into IEEE-half caches (mutated): each float rounded to the nearest half, ties to even. */
export function kvStoreF16Ref(k: Float32Array, v: Float32Array, kCache: Uint16Array, vCache: Uint16Array, blockTable: Int32Array, positions: Int32Array, s: AttentionShape): void {
  const kvDim = s.kvHeads * s.headDim;
  // From the bits, so that NaN payloads and signs survive (a JS number may not keep them).
  const kBits = new Uint32Array(k.buffer, k.byteOffset, k.length);
  const vBits = new Uint32Array(v.buffer, v.byteOffset, v.length);
  for (let t = 0; t < s.rows; t++) {
    const offset = cacheOffset(blockTable, positions[t], 0, s);
    for (let i = 0; i < kvDim; i++) {
      kCache[offset + i] = f32BitsToF16(kBits[t * kvDim + i]);
      vCache[offset + i] = f32BitsToF16(vBits[t * kvDim + i]);
    }
  }
}

/**
 * Copies (in the caches, as bytes; mutated) the rows of positions srcStart + r through srcTable to positions
 * dstStart + r through dstTable, r < count; rows are rowBytes long (see kv_copy).
 */
export function kvCopyRef(kCache: Uint8Array, vCache: Uint8Array, srcTable: Int32Array, srcStart: number, dstTable: Int32Array, dstStart: number, count: number, rowBytes: number, blockSize: number): void {
  const slot = (table: Int32Array, position: number) => table[Math.floor(position / blockSize)] * blockSize + (position % blockSize);
  for (let r = 0; r < count; r++) {
    const src = slot(srcTable, srcStart + r) * rowBytes;
    const dst = slot(dstTable, dstStart + r) * rowBytes;
    kCache.copyWithin(dst, src, src + rowBytes);
    vCache.copyWithin(dst, src, src + rowBytes);
  }
}
