// Sampling on the GPU through the serving engine: greedy and top_k = 1 pick the WebAssembly backend's tokens, a seed
// repeats its tokens, requests whose penalties need the host still get logits, and both kinds share one step.
// The kernel itself is checked against its reference in kernels/sample (webgpu-conformance.test.ts).
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { tokensOf } from "../../testing/engine-tokens.js";
import { Engine } from "../../engine.js";
import { type LoadedModel, loadModel } from "../../load.js";
import type { EngineRequest } from "../../request.js";
import type { SamplingParams } from "../../sample/params.js";
import { gpuUnavailable } from "./gpu.js";

const unavailable = await gpuUnavailable();
if (unavailable && process.env.CI !== "true") console.warn(`WebGPU sampling tests skipped: ${unavailable}`);

const LOAD = { contextSize: 128, threads: 2, maxSequences: 8, batchSize: 64, kvCache: { bytes: 8 * 1024 * 1024 } };

function request(prompt: number[], sampling: Partial<SamplingParams>, maxTokens = 12): EngineRequest {
  return { input: { tokens: prompt }, maxTokens, sampling, ignoreEndOfGeneration: true };
}

/** Runs the requests together on a fresh engine over `model`; their tokens in order. */
async function runAll(model: LoadedModel, requests: EngineRequest[]): Promise<number[][]> {
  const engine = new Engine(model);
  try {
    return await Promise.all(requests.map((req) => tokensOf(engine, req)));
  } finally {
    engine.close();
  }
}

const prompts = [[5, 6, 7, 8, 9], [300, 301, 302], [1000, 20, 3000, 40]];

describe.skipIf(unavailable !== undefined)("sampling on the GPU", () => {
  it("greedy, top_k = 1 and greedy with a penalty (sampled on the host) give the WebAssembly tokens, in one batch", async () => {
    const path = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const wasm = await loadModel(path, { ...LOAD, backend: "wasm" });
    const gpu = await loadModel(path, { ...LOAD, backend: "webgpu" });
    try {
      expect(gpu.runner.forwardSampled).toBeDefined();
      const requests = [
        request(prompts[0], { temperature: 0 }),
        // top_k = 1 leaves one candidate whatever the draw: the argmax, through the kernel's top_k path.
        request(prompts[1], { temperature: 1, topK: 1, seed: 3 }),
        // Penalties count the sequence's tokens, so this one's logits come back and the host samples them.
        request(prompts[2], { temperature: 0, frequencyPenalty: 0.8, presencePenalty: 0.4 }),
      ];
      const expected = await runAll(wasm, requests);
      expect(await runAll(gpu, requests)).toEqual(expected);
      // top_k = 1 is the greedy continuation.
      expect(expected[1]).toEqual((await runAll(wasm, [request(prompts[1], { temperature: 0 })]))[0]);
    } finally {
      await wasm.dispose();
      await gpu.dispose();
    }
  });

  it("samples at temperature 1 with top_k, top_p and min_p: a seed repeats its tokens, another seed differs", async () => {
    const gpu = await loadModel(await ensureTestModel("tiny-llama", "gguf", "q8_0"), { ...LOAD, backend: "webgpu" });
    try {
      const sampling = (seed: number): Partial<SamplingParams> => ({ temperature: 1.5, topK: 200, topP: 0.95, minP: 0.001, seed });
      const [a, b, c] = await runAll(gpu, [request(prompts[0], sampling(11), 24), request(prompts[0], sampling(11), 24), request(prompts[0], sampling(12), 24)]);
      expect(a).toHaveLength(24);
      expect(b).toEqual(a);
      expect(c).not.toEqual(a);
      for (const token of [...a, ...c]) expect(token).toBeGreaterThanOrEqual(0);
      // Random weights give a nearly flat distribution: at temperature 1.5 the draws do not collapse onto one token.
      expect(new Set(a).size).toBeGreaterThan(4);
    } finally {
      await gpu.dispose();
    }
  });
});
