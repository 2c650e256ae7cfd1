// Device loss on WebGPU: the request whose pass was running fails with an error that says the device was lost, and
// the engine keeps serving on a fresh device (weights uploaded again, cached prefixes dropped), giving the same tokens.
import { beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { Engine } from "../../engine.js";
import { loadModel } from "../../load.js";
import type { EngineRequest } from "../../request.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { gpuUnavailable } from "../../../kernels/webgpu/gpu.js";
import type { RecoveringGpuRunner } from "./recovering-runner.js";

// Without an adapter the tests skip with the reason in their title, except under CI=true, where they fail.
const unavailable = await gpuUnavailable();

const greedy = (tokens: number[], maxTokens: number): EngineRequest => ({ input: { tokens }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true });

async function outcome(engine: Engine, request: EngineRequest, onText?: () => void): Promise<{ tokens?: number[]; error?: Error }> {
  for await (const event of engine.submit(request)) {
    if (event.type === "text") onText?.();
    if (event.type === "error") return { error: event.error };
    if (event.type === "finish") return { tokens: event.tokens };
  }
  throw new Error("no finish or error event");
}

describe.skipIf(skipOutsideCi(unavailable))(titled("GPU device loss", unavailable), () => {
  beforeAll(() => failIfMissing(unavailable));

  // tiny-gemma3 frees its window layers' KV: the new device must hold the same blocks and window slots.
  it.each(["tiny-llama", "tiny-gemma3"])("%s: fails the running request with the cause, then serves the same tokens on a new device", async (preset) => {
    const model = await loadModel(await ensureTestModel(preset, "gguf", "q8_0"), {
      backend: "webgpu", contextSize: 256, maxSequences: 4, batchSize: 64, kvCache: { bytes: 4 * 1024 * 1024 },
    });
    const runner = model.runner as RecoveringGpuRunner;
    const engine = new Engine(model);
    try {
      const prompt = Array.from({ length: 40 }, (_, i) => 100 + i * 3);
      const before = await outcome(engine, greedy(prompt, 10));
      expect(before.tokens).toHaveLength(10);
      const firstDevice = runner.gpu.device;

      let lost = false;
      const failed = await outcome(engine, greedy([7, 8, 9], 250), () => {
        if (lost) return;
        lost = true;
        firstDevice.destroy(); // what a driver reset looks like to WebGPU: the device is lost mid-generation
      });
      expect(failed.error?.message).toMatch(/GPU device was lost/);
      expect(engine.stats()).toMatchObject({ running: 0, waiting: 0 });
      expect(engine.stats().kvBlocks.used).toBe(0);

      const after = await outcome(engine, greedy(prompt, 10));
      expect(after.error).toBeUndefined();
      expect(after.tokens).toEqual(before.tokens);
      expect(runner.deviceLosses).toBe(1);
      expect(runner.gpu.device).not.toBe(firstDevice);
      if (preset === "tiny-gemma3") expect(runner.localKvBlocks).toBe(model.localKv!.capacity);
      // The prefix cached before the loss was dropped with the device's memory, not adopted.
      expect(engine.stats().cache.prefixHits).toBe(0);
    } finally {
      engine.close();
      await model.dispose();
    }
  });
});
