// The WebAssembly loader keeps every matrix in its file's type (K-quants included): the weights take exactly the
// file's tensor bytes, plus 1-D tensors widened to f32; asked to, it widens Q6_K to a byte per quant, losslessly.
import { closeSync, readSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { widenedQ6_K } from "../../../kernels/formats/q6_k-bytes.js";
import { BLOCK_LAYOUT, GgmlType } from "../../../kernels/formats/types.js";
import { WasmRuntime } from "../../../kernels/wasm/runtime.js";
import type { ModelDtype } from "../../../scripts/model-dtypes.js";
import { ensureTestModel, testModelSkipReason } from "../../../scripts/test-models.js";
import { openForReading } from "../../model/file-io.js";
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
      const weights = loadWeights(source, () => runtime, { kernelTypes: ALL_TYPES });
      let fileBytes = 0;
      for (const tensor of source.tensors.values()) {
        const resident = weights.get(tensor.name)!;
        expect(resident.type, tensor.name).toBe(tensor.type);
        expect(resident.layout, tensor.name).toBe("as-stored");
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
      const storage = { kernelTypes: new Set([GgmlType.F32, GgmlType.Q6_K]) };
      const weights = loadWeights(source, () => runtime, storage);
      for (const tensor of source.tensors.values()) {
        const resident = weights.get(tensor.name)!;
        expect(resident.type, tensor.name).toBe(tensor.type === GgmlType.Q4_K ? GgmlType.F32 : tensor.type);
        // What memory planning counts is what loading takes.
        expect(residentBytes(tensor, storage), tensor.name).toBe(resident.byteLength);
      }
    } finally {
      runtime.release(mark);
    }
  });

  it("widens Q6_K matrices to a byte per quant when asked: the file's quants, scales and d, 274 bytes a super-block", async () => {
    const source = openModelSource(await ensureTestModel("tiny-kquant", "gguf", "q4_k_m"));
    const mark = runtime.mark();
    try {
      const storage = { kernelTypes: ALL_TYPES, widenQ6_K: true };
      const weights = loadWeights(source, () => runtime, storage);
      let widened = 0;
      for (const tensor of source.tensors.values()) {
        const resident = weights.get(tensor.name)!;
        expect(residentBytes(tensor, storage), tensor.name).toBe(resident.byteLength);
        const isMatrix = tensor.type === GgmlType.Q6_K && tensor.shape.length === 2;
        expect(resident.layout, tensor.name).toBe(isMatrix ? "q6_k-bytes" : "as-stored");
        if (!isMatrix || tensor.interleavedRopeHeads !== undefined) continue;
        const fileBytes = new Uint8Array(tensor.byteLength);
        const fd = openForReading(tensor.path);
        try {
          readSync(fd, fileBytes, 0, fileBytes.length, tensor.fileOffset);
        } finally {
          closeSync(fd);
        }
        expect(Buffer.from(runtime.u8(resident.pointer, resident.byteLength)).equals(Buffer.from(widenedQ6_K(fileBytes))), tensor.name).toBe(true);
        widened++;
      }
      expect(widened).toBeGreaterThan(0);
    } finally {
      runtime.release(mark);
    }
  });
});
