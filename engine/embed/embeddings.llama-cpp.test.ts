// Pooled embeddings equal llama.cpp's for the same GGUF: the tiny Qwen3 embedding models (last, mean and CLS pooling),
// through the serving engine's embed() with several inputs batched, against node-llama-cpp's embedding context.
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
async function llamaCppEmbeddings(modelPath: string, inputs: number[][]): Promise<Float32Array[]> {
  skipResourceSimulation();
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath });
  try {
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
    return vectors;
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

for (const preset of ["tiny-qwen3-embedding", "tiny-qwen3-embedding-mean", "tiny-qwen3-embedding-cls"]) {
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
        const reference = await llamaCppEmbeddings(path, inputs);
        const differences = result.embeddings.map((vector, i) => maxAbsDifference(vector, l2Normalize(reference[i])));
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
