// Embeddings on WebGPU: the final-normed hidden states a chunk reads back (wantHidden) pool into the WebAssembly
// backend's vectors within 1e-4, on tiny-qwen3-embedding (last-token pooling) and its mean-pooling twin, for inputs
// batched in one step, an input longer than one step's chunk (its rows come back over several steps), and inputs sharing
// steps with a generation request whose chunks want logits only. Runs on any adapter (lavapipe in CI); without one
// each test skips with the reason in its title, except under CI=true, where it fails.
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { gpuUnavailable } from "../../../kernels/webgpu/gpu.js";
import { Engine } from "../../engine.js";
import type { EmbeddingResult } from "../../embed/request.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";

const unavailable = await gpuUnavailable();

// A 32-token step: the long input below is computed in chunks over several steps.
const LOAD: LoadOptions = { contextSize: 256, threads: 2, maxSequences: 8, batchSize: 32, kvCache: { bytes: 16 * 1024 * 1024 } };
const TEXTS = [
  "Once upon a time",
  "The capital of France is Paris, and the capital of Italy is Rome.",
  // About 110 tokens: four 32-token chunks.
  "A long input, longer than one step's chunk, pooled over several of them: ".repeat(6),
];
const TOLERANCE = 1e-4;

/** The vectors of TEXTS on `model`, while a greedy generation shares the steps. */
async function embedBesideGeneration(model: LoadedModel): Promise<EmbeddingResult> {
  const engine = new Engine(model);
  try {
    const generation = (async () => {
      for await (const event of engine.submit({ input: { text: "Tell me a story" }, maxTokens: 24, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
        if (event.type === "error") throw event.error;
      }
    })();
    const [result] = await Promise.all([engine.embed({ inputs: TEXTS }), generation]);
    expect((await engine.stats()).kvBlocks.used).toBe(0);
    return result;
  } finally {
    engine.close();
  }
}

function largestDifference(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  expect(a.map((vector) => vector.length)).toEqual(b.map((vector) => vector.length));
  let largest = 0;
  a.forEach((vector, i) => vector.forEach((value, j) => (largest = Math.max(largest, Math.abs(value - b[i]![j]!)))));
  return largest;
}

it.skipIf(skipOutsideCi(unavailable))(titled("has a WebGPU adapter (required under CI)", unavailable), () => failIfMissing(unavailable));

describe("embeddings on WebGPU equal WebAssembly's", () => {
  for (const preset of ["tiny-qwen3-embedding", "tiny-qwen3-embedding-mean"]) {
    it.skipIf(skipOutsideCi(unavailable))(titled(`${preset}: batched, an input over several chunks, beside a generation`, unavailable), async () => {
      failIfMissing(unavailable);
      const file = await ensureTestModel(preset, "gguf", "f32");
      const wasm = await loadModel(file, { ...LOAD, backend: "wasm" });
      const gpu = await loadModel(file, { ...LOAD, backend: "webgpu" });
      try {
        expect(gpu.backend).toBe("webgpu");
        expect(wasm.tokenizer.encode(TEXTS[2]!, { addSpecial: true, parseSpecial: true }).length).toBeGreaterThan(3 * 32);
        const expected = await embedBesideGeneration(wasm);
        const actual = await embedBesideGeneration(gpu);
        expect(actual.tokenCounts).toEqual(expected.tokenCounts);
        const difference = largestDifference(actual.embeddings, expected.embeddings);
        console.log(`${preset}: max |webgpu - wasm| ${difference.toExponential(2)}`);
        expect(difference).toBeLessThan(TOLERANCE);
        // Alone (no generation in the steps) too.
        const gpuEngine = new Engine(gpu);
        try {
          expect(largestDifference((await gpuEngine.embed({ inputs: TEXTS })).embeddings, expected.embeddings)).toBeLessThan(TOLERANCE);
        } finally {
          gpuEngine.close();
        }
      } finally {
        await wasm.dispose();
        await gpu.dispose();
      }
    }, 120_000);
  }
});
