// WebGPU cases for attention_dense: one token; query and key tiles cut short; an odd head dim; SigLIP's head dim 72
// with several heads; keys whose scores grow along the sequence (the running max rises every step); a smaller key tile.
import { randomF32 } from "../case.js";
import type { GpuKernelCase } from "../gpu-case.js";
import { type DenseShape, attentionDenseRef } from "./attention_dense.ref.js";

const QUERY_TILE = 16;

interface Scenario extends DenseShape {
  keyTile?: number;
  rising?: boolean;
}

function denseCase(s: Scenario): GpuKernelCase {
  const keyTile = s.keyTile ?? 16;
  return {
    name: `attention_dense tokens=${s.tokens} heads=${s.heads} headDim=${s.headDim} keyTile=${keyTile}${s.rising ? " rising" : ""}`,
    tolerance: 1e-11, // f32 online softmax against the reference's f64 two-pass softmax
    build() {
      const floats = s.tokens * s.heads * s.headDim;
      const q = randomF32(floats, s.tokens + s.headDim, 2);
      const k = randomF32(floats, s.tokens + 2 * s.headDim, 2);
      const v = randomF32(floats, s.tokens + 3 * s.headDim, 2);
      if (s.rising) for (let i = 0; i < floats; i++) k[i] += (0.02 * Math.floor(i / (s.heads * s.headDim))) * Math.sign(q[i % (s.heads * s.headDim)]);
      const scale = 1 / Math.sqrt(s.headDim);
      return {
        shader: { op: "attention_dense", constants: { HEAD_DIM: s.headDim, KEY_TILE: keyTile } },
        bindings: [{ name: "q", contents: q }, { name: "k", contents: k }, { name: "v", contents: v }, { name: "out", contents: { bytes: floats * 4 } }],
        params: [["u32", s.tokens], ["u32", s.heads], ["f32", scale]],
        workgroups: [Math.ceil(s.tokens / QUERY_TILE), s.heads],
        expected: { out: attentionDenseRef(q, k, v, scale, s) },
      };
    },
  };
}

export const cases: GpuKernelCase[] = [
  denseCase({ tokens: 1, heads: 1, headDim: 8 }),
  denseCase({ tokens: 37, heads: 3, headDim: 72 }),
  denseCase({ tokens: 21, heads: 2, headDim: 13, keyTile: 8 }),
  denseCase({ tokens: 100, heads: 2, headDim: 72, rising: true }),
  denseCase({ tokens: 70, heads: 4, headDim: 64, keyTile: 4 }),
];
