// The vision encoder on WebGPU (Mesa's lavapipe in CI) against the WebAssembly one on tiny-gemma3's mmproj: the same
// embeddings within f32 rounding for images of three sizes (also with weights split into parts and without the
// subgroup kernels); a model loaded on WebGPU with the projector answers an image and text with the WebAssembly
// backend's greedy tokens; after a device loss images fail with an error that says so, then the encoder follows the
// model to its new device. Without an adapter (or the test models' fixtures) the GPU tests skip, except under CI=true.
// The full-size shape's buffers and attention tile are checked against the default limits without a GPU.
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gpuUnavailable, openGpu } from "../../kernels/webgpu/gpu.js";
import { grid } from "../../kernels/webgpu/shaders.js";
import { ensureTestMmproj, ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import type { RecoveringGpuRunner } from "../backends/webgpu/recovering-runner.js";
import type { RgbImage } from "../chat/messages.js";
import { Engine } from "../engine.js";
import { type LoadOptions, loadModel } from "../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../testing/fixtures.js";
import type { VisionConfig } from "./clip-config.js";
import { RecoveringVisionEncoder } from "./recovering-encoder.js";
import { ThreadedVisionEncoder } from "./encoder-thread.js";
import { WasmVisionEncoder } from "./wasm-encoder.js";
import { WebGpuVisionEncoder, attentionKeyTile, visionActivationBytes } from "./webgpu-encoder.js";

const unavailable = (await gpuUnavailable()) ?? testModelSkipReason("tiny-gemma3");

/** A test image: colour gradients with a few edges, `width` x `height`, decoded from a PNG as a request's would be. */
async function image(width: number, height: number, seed: number): Promise<RgbImage> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      raw[at] = (x * 255) / Math.max(1, width - 1);
      raw[at + 1] = (y * 255) / Math.max(1, height - 1);
      raw[at + 2] = ((x + y + seed * 37) % 64 < 32 ? 40 : 220) ^ (seed * 29);
    }
  }
  const png = await sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

const LOAD: LoadOptions = { contextSize: 256, threads: 2, maxSequences: 4, kvCache: { bytes: 16 * 1024 * 1024 } };

/** Relative RMS difference of two vectors. */
function relativeRms(actual: Float32Array, expected: Float32Array): number {
  let difference = 0;
  let reference = 0;
  for (let i = 0; i < expected.length; i++) {
    difference += (actual[i]! - expected[i]!) ** 2;
    reference += expected[i]! ** 2;
  }
  return Math.sqrt(difference / reference);
}

describe("the WebGPU vision encoder's shapes at full size (SigLIP so400m: 4096 patches x 1152, ffn 4304, 16 heads of 72)", () => {
  const full: VisionConfig = {
    projectorType: "gemma3", imageSize: 896, patchSize: 14, patchesPerSide: 64, hiddenSize: 1152, feedForwardSize: 4304, layers: 27,
    heads: 16, headDim: 72, layerNormEps: 1e-6, imageMean: [0.5, 0.5, 0.5], imageStd: [0.5, 0.5, 0.5], mergeFactor: 4, tokensPerImage: 256, outputSize: 5376,
  };
  it("every work buffer fits the default 128 MiB storage binding; the GELU grid folds into y", () => {
    const bytes = visionActivationBytes(full);
    expect(bytes.up).toBe(4096 * 4304 * 4); // the largest: 70.5 MB
    for (const [name, size] of Object.entries(bytes)) expect(size, name).toBeLessThanOrEqual(128 * 1024 * 1024);
    const [x, y] = grid(4096 * 4304, 256);
    expect(x).toBeLessThanOrEqual(65535);
    expect(y).toBe(2);
  });
  it("the attention key tile keeps workgroup memory within 16 KiB", () => {
    const memory = (headDim: number, keyTile: number) => 4 * (16 + 2 * keyTile) * headDim + 64 * keyTile;
    for (const [headDim, keyTile] of [[72, 16], [64, 16], [96, 12], [128, 4], [16, 16]] as const) {
      expect(attentionKeyTile(headDim, 16384), `head dim ${headDim}`).toBe(keyTile);
      expect(memory(headDim, keyTile)).toBeLessThanOrEqual(16384);
    }
    expect(() => attentionKeyTile(144, 16384)).toThrow(/144 dimensions/);
    expect(() => attentionKeyTile(128, 8192)).toThrow(/use --backend wasm/);
  });
});

describe.skipIf(skipOutsideCi(unavailable))(titled("the vision encoder on WebGPU (tiny-gemma3's mmproj)", unavailable), () => {
  let mmproj: string;
  let modelPath: string;
  let images: RgbImage[];
  let wasm: WasmVisionEncoder;
  /** The WebAssembly encoder's embeddings of each image. */
  let expected: Float32Array[];
  beforeAll(async () => {
    failIfMissing(unavailable);
    [mmproj, modelPath, images] = await Promise.all([
      ensureTestMmproj("tiny-gemma3"), ensureTestModel("tiny-gemma3", "gguf", "f32"),
      Promise.all([image(112, 112, 1), image(200, 150, 2), image(17, 400, 5)]),
    ]);
    wasm = await WasmVisionEncoder.load(mmproj, { threads: 2 });
    expected = images.map((picture) => wasm.encode(picture));
  }, 180_000);
  afterAll(async () => wasm?.dispose());

  const variants = [
    ["as the device allows", {}],
    // The patch kernel's F32 rows (2352 bytes) one per part, the F16 up and down matrices in 2 parts, the projection in 4.
    ["with the matrices split into parts of 2400 bytes, without subgroup kernels", { weightPartBytes: 2400, subgroups: false }],
  ] as const;
  for (const [label, options] of variants) {
    it(`gives the WebAssembly encoder's embeddings within f32 rounding, on three images (${label})`, async () => {
      const gpu = await openGpu();
      if ("unavailable" in gpu) throw new Error(gpu.unavailable);
      const encoder = await WebGpuVisionEncoder.load(mmproj, gpu, options);
      try {
        const started = performance.now();
        const outputs = [];
        for (const picture of images) outputs.push(await encoder.encode(picture));
        console.log(`WebGPU vision encoder (${label}) on ${gpu.adapter.description}: ${((performance.now() - started) / images.length).toFixed(1)} ms per image`);
        if (options.weightPartBytes) {
          expect([encoder.weightParts("v.patch_embd.weight"), encoder.weightParts("v.blk.0.ffn_up.weight"), encoder.weightParts("mm.input_projection.weight")]).toEqual([32, 2, 4]);
        }
        for (const [i, output] of outputs.entries()) {
          expect(output.length).toBe(encoder.config.tokensPerImage * encoder.config.outputSize);
          // 7e-6 to 4e-5 on lavapipe: GELU rounds through halves (as llama.cpp's table), so the f32 summation-order
          // differences of the matmuls (1e-7) flip about one half rounding per layer, which spreads through the rest.
          expect(relativeRms(output, expected[i]!), `image ${i}`).toBeLessThan(1e-4);
        }
        // Distinct images stay distinct; encodes asked for at once run one after another and give the same bits.
        expect(relativeRms(outputs[0]!, outputs[1]!)).toBeGreaterThan(0.05);
        expect(await Promise.all(images.map((picture) => encoder.encode(picture)))).toEqual(outputs);
        await expect(encoder.encode({ width: 2, height: 2, data: new Uint8Array(5) })).rejects.toThrow(RangeError);
      } finally {
        await encoder.dispose();
        gpu.device.destroy();
      }
    });
  }

  it("a WebGPU model with the projector gives the WebAssembly backend's 32 greedy tokens for an image and text", async () => {
    const run = async (backend: LoadOptions["backend"]) => {
      const model = await loadModel(modelPath, { ...LOAD, mmproj, backend });
      const engine = new Engine(model);
      try {
        if (backend === "webgpu") expect(model.vision).toBeInstanceOf(RecoveringVisionEncoder);
        else expect(model.vision).toBeInstanceOf(ThreadedVisionEncoder);
        const messages = [{ role: "user" as const, content: "describe", images: [{ offset: 0, image: images[1]! }] }];
        for await (const event of engine.submit({ input: { messages }, maxTokens: 32, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
          if (event.type === "error") throw event.error;
          if (event.type === "finish") return event.tokens;
        }
        throw new Error("no finish event");
      } finally {
        engine.close();
        await model.dispose();
      }
    };
    const gpu = await run("webgpu");
    expect(gpu).toHaveLength(32);
    expect(gpu).toEqual(await run("wasm"));
  });

  it("after a device loss, fails an image with an error naming it, then encodes on the model's new device", async () => {
    const model = await loadModel(modelPath, { ...LOAD, mmproj, backend: "webgpu" });
    try {
      const runner = model.runner as RecoveringGpuRunner;
      const vision = model.vision as RecoveringVisionEncoder;
      const before = await vision.encode(images[0]!);
      const first = runner.gpu;
      expect(vision.current.gpu).toBe(first); // the model's own device
      first.device.destroy();
      await expect(vision.encode(images[0]!)).rejects.toThrow(/GPU device was lost/);
      for (let i = 0; i < 600 && runner.gpu === first; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(runner.gpu).not.toBe(first);
      const after = await vision.encode(images[0]!);
      expect(vision.reloads).toBe(1);
      expect(vision.current.gpu).toBe(runner.gpu);
      expect(after).toEqual(before);
    } finally {
      await model.dispose();
    }
  });
});
