// Gemma 4's per_layer_token_embd takes no WebAssembly memory: the memory plan never places it, and an E2B-sized one
// (262144 rows of 35 x 256 F16 values, 4.70 GB, more than a WebAssembly memory) costs only its staged rows.
// (Its logits are tested where the model is: multi-memory, new-architectures and parity tests.)
import { describe, expect, it } from "vitest";
import { GgmlType } from "../../../kernels/formats/types.js";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { openModelSource } from "../../model/source.js";
import type { RunnerOptions } from "../runner.js";
import { WasmModelRunner } from "./model-runner.js";
import { PER_LAYER_TOKEN_EMBD, tensorsReadByRows } from "./rows-read-on-demand.js";

const MiB = 1024 * 1024;
const options: RunnerOptions = { maxBatchTokens: 512, maxSequences: 4, maxContext: 256, blockSize: 16, kvCache: { bytes: 16 * MiB } };

describe("Gemma 4's per-layer token embedding in the WebAssembly memory plan", () => {
  it("is read by rows for gemma4 only", async () => {
    const gemma4 = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "f32"));
    expect([...tensorsReadByRows(gemma4.config)]).toEqual([PER_LAYER_TOKEN_EMBD]);
    const gemma3 = openModelSource(await ensureTestModel("tiny-gemma3", "gguf", "f32"));
    expect(tensorsReadByRows(gemma3.config).size).toBe(0);
  }, 60_000);

  it("is placed in no memory, and an E2B-sized one costs only its batch's staged rows", async () => {
    const source = openModelSource(await ensureTestModel("tiny-gemma4", "gguf", "f32"));
    const tiny = source.tensors.get(PER_LAYER_TOKEN_EMBD)!;
    expect(tiny.shape).toEqual([48, 262144]);
    const plan = WasmModelRunner.plan(source, options);
    expect(plan.groups.flatMap((group) => group.tensors)).not.toContain(PER_LAYER_TOKEN_EMBD);
    expect(plan.groups.flatMap((group) => group.tensors)).toContain("per_layer_model_proj.weight");

    // E2B's: 35 layers x 256 values per token, F16.
    const rowValues = 35 * 256;
    const e2b = { ...tiny, type: GgmlType.F16, shape: [rowValues, 262144], byteLength: 262144 * rowValues * 2 };
    expect(e2b.byteLength).toBe(4_697_620_480);
    const tensors = new Map(source.tensors).set(PER_LAYER_TOKEN_EMBD, e2b);
    const large = WasmModelRunner.plan({ ...source, tensors }, options);
    expect(large.groups.length).toBe(1);
    expect(large.kvBlocks).toBe(plan.kvBlocks);
    // The only difference: room for 512 staged rows of 17920 bytes where there were rows of 48 f32.
    expect(large.totalBytes - plan.totalBytes).toBe(options.maxBatchTokens * (rowValues * 2 - 48 * 4));
  }, 60_000);
});
