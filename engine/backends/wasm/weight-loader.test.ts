// The WebAssembly backend keeps every matrix in its file's type (K-quants included): the weights take exactly the
// file's tensor bytes, plus 1-D tensors widened to f32.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BLOCK_LAYOUT, GgmlType } from "../../../kernels/formats/types.js";
import { WasmRuntime } from "../../../kernels/wasm/runtime.js";
import type { ModelDtype } from "../../../scripts/model-dtypes.js";
import { ensureTestModel, testModelSkipReason } from "../../../scripts/test-models.js";
import { openModelSource } from "../../model/source.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { loadWeights, residentBytes } from "./weight-loader.js";

const skip = testModelSkipReason("tiny-kquant");
const ALL_TYPES: ReadonlySet<GgmlType> = new Set(Object.keys(BLOCK_LAYOUT).map(Number));

describe.skipIf(skipOutsideCi(skip))(titled("weights in WebAssembly memory", skip), () => {
  let runtime: WasmRuntime;
  beforeAll(async () => {
    failIfMissing(skip);
    runtime = await WasmRuntime.create({ threads: 1 });
  });
  afterAll(() => runtime?.dispose());

  it.each<ModelDtype>(["q4_k_m", "q5_k_m", "q6_k"])("%s: every matrix keeps its file type and bytes; nothing is widened", async (dtype) => {
    const source = openModelSource(await ensureTestModel("tiny-kquant", "gguf", dtype));
    const mark = runtime.mark();
    try {
      const before = runtime.availableBytes;
      const weights = loadWeights(source, () => runtime, ALL_TYPES);
      let fileBytes = 0;
      for (const tensor of source.tensors.values()) {
        const resident = weights.get(tensor.name)!;
        expect(resident.type, tensor.name).toBe(tensor.type);
        expect(resident.byteLength, tensor.name).toBe(tensor.byteLength);
        fileBytes += tensor.byteLength;
      }
      expect(fileBytes).toBe(source.totalTensorBytes);
      const used = before - runtime.availableBytes;
      expect(used).toBeGreaterThanOrEqual(fileBytes);
      expect(used).toBeLessThan(fileBytes + source.tensors.size * 64); // alignment padding only
    } finally {
      runtime.release(mark);
    }
  });

  it("widens the types a backend has no kernel for, and only those", async () => {
    const source = openModelSource(await ensureTestModel("tiny-kquant", "gguf", "q4_k_m"));
    const mark = runtime.mark();
    try {
      const types = new Set([GgmlType.F32, GgmlType.Q6_K]);
      const weights = loadWeights(source, () => runtime, types);
      for (const tensor of source.tensors.values()) {
        const resident = weights.get(tensor.name)!;
        expect(resident.type, tensor.name).toBe(tensor.type === GgmlType.Q4_K ? GgmlType.F32 : tensor.type);
        // What memory planning counts is what loading takes.
        expect(residentBytes(tensor, types), tensor.name).toBe(resident.byteLength);
      }
    } finally {
      runtime.release(mark);
    }
  });
});
