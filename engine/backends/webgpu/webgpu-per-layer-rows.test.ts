// Gemma 4's per_layer_token_embd is never uploaded to the GPU (4.70 GB in F16 for E2B): each pass reads its tokens'
// rows from the file and uploads them as f32. Every buffer the runner creates is recorded by its label; the per-layer
// projection is there, the token table is not. (Its logits equal WebAssembly's in webgpu-new-architectures.test.ts.)
// Runs on any adapter (Mesa's lavapipe in CI); without one it skips with the reason in its title, except under CI=true.
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { gpuUnavailable, openGpu } from "../../../kernels/webgpu/gpu.js";
import { openModelSource } from "../../model/source.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { WebGpuModelRunner } from "./model-runner.js";

const unavailable = await gpuUnavailable();

describe.skipIf(skipOutsideCi(unavailable))(titled("Gemma 4's per-layer token rows on WebGPU", unavailable), () => {
  it("uploads the per-layer projection but not per_layer_token_embd, and runs a pass", async () => {
    failIfMissing(unavailable);
    const source = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "f32"));
    const gpu = await openGpu();
    if ("unavailable" in gpu) throw new Error(gpu.unavailable);
    const labels: string[] = [];
    const createBuffer = gpu.device.createBuffer.bind(gpu.device);
    gpu.device.createBuffer = (descriptor) => {
      labels.push(descriptor.label ?? "");
      return createBuffer(descriptor);
    };
    const runner = await WebGpuModelRunner.create(source, gpu, { maxBatchTokens: 16, maxSequences: 1, maxContext: 64, blockSize: 16, kvCache: { bytes: 1 << 20 } });
    try {
      expect(labels).toContain("per_layer_model_proj.weight");
      expect(labels.filter((label) => label.includes("per_layer_token_embd"))).toEqual([]);
      const logits = await runner.forward([{ tokens: [2, 818, 5279, 818], startPosition: 0, blockTable: [0], wantLogits: true, localBlockTable: [0] }]);
      expect(logits.length).toBe(source.config.vocab_size);
      expect(logits.every(Number.isFinite)).toBe(true);
    } finally {
      runner.dispose();
      gpu.device.destroy();
    }
  }, 120_000);
});
