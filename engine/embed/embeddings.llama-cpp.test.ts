// Pooled embeddings equal llama.cpp's for the same GGUF: the tiny Qwen3 embedding models (last, mean and CLS pooling),
// through the serving engine's embed() with several inputs batched, against node-llama-cpp's embedding context; and
// tiny-qwen3-embedding-eos, whose GGUF says tokenizer.ggml.add_eos_token as Qwen3-Embedding's does: loom appends the EOS
// to each text as llama.cpp does, and pools that last token.
import type { Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { Engine } from "../engine.js";
import { type LoadedModel, loadModel } from "../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../testing/fixtures.js";
import { REFERENCE_CONTEXT_OPTIONS, referenceLlama, skipResourceSimulation } from "../testing/llama-cpp.js";
import { l2Normalize } from "./pooling.js";

const TEXTS = [
  "Once upon a time",
  "The capital of France is Paris, and the capital of Italy is Rome.",
  "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)",
  // Longer than one 16-position KV block and than the 32-token step below: pooled over several chunks.
  "A long input for the pool: ".repeat(12),
];
/** Max |a - b| over normed vectors: llama.cpp and loom sum in different orders, in f32. */
const TOLERANCE = 1e-4;

/**
 * llama.cpp's pooled embedding of `tokens` (not normed), as node-llama-cpp's LlamaEmbeddingContext computes it, on a
 * context with loom's numerics (f32 KV, no flash attention), which createEmbeddingContext does not let a caller set.
 * NOTE: internals of node-llama-cpp 3.22 (pinned): `_embeddings` and `_ctx.getEmbedding`.
 */
async function llamaCppEmbeddings(modelPath: string, texts: readonly string[]): Promise<{ tokens: number[][]; vectors: Float32Array[]; eos: number | null }> {
  skipResourceSimulation();
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath });
  try {
    // A text's tokens as llama.cpp's embedding examples take them (common_tokenize with add_special: BOS and EOS as the
    // vocabulary's add_bos / add_eos say), which node-llama-cpp's LlamaEmbeddingContext reproduces from the same flags.
    const inputs = texts.map((text) => {
      const tokens = model.tokenize(text, true) as number[];
      const { bos, eos, shouldPrependBosToken, shouldAppendEosToken } = model.tokens;
      return [...(shouldPrependBosToken && bos !== null ? [bos as number] : []), ...tokens, ...(shouldAppendEosToken && eos !== null ? [eos as number] : [])];
    });
    const context = await model.createContext({ contextSize: 512, threads: 1, batchSize: 512, ...REFERENCE_CONTEXT_OPTIONS, _embeddings: true } as Parameters<typeof model.createContext>[0]);
    const sequence = context.getSequence();
    const vectors: Float32Array[] = [];
    for (const tokens of inputs) {
      await sequence.clearHistory();
      for await (const token of sequence.evaluate(tokens as Token[], { _noSampling: true } as object)) {
        void token;
        break;
      }
      const native = (context as unknown as { _ctx: { getEmbedding(length: number): Float64Array } })._ctx;
      vectors.push(Float32Array.from(native.getEmbedding(tokens.length)));
    }
    await context.dispose();
    return { tokens: inputs, vectors, eos: model.tokens.shouldAppendEosToken ? (model.tokens.eos as number | null) : null };
  } finally {
    await model.dispose();
  }
}

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let most = 0;
  for (let i = 0; i < a.length; i++) most = Math.max(most, Math.abs(a[i] - b[i]));
  return most;
}

for (const preset of ["tiny-qwen3-embedding", "tiny-qwen3-embedding-mean", "tiny-qwen3-embedding-cls", "tiny-qwen3-embedding-eos"]) {
  const reason = testModelSkipReason(preset);
  describe.skipIf(skipOutsideCi(reason))(titled(`${preset} embeddings against llama.cpp`, reason), () => {
    let path: string;
    let model: LoadedModel;
    beforeAll(async () => {
      failIfMissing(reason);
      path = await ensureTestModel(preset, "gguf", "f32");
      // A 32-token step cuts the long input into chunks, and batches the inputs' chunks together.
      model = await loadModel(path, { contextSize: 512, threads: 2, batchSize: 32 });
    }, 240_000);
    afterAll(async () => {
      await model?.dispose();
    });

    it("pools each input as llama.cpp does, batched, within 1e-4 of its normed vectors", async () => {
      const engine = new Engine(model);
      try {
        const inputs = TEXTS.map((text) => model.tokenizer.encode(text, { addSpecial: true, parseSpecial: true }));
        const result = await engine.embed({ inputs: TEXTS });
        expect(result.tokenCounts).toEqual(inputs.map((tokens) => tokens.length));
        expect(result.pooling).toBe(model.pooling);
        const reference = await llamaCppEmbeddings(path, TEXTS);
        // The same tokens as llama.cpp's: with the EOS appended where the GGUF asks for it (the -eos preset only).
        expect(inputs).toEqual(reference.tokens);
        expect(reference.eos !== null).toBe(preset.endsWith("-eos"));
        expect(model.tokenizer.addEos).toBe(preset.endsWith("-eos"));
        if (reference.eos !== null) for (const tokens of inputs) expect(tokens.at(-1)).toBe(reference.eos);
        const differences = result.embeddings.map((vector, i) => maxAbsDifference(vector, l2Normalize(reference.vectors[i])));
        console.log(`${preset}: max |loom - llama.cpp| per input ${differences.map((d) => d.toExponential(2)).join(", ")}`);
        for (const difference of differences) expect(difference).toBeLessThan(TOLERANCE);
        // Token ids give the same vectors as their text.
        const byTokens = await engine.embed({ inputs });
        byTokens.embeddings.forEach((vector, i) => expect(maxAbsDifference(vector, result.embeddings[i])).toBeLessThan(1e-6));
      } finally {
        engine.close();
      }
    }, 240_000);
  });
}
