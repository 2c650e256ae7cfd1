// The relaxed-SIMD build of the kernels gives bit-identical logits to the plain build: its int8 dot products are
// exact, so only speed differs. Under CI this V8 must run relaxed SIMD (Node 20 with the flag the runtime sets).
import { describe, expect, it } from "vitest";
import { relaxedSimdSupported } from "../../../kernels/wasm/relaxed-simd.js";
import { WasmRuntime } from "../../../kernels/wasm/runtime.js";
import type { ModelDtype } from "../../../scripts/model-dtypes.js";
import { ensureTestModel, testModelSkipReason } from "../../../scripts/test-models.js";
import { loadModel } from "../../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";

const relaxedReason = relaxedSimdSupported() ? undefined : "this V8 cannot run WebAssembly relaxed SIMD";
const skip = testModelSkipReason("tiny-kquant") ?? relaxedReason;

describe("choosing the kernel build", () => {
  it("runs the plain build when asked, relaxed on auto where supported, and rejects other values", async () => {
    const plain = await WasmRuntime.create({ threads: 1, simd: "plain" });
    const auto = await WasmRuntime.create({ threads: 1 });
    try {
      expect(plain.simd).toBe("plain");
      expect(auto.simd).toBe(relaxedSimdSupported() ? "relaxed" : "plain");
    } finally {
      await plain.dispose();
      await auto.dispose();
    }
    await expect(WasmRuntime.create({ threads: 1, simd: "avx" as never })).rejects.toThrow(/simd must be "auto", "relaxed" or "plain", got "avx"/);
  });
});

describe.skipIf(skipOutsideCi(skip))(titled("relaxed and plain SIMD builds", skip), () => {
  it.each<ModelDtype>(["q4_k_m", "q5_k_m", "q6_k", "q8_0"])("%s: identical logits for a prompt and a decode step", async (dtype) => {
    failIfMissing(skip);
    const path = await ensureTestModel("tiny-kquant", "gguf", dtype);
    const logits: Float32Array[][] = [];
    for (const simd of ["plain", "relaxed"] as const) {
      const model = await loadModel(path, { contextSize: 64, threads: 2, simd });
      try {
        const prompt = Array.from({ length: 11 }, (_, i) => 100 + i * 37);
        const prefill = Float32Array.from(model.runner.forward([{ tokens: prompt, startPosition: 0, blockTable: [0], wantLogits: true }]));
        const step = Float32Array.from(model.runner.forward([{ tokens: [555], startPosition: prompt.length, blockTable: [0], wantLogits: true }]));
        logits.push([prefill, step]);
      } finally {
        await model.dispose();
      }
    }
    expect(Buffer.from(logits[1][0].buffer).equals(Buffer.from(logits[0][0].buffer))).toBe(true);
    expect(Buffer.from(logits[1][1].buffer).equals(Buffer.from(logits[0][1].buffer))).toBe(true);
  });
});
