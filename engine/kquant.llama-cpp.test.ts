// Q4_K and Q6_K decoding checked against llama.cpp's on random raw blocks (every bit pattern of quants and packed
// scales): one layer whose matrices are zero, so the logits of a single token are output · norm(embedding row),
// with a Q6_K embedding (get_rows) and a Q4_K output matrix (matmul against Q8_K activations). Decoding both
// tables identically gives the same argmax for every token up to rounding ties; a layout mistake would agree on none.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GgmlType } from "../kernels/formats/types.js";
import { f32ToF16 } from "../kernels/formats/f16.js";
import { gguf, writeGguf, type GgufTensorInput } from "./model/gguf/writer.js";
import { ggufTokenizerMetadata } from "./tokenizer/gguf-metadata.js";
import { loadModel } from "./load.js";
import { type LlamaCppReference, openLlamaCppReference } from "./testing/llama-cpp.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "./testing/fixtures.js";

const tokenizer = FIXTURES.stories260kTokenizer;
const tokenizerReason = missingFixtureReason(tokenizer);
const work = mkdtempSync(join(tmpdir(), "loom-kquant-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Random raw K-quant blocks with sane f16 scales (every byte pattern of the rest is a valid block). */
function randomBlocks(type: GgmlType.Q4_K | GgmlType.Q6_K, rows: number, k: number, seed: number): Uint8Array {
  const blockBytes = type === GgmlType.Q4_K ? 144 : 210;
  const blocks = (rows * k) / 256;
  const bytes = new Uint8Array(blocks * blockBytes);
  let s = seed;
  for (let i = 0; i < bytes.length; i++) bytes[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
  const view = new DataView(bytes.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * blockBytes;
    if (type === GgmlType.Q4_K) {
      view.setUint16(base, f32ToF16(0.002 + (b % 7) * 0.0003), true); // d
      view.setUint16(base + 2, f32ToF16(0.004), true); // dmin
    } else {
      view.setUint16(base + 208, f32ToF16(0.0005 + (b % 5) * 0.0001), true); // d
    }
  }
  return bytes;
}

describe.skipIf(skipOutsideCi(tokenizerReason))(titled("K-quant decoding against llama.cpp", tokenizerReason), () => {
  beforeAll(() => failIfMissing(tokenizerReason));
  it("gives llama.cpp's next token for nearly every single-token prompt", async () => {
    const hidden = 256;
    const vocab = 512;
    const zeros = (k: number, n: number): Uint8Array => new Uint8Array((k * n / 256) * 144);
    const ones = new Uint8Array(new Float32Array(hidden).fill(1).buffer);
    const tensors: GgufTensorInput[] = [
      { name: "token_embd.weight", shape: [hidden, vocab], type: GgmlType.Q6_K, data: randomBlocks(GgmlType.Q6_K, vocab, hidden, 1) },
      { name: "output.weight", shape: [hidden, vocab], type: GgmlType.Q4_K, data: randomBlocks(GgmlType.Q4_K, vocab, hidden, 2) },
      { name: "output_norm.weight", shape: [hidden], type: GgmlType.F32, data: ones },
      { name: "blk.0.attn_norm.weight", shape: [hidden], type: GgmlType.F32, data: ones },
      { name: "blk.0.ffn_norm.weight", shape: [hidden], type: GgmlType.F32, data: ones },
      ...["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"].map((name) => ({
        name: `blk.0.${name}.weight`, shape: [hidden, hidden], type: GgmlType.Q4_K, data: zeros(hidden, hidden),
      })),
    ];
    const path = join(work, "kquant.gguf");
    writeGguf(path, [
      ["general.architecture", gguf.string("llama")],
      ["llama.context_length", gguf.u32(64)],
      ["llama.embedding_length", gguf.u32(hidden)],
      ["llama.block_count", gguf.u32(1)],
      ["llama.feed_forward_length", gguf.u32(hidden)],
      ["llama.attention.head_count", gguf.u32(4)],
      ["llama.attention.head_count_kv", gguf.u32(4)],
      ["llama.attention.layer_norm_rms_epsilon", gguf.f32(1e-5)],
      ...ggufTokenizerMetadata(tokenizer),
    ], tensors);

    const model = await loadModel(path, { contextSize: 64, threads: 2 });
    let reference: LlamaCppReference | undefined;
    let agree = 0;
    const trials = 40;
    try {
      reference = await openLlamaCppReference(path);
      for (let token = 100; token < 100 + trials; token++) {
        const ours = model.runner.forward([{ tokens: [1, token], startPosition: 0, blockTable: [0], wantLogits: true }]);
        let best = 0;
        for (let i = 1; i < ours.length; i++) if (ours[i] > ours[best]) best = i;
        const [expected] = await reference.greedy([1, token], 1);
        if (expected === best) agree++;
      }
    } finally {
      await reference?.dispose();
      await model.dispose();
    }
    expect(agree).toBeGreaterThanOrEqual(trials - 1);
  }, 300_000);
});
