// Sampling on the GPU through the serving engine: greedy and top_k = 1 pick the WebAssembly backend's tokens, a seed
// repeats its tokens, requests whose penalties need the host still get logits, and both kinds share one step.
// The kernel itself is checked against its reference in kernels/sample (webgpu-conformance.test.ts).
import { beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { tokensOf } from "../../testing/engine-tokens.js";
import { Engine } from "../../engine.js";
import { BlockTable } from "../../kv/block-pool.js";
import { type LoadedModel, loadModel } from "../../load.js";
import type { EngineRequest } from "../../request.js";
import type { SamplingParams } from "../../sample/params.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { gpuUnavailable } from "../../../kernels/webgpu/gpu.js";

// Without an adapter the tests skip with the reason in their title, except under CI=true, where they fail.
const unavailable = await gpuUnavailable();

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

/**
 * The smallest logit that survives top_k, top_p and min_p as sample.wgsl applies them (kernels/sample/sample.ref.ts:
 * top_p over the top_k survivors' probabilities at temperature 1, ties kept; min_p relative to the best).
 */
function filterThreshold(logits: Float32Array, topK: number, topP: number, minP: number): number {
  const survivors = Float64Array.from(logits).sort().reverse().subarray(0, topK);
  const best = survivors[0]!;
  const total = survivors.reduce((sum, logit) => sum + Math.exp(logit - best), 0);
  let mass = 0;
  let nucleus = survivors[survivors.length - 1]!;
  for (const logit of survivors) {
    mass += Math.exp(logit - best);
    if (mass >= topP * total) {
      nucleus = logit;
      break;
    }
  }
  return Math.max(survivors[survivors.length - 1]!, nucleus, best + Math.log(minP));
}

/** The next-token logits after `context`, computed from scratch (the model's KV pool is left as it was). */
function logitsAfter(model: LoadedModel, context: number[]): Float32Array {
  const table = new BlockTable(model.kvPool);
  try {
    table.reserve(context.length);
    const logits = model.runner.forward([{ tokens: context, startPosition: 0, blockTable: table.ids, wantLogits: true }]);
    if (logits instanceof Promise) throw new Error("the WebAssembly runner answers synchronously");
    return Float32Array.from(logits.subarray(0, model.config.vocab_size));
  } finally {
    table.releaseAll();
  }
}

describe.skipIf(skipOutsideCi(unavailable))(titled("sampling on the GPU", unavailable), () => {
  beforeAll(() => failIfMissing(unavailable));

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

  it("samples at temperature 1 with top_k, top_p and min_p: a seed repeats its tokens, another seed differs, every draw survives the filters", async () => {
    const path = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const gpu = await loadModel(path, { ...LOAD, backend: "webgpu" });
    const wasm = await loadModel(path, { ...LOAD, backend: "wasm" });
    try {
      const sampling = (seed: number): Partial<SamplingParams> => ({ temperature: 1.5, topK: 200, topP: 0.95, minP: 0.001, seed });
      const [a, b, c] = await runAll(gpu, [request(prompts[0], sampling(11), 24), request(prompts[0], sampling(11), 24), request(prompts[0], sampling(12), 24)]);
      expect(a).toHaveLength(24);
      expect(b).toEqual(a);
      expect(c).not.toEqual(a);
      // Each draw survives the filters, computed from the WebAssembly backend's logits after its context (1e-3 for
      // the backends' rounding): here top_p is the tightest, leaving 1 to 16 candidates of 49,152.
      a.forEach((token, i) => {
        const logits = logitsAfter(wasm, [...prompts[0], ...a.slice(0, i)]);
        expect(logits[token]!, `draw ${i}: token ${token}`).toBeGreaterThanOrEqual(filterThreshold(logits, 200, 0.95, 0.001) - 1e-3);
      });
      // Random weights give a nearly flat distribution: at temperature 1.5 the draws do not collapse onto one token.
      expect(new Set(a).size).toBeGreaterThan(4);
    } finally {
      await gpu.dispose();
      await wasm.dispose();
    }
  });
});
