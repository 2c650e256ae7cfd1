// Gemma 3's sliding-window layers with their KV freed behind the window (the default) against the same model keeping
// every block (keepWindowKv): the same greedy tokens alone, batched and in chunks, the prefix cache reusing a
// finished conversation its continuation extends (and nothing it could not resume after), and every slot back in the
// end. tiny-gemma3's window is 8 positions in blocks of 16, so every prompt here runs through several windows. The same
// for tiny-gemma4, whose windowed layers' KV is half as wide as its full layers' and whose two shared-KV layers read
// a window layer's and a full layer's cache. Both on the WebAssembly backend and on WebGPU (Mesa's lavapipe in CI;
// without an adapter the WebGPU blocks skip with the reason in their title, except under CI=true, where they fail).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gpuUnavailable } from "../kernels/webgpu/gpu.js";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineRequest } from "./request.js";
import { finishOf } from "./testing/engine-tokens.js";
import { failIfMissing, skipOutsideCi, titled } from "./testing/fixtures.js";
import { deterministicTokens as prompt } from "./testing/seeded-random.js";

const greedy = (tokens: number[], maxTokens = 12): EngineRequest => ({
  input: { tokens }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
});

const noGpu = await gpuUnavailable();

for (const [preset, backend] of [["tiny-gemma3", "wasm"], ["tiny-gemma4", "wasm"], ["tiny-gemma3", "webgpu"], ["tiny-gemma4", "webgpu"]] as const) {
  const skip = testModelSkipReason(preset) ?? (backend === "webgpu" ? noGpu : undefined);
  describe.skipIf(skipOutsideCi(skip))(titled(`${preset} on ${backend} with sliding-window KV freed`, skip), () => {
    let freed: LoadedModel;
    let kept: LoadedModel;
    beforeAll(async () => {
      failIfMissing(skip);
      const path = await ensureTestModel(preset, "gguf", "q8_0");
      const options = { backend, contextSize: 512, threads: 2, maxSequences: 4, batchSize: 64, kvCache: { bytes: 8 * 1024 * 1024 } };
      freed = await loadModel(path, options);
      kept = await loadModel(path, { ...options, kvCache: { ...options.kvCache, keepWindowKv: true } });
    }, 120_000);
    afterAll(async () => {
      await freed?.dispose();
      await kept?.dispose();
    });

    it("frees by default: the window layers get a few slots, the full layer more blocks from the same budget", () => {
      expect(freed.config.sliding_window).toBe(8);
      expect(freed.localKv).toBeDefined();
      expect(kept.localKv).toBeUndefined();
      expect(freed.runner.localKvBlocks!).toBeLessThan(kept.runner.kvBlocks);
      expect(freed.runner.kvBlocks).toBeGreaterThan(kept.runner.kvBlocks);
    });

    it("gives the tokens of the model that keeps every block, alone, batched and prefilled in chunks", async () => {
      const prompts = [prompt(1, 70), prompt(2, 23), prompt(3, 41), prompt(4, 9)];
      const run = async (model: LoadedModel, options: { maxSequences: number; maxStepTokens?: number }) => {
        const engine = new Engine(model, { ...options, cache: { prefixCaching: false } });
        const results = await Promise.all(prompts.map((p) => finishOf(engine, greedy(p))));
        engine.close();
        return results.map((result) => result.tokens);
      };
      // The WebAssembly kernels give a row the same bits in any batch: one reference, each prompt alone. WebGPU's do not
      // (tiled matmuls from 32 rows, split-K attention by length, and tiny-gemma4's Q8_0 router near ties), so there the
      // reference runs the same batches.
      const alone = backend === "wasm" ? await run(kept, { maxSequences: 1 }) : undefined;
      for (const options of [{ maxSequences: 1 }, { maxSequences: 4 }, { maxSequences: 4, maxStepTokens: 7 }]) {
        const expected = alone ?? await run(kept, options);
        const tokens = await run(freed, options);
        tokens.forEach((result, i) => expect(result, `prompt ${i} with ${JSON.stringify(options)}`).toEqual(expected[i]));
      }
      expect(freed.localKv!.freeCount).toBe(freed.runner.localKvBlocks);
    });

    it("reuses a finished conversation that the next prompt continues, and only what it can resume after", async () => {
      const reference = new Engine(kept, { cache: { prefixCaching: false } });
      const engine = new Engine(freed, { maxStepTokens: 16 });
      const first = prompt(7, 45);
      const answer = (await finishOf(engine, greedy(first))).tokens;
      // The continuation: the whole first turn and its answer, then more.
      const continued = [...first, ...answer, ...prompt(8, 6)];
      const hit = await finishOf(engine, greedy(continued));
      expect(hit.usage.reusedPrefixTokens).toBe(48); // the cached full blocks: 45 + 12 generated (the last not computed) -> 3 blocks
      expect(hit.tokens).toEqual((await finishOf(reference, greedy(continued))).tokens);
      // A prompt sharing only the first 32 tokens: the window before them is gone, so nothing is reused, and it is right.
      const branch = [...first.slice(0, 32), ...prompt(9, 20)];
      const miss = await finishOf(engine, greedy(branch));
      expect(miss.usage.reusedPrefixTokens).toBe(0);
      expect(miss.tokens).toEqual((await finishOf(reference, greedy(branch))).tokens);
      engine.close();
      expect(freed.localKv!.freeCount).toBe(freed.runner.localKvBlocks);
    });

    it("copies a partly reused block's KV, its window slot's included, when a prompt branches inside the last window", async () => {
      const reference = new Engine(kept, { cache: { prefixCaching: false } });
      const engine = new Engine(freed, { maxStepTokens: 16 });
      // 53 + 12 tokens: 64 computed, four full blocks cached, the last window (positions 56-63) in block 3's slot.
      const first = prompt(11, 53);
      const answer = (await finishOf(engine, greedy(first))).tokens;
      // Branching at position 60: blocks 0-2 shared, positions 48-59 copied out of block 3 (and out of its slot).
      const branch = [...first, ...answer.slice(0, 7), ...prompt(12, 9)];
      const hit = await finishOf(engine, greedy(branch));
      expect(hit.usage.reusedPrefixTokens).toBe(60);
      expect(hit.tokens).toEqual((await finishOf(reference, greedy(branch))).tokens);
      engine.close();
      expect(freed.localKv!.freeCount).toBe(freed.runner.localKvBlocks);
    });
  });
}
