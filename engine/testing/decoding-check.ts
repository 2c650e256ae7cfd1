// Checking a weight type's decoding against llama.cpp's: a one-layer llama GGUF whose layer matrices are zeros, so the
// logits of a single token are output · norm(embedding row); both sides decoding the raw blocks alike give the same
// argmax for every token up to rounding ties, and a layout mistake agrees on none.
import { GgmlType } from "../../kernels/formats/types.js";
import { type GgufTensorInput, gguf, writeGguf } from "../model/gguf/writer.js";
import { ggufTokenizerMetadata } from "../tokenizer/gguf-metadata.js";
import { loadModel } from "../load.js";
import { type LlamaCppReference, openLlamaCppReference } from "./llama-cpp.js";

/**
 * Writes a one-layer llama GGUF of width `hidden` with `embedding` and `output` as given, unit norms, every layer
 * matrix `zeroMatrix` (raw zero blocks of some type) and the tokenizer read from the GGUF at `tokenizerPath`.
 */
export function writeOneLayerModel(path: string, hidden: number, tokenizerPath: string, embedding: GgufTensorInput, output: GgufTensorInput, zeroMatrix: Pick<GgufTensorInput, "type" | "data">): void {
  const ones = new Uint8Array(new Float32Array(hidden).fill(1).buffer);
  const tensors: GgufTensorInput[] = [
    embedding,
    output,
    { name: "output_norm.weight", shape: [hidden], type: GgmlType.F32, data: ones },
    { name: "blk.0.attn_norm.weight", shape: [hidden], type: GgmlType.F32, data: ones },
    { name: "blk.0.ffn_norm.weight", shape: [hidden], type: GgmlType.F32, data: ones },
    ...["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"].map((name) => ({
      name: `blk.0.${name}.weight`, shape: [hidden, hidden], ...zeroMatrix,
    })),
  ];
  writeGguf(path, [
    ["general.architecture", gguf.string("llama")],
    ["llama.context_length", gguf.u32(64)],
    ["llama.embedding_length", gguf.u32(hidden)],
    ["llama.block_count", gguf.u32(1)],
    ["llama.feed_forward_length", gguf.u32(hidden)],
    ["llama.attention.head_count", gguf.u32(4)],
    ["llama.attention.head_count_kv", gguf.u32(4)],
    ["llama.attention.layer_norm_rms_epsilon", gguf.f32(1e-5)],
    ...ggufTokenizerMetadata(tokenizerPath),
  ], tensors);
}

/** Of `trials` single-token prompts (BOS, then tokens 100, 101, ...), how many give llama.cpp's next token in loom. */
export async function nextTokenAgreement(path: string, trials: number): Promise<number> {
  const model = await loadModel(path, { contextSize: 64, threads: 2 });
  let reference: LlamaCppReference | undefined;
  let agree = 0;
  try {
    reference = await openLlamaCppReference(path);
    for (let token = 100; token < 100 + trials; token++) {
      const ours = await model.runner.forward([{ tokens: [1, token], startPosition: 0, blockTable: [0], wantLogits: true }]);
      let best = 0;
      for (let i = 1; i < ours.length; i++) if (ours[i] > ours[best]) best = i;
      const [expected] = await reference.greedy([1, token], 1);
      if (expected === best) agree++;
    }
  } finally {
    await reference?.dispose();
    await model.dispose();
  }
  return agree;
}
