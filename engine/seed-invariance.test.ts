// Seeds reproduce (issue 40 item 4): a seeded request at temperature 1 gives the same tokens alone as batched with
// other requests of different lengths (its rows at other offsets of every matmul, its decodes beside their prefill
// chunks), and as a member of a fork group, on the WebAssembly backend and on WebGPU (where the sampler's draw is taken
// on the host and the token sampled on the device). Without a WebGPU adapter the WebGPU block skips with the reason in
// its title, except under CI=true, where it fails.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gpuUnavailable } from "../kernels/webgpu/gpu.js";
import { ensureTestModel } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineRequest } from "./request.js";
import { finishOf } from "./testing/engine-tokens.js";
import { failIfMissing, skipOutsideCi, titled } from "./testing/fixtures.js";
import { deterministicTokens as prompt } from "./testing/seeded-random.js";

const seeded = (tokens: number[], seed: number, maxTokens: number, extra: Partial<EngineRequest> = {}): EngineRequest => ({
  input: { tokens }, maxTokens, sampling: { temperature: 1, seed }, ignoreEndOfGeneration: true, ...extra,
});

const noGpu = await gpuUnavailable();

for (const backend of ["wasm", "webgpu"] as const) {
  const skip = backend === "webgpu" ? noGpu : undefined;
  describe.skipIf(skipOutsideCi(skip))(titled(`seeded sampling on ${backend}`, skip), () => {
    let model: LoadedModel;
    beforeAll(async () => {
      failIfMissing(skip);
      model = await loadModel(await ensureTestModel("tiny-qwen3", "gguf", "f32"), { backend, contextSize: 256, threads: 2, maxSequences: 8, batchSize: 128, kvCache: { bytes: 16 * 1024 * 1024 } });
    }, 120_000);
    afterAll(async () => {
      await model?.dispose();
    });

    it("gives the same tokens alone, batched with 3 requests of other lengths, and as a fork group member", async () => {
      const target = seeded(prompt(1, 29), 1234, 24);
      const others = [seeded(prompt(2, 70), 5, 30), seeded(prompt(3, 7), 6, 10), seeded(prompt(4, 41), 7, 40)];
      const alone = (await finishOf(new Engine(model, { cache: { prefixCaching: false } }), target)).tokens;
      const again = (await finishOf(new Engine(model, { cache: { prefixCaching: false } }), target)).tokens;
      expect(again).toEqual(alone);
      // Submitted together: the target's prompt, then its decodes, share steps with the others' prompts and decodes.
      const batched = new Engine(model, { cache: { prefixCaching: false } });
      const together = await Promise.all([others[0], target, others[1], others[2]].map((request) => finishOf(batched, request)));
      expect(together[1].tokens).toEqual(alone);
      // Arriving while the others decode: its prompt runs beside their one-row chunks.
      const late = new Engine(model);
      const running = others.map((request) => finishOf(late, request));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await finishOf(late, target)).tokens).toEqual(alone);
      await Promise.all(running);
      // As the second member of a fork group: its prompt forked, its last prompt token computed beside the leader's decode.
      const group = new Engine(model);
      const forked = await Promise.all([1233, 1234].map((seed, i) => finishOf(group, { ...target, id: `m${i}`, sampling: { temperature: 1, seed }, fork: { group: "g", size: 2 } })));
      expect(forked[1].usage.reusedPrefixTokens).toBe(28);
      expect(forked[1].tokens).toEqual(alone);
      expect(forked[1].seed).toBe(1234);
    });
  });
}
