// Conformance cases for attention_dense: one token; odd head dims (dimensions past the last multiple of 4, none at
// all below 4); key counts off the 8-key step; query blocks off the 4-row group (partial groups in every block);
// SigLIP's head dim 72 with 16 heads; keys whose scores grow along the sequence (the running max rises every step).
import { type CaseSetup, type KernelCase, randomF32 } from "../case.js";
import { type DenseShape, attentionDenseRef } from "./attention_dense.ref.js";

interface Scenario extends DenseShape {
  /** Query rows per work item. */
  blockRows: number;
  /** Scale of the random q and k (larger: peakier softmax). */
  range?: number;
  /** Keys drift along the query's direction with their index, so that later keys score higher. */
  rising?: boolean;
}

function denseCase(s: Scenario): KernelCase {
  const blocks = Math.ceil(s.tokens / s.blockRows);
  return {
    name: `attention_dense tokens=${s.tokens} heads=${s.heads} headDim=${s.headDim} blockRows=${s.blockRows}${s.range ? ` range=${s.range}` : ""}${s.rising ? " rising" : ""}`,
    tolerance: 1e-11, // f32 dots, exp and sums with an online softmax against the reference's f64 two-pass softmax
    build(): CaseSetup {
      const floats = s.tokens * s.heads * s.headDim;
      const range = s.range ?? 2;
      const q = randomF32(floats, s.tokens + s.headDim, range);
      const k = randomF32(floats, s.tokens + 2 * s.headDim, range);
      const v = randomF32(floats, s.tokens + 3 * s.headDim, 2);
      if (s.rising) for (let i = 0; i < floats; i++) k[i] += (0.02 * Math.floor(i / (s.heads * s.headDim))) * Math.sign(q[i % (s.heads * s.headDim)]);
      const scale = 1 / Math.sqrt(s.headDim);
      return {
        kernel: "attention_dense",
        buffers: { q, k, v, out: { bytes: floats * 4 } },
        args: ["q", "k", "v", "out", s.tokens, s.heads, s.headDim, scale, s.blockRows],
        count: s.heads * blocks,
        expected: { out: attentionDenseRef(q, k, v, scale, s) },
      };
    },
  };
}

export const cases: KernelCase[] = [
  denseCase({ tokens: 1, heads: 1, headDim: 8, blockRows: 4 }),
  denseCase({ tokens: 5, heads: 2, headDim: 13, blockRows: 4 }),
  denseCase({ tokens: 7, heads: 3, headDim: 3, blockRows: 8 }),
  denseCase({ tokens: 37, heads: 3, headDim: 72, blockRows: 8 }),
  denseCase({ tokens: 64, heads: 4, headDim: 64, blockRows: 64, range: 4 }),
  denseCase({ tokens: 130, heads: 16, headDim: 72, blockRows: 6 }),
  denseCase({ tokens: 100, heads: 2, headDim: 72, blockRows: 16, rising: true }),
  denseCase({ tokens: 256, heads: 16, headDim: 72, blockRows: 32 }),
];
