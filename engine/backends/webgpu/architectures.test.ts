// What the WebGPU backend refuses before touching a GPU: MXFP4 tensors by name and type (never widened to F32), with
// the way out (--backend wasm).
import { describe, expect, it } from "vitest";
import { GgmlType } from "../../../kernels/formats/types.js";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { ModelFileError } from "../../model/errors.js";
import { openModelSource } from "../../model/source.js";
import type { GpuContext } from "../../../kernels/webgpu/gpu.js";
import { webGpuUnsupportedTensor } from "./architectures.js";
import { WebGpuModelRunner } from "./model-runner.js";

describe("WebGPU refusals", () => {
  it("names the first MXFP4 tensor, and takes every other type it reads or widens", () => {
    expect(webGpuUnsupportedTensor([
      { name: "blk.0.attn_q.weight", type: GgmlType.Q8_0 }, { name: "blk.0.ffn_up.weight", type: GgmlType.Q4_K },
    ])).toBeUndefined();
    expect(webGpuUnsupportedTensor([
      { name: "blk.0.attn_q.weight", type: GgmlType.Q8_0 }, { name: "blk.0.ffn_up_exps.weight", type: GgmlType.MXFP4 },
    ])).toBe("tensor 'blk.0.ffn_up_exps.weight' has type MXFP4, which the WebGPU backend does not run yet");
  });

  it("refuses an MXFP4 model before using the GPU, pointing to --backend wasm", async () => {
    const source = openModelSource(await ensureTestModel("tiny-qwen3moe", "gguf", "mxfp4"));
    const options = { maxSequences: 1, maxContext: 64, maxBatchTokens: 16, blockSize: 16 } as never;
    const refusal = WebGpuModelRunner.create(source, undefined as unknown as GpuContext, options);
    await expect(refusal).rejects.toBeInstanceOf(ModelFileError);
    await expect(refusal).rejects.toThrow(/tensor 'blk\.0\.ffn_\w+_exps\.weight' has type MXFP4, which the WebGPU backend does not run yet: use --backend wasm/);
  }, 120_000);
});
