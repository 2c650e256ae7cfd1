// End to end on WebGPU: greedy generation equals the WebAssembly backend token for token on stories260K and the
// random-weight test models (F32, F16, BF16, Q8_0 and Q4_0 weights, also split into parts by rows; Llama 3 RoPE
// factors, Qwen2 biases, Qwen3 q/k norm, Gemma 3's sliding windows, post-norms and GeGLU), and the serving engine on WebGPU (async steps, batching, prefix-cache KV copies) matches it too.
// Runs on any adapter (Mesa's lavapipe in CI); without one (or without stories260K) each test skips with the reason in
// its title, except under CI=true, where it fails.
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { tokensOf } from "../../testing/engine-tokens.js";
import { Engine } from "../../engine.js";
import { generate } from "../../generate.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../../load.js";
import type { EngineRequest } from "../../request.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { gpuUnavailable } from "../../../kernels/webgpu/gpu.js";
import type { RecoveringGpuRunner } from "./recovering-runner.js";

const unavailable = await gpuUnavailable();

it.skipIf(skipOutsideCi(unavailable))(titled("has a WebGPU adapter (required under CI)", unavailable), () => failIfMissing(unavailable));

const LOAD: LoadOptions = { contextSize: 256, threads: 2, maxSequences: 8, batchSize: 128, kvCache: { bytes: 16 * 1024 * 1024 } };

async function greedyTokens(model: LoadedModel, prompt: number[], count: number): Promise<number[]> {
  for await (const event of generate(model, prompt, { maxTokens: count, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
    if (event.type === "done") return event.tokens;
  }
  throw new Error("no done event");
}

/** Both backends on one file; disposed after the block. `missing`: why the file may be absent (a shared fixture). */
function onBothBackends(label: string, path: () => Promise<string>, body: (wasm: LoadedModel, gpu: LoadedModel) => Promise<void>,
  gpuOptions: LoadOptions = {}, bothOptions: LoadOptions = {}, missing?: string) {
  const reason = unavailable ?? missing;
  it.skipIf(skipOutsideCi(reason))(titled(label, reason), async () => {
    failIfMissing(reason);
    const file = await path();
    const wasm = await loadModel(file, { ...LOAD, ...bothOptions, backend: "wasm" });
    const gpu = await loadModel(file, { ...LOAD, ...bothOptions, ...gpuOptions, backend: "webgpu" });
    try {
      expect(gpu.backend).toBe("webgpu");
      await body(wasm, gpu);
    } finally {
      await wasm.dispose();
      await gpu.dispose();
    }
  });
}

const prompts = (model: LoadedModel) => ["Once upon a time", "The little dog", "She said"].map((text) => model.tokenizer.encode(text, { addSpecial: true, parseSpecial: false }));

describe("greedy generation on WebGPU equals WebAssembly", () => {
  onBothBackends("stories260K: 3 prompts x 48 tokens", async () => FIXTURES.stories260kGguf, async (wasm, gpu) => {
    for (const prompt of prompts(wasm)) expect(await greedyTokens(gpu, prompt, 48)).toEqual(await greedyTokens(wasm, prompt, 48));
  }, {}, {}, missingFixtureReason(FIXTURES.stories260kGguf));
  const variants = [
    ["tiny-llama", "f32"], ["tiny-llama", "f16"], ["tiny-llama", "bf16"], ["tiny-llama", "q8_0"], ["tiny-llama", "q4_0"],
    ["tiny-llama3", "f32"], ["tiny-qwen2", "q8_0"], ["tiny-qwen3", "q8_0"], ["tiny-gemma3", "f32"], ["tiny-gemma3", "q8_0"],
  ] as const;
  for (const [preset, dtype] of variants) {
    onBothBackends(`${preset} ${dtype}: 2 prompts x 16 tokens`, () => ensureTestModel(preset, "gguf", dtype), async (wasm, gpu) => {
      for (const prompt of prompts(wasm).slice(0, 2)) expect(await greedyTokens(gpu, prompt, 16)).toEqual(await greedyTokens(wasm, prompt, 16));
    });
  }
  // Prompts of TILED_MIN_ROWS tokens and more run their matmuls tiled (matmul_tiled*.wgsl), with partial tiles.
  for (const dtype of ["f32", "bf16", "q8_0", "q4_0"] as const) {
    onBothBackends(`tiny-llama ${dtype}: a 100-token prompt (tiled matmuls) x 12 tokens`, () => ensureTestModel("tiny-llama", "gguf", dtype), async (wasm, gpu) => {
      const prompt = Array.from({ length: 100 }, (_, i) => 200 + ((i * 131) % 20000));
      expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
    });
  }
  // Gemma 3 past its 8-position window: a 100-token prompt (tiled matmuls, windowed prefill) and decode steps.
  onBothBackends("tiny-gemma3 q8_0: a 100-token prompt x 12 tokens (sliding-window layers)", () => ensureTestModel("tiny-gemma3", "gguf", "q8_0"), async (wasm, gpu) => {
    const prompt = [2, ...Array.from({ length: 99 }, (_, i) => 300 + ((i * 131) % 20000))];
    expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
  });
  // Image rows (a vision encoder's embeddings in place of token embeddings) go into x before the first layer: a pass
  // with one image row (causal) and one with a 16-row image seen bidirectionally give the WebAssembly logits.
  onBothBackends("tiny-gemma3 f32: a pass with image rows", () => ensureTestModel("tiny-gemma3", "gguf", "f32"), async (wasm, gpu) => {
    const tokens = Array.from({ length: 28 }, (_, i) => 300 + i * 17);
    const embeddings = (rows: number) => Float32Array.from({ length: rows * 64 }, (_, i) => Math.sin(i * 0.37) * 2);
    for (const rows of [1, 16]) {
      const chunk = { tokens, startPosition: 0, blockTable: [0, 1], wantLogits: true, media: [{ offset: 3, embeddings: embeddings(rows), keyEnd: 3 + rows }] };
      const [expected, got] = [await wasm.runner.forward([chunk]), await gpu.runner.forward([chunk])];
      const argmax = (values: Float32Array) => values.reduce((best, value, i) => (value > values[best]! ? i : best), 0);
      expect(argmax(got), `${rows} image rows`).toBe(argmax(expected));
      let difference = 0;
      let reference = 0;
      expected.forEach((value, i) => { difference += (got[i]! - value) ** 2; reference += value ** 2; });
      expect(Math.sqrt(difference / reference), `${rows} image rows`).toBeLessThan(1e-3); // 1.3e-4 on lavapipe; 0.28 with the rows placed after the pass
    }
  }, {}, { kvCache: { bytes: 16 * 1024 * 1024, keepWindowKv: true } });
  // Decode steps over contexts past 256 keys split them (split-K attention, then a merge); f32 and f16 caches.
  for (const kv of ["f32", "f16"] as const) {
    onBothBackends(`tiny-llama q8_0: a 300-token prompt x 12 tokens (split-K decode attention, ${kv} KV)`, () => ensureTestModel("tiny-llama", "gguf", "q8_0"), async (wasm, gpu) => {
      const prompt = Array.from({ length: 300 }, (_, i) => 200 + ((i * 131) % 20000));
      // As in the f16 batched test below: with f16, a rounding flip may end agreement early; 8 tokens must agree.
      const count = kv === "f16" ? 8 : 12;
      expect(await greedyTokens(gpu, prompt, count)).toEqual(await greedyTokens(wasm, prompt, count));
    }, {}, { contextSize: 512, kvCache: { bytes: 32 * 1024 * 1024, dtype: kv } });
  }
  // Weights over the binding limit are split by rows (as a 151k-token F16 embedding is on a 128 MiB limit): the
  // tied embedding's lookup and the logits matmul run part by part, the last part shorter than the others.
  for (const dtype of ["f16", "q8_0", "q4_0"] as const) {
    onBothBackends(`tiny-llama ${dtype} with the embedding split into 1 MB parts`, () => ensureTestModel("tiny-llama", "gguf", dtype), async (wasm, gpu) => {
      // 49152 rows of 256 (F16), 128 (Q8_0 quants) or 64 (Q4_0 quants) bytes.
      expect((gpu.runner as RecoveringGpuRunner).current.weightParts("token_embd.weight")).toBe({ f16: 13, q8_0: 7, q4_0: 4 }[dtype]);
      for (const prompt of prompts(wasm).slice(0, 2)) expect(await greedyTokens(gpu, prompt, 16)).toEqual(await greedyTokens(wasm, prompt, 16));
    }, { webgpu: { weightPartBytes: 1_000_000 } });
  }
  // The tests above run the subgroup matmuls where the adapter has usable subgroups (lavapipe does); these run the
  // workgroup-memory kernels that other adapters get.
  for (const dtype of ["f16", "q8_0", "q4_0"] as const) {
    onBothBackends(`tiny-llama ${dtype} without subgroup kernels`, () => ensureTestModel("tiny-llama", "gguf", dtype), async (wasm, gpu) => {
      expect((gpu.runner as RecoveringGpuRunner).current.subgroups).toBe(false);
      for (const prompt of prompts(wasm).slice(0, 2)) expect(await greedyTokens(gpu, prompt, 16)).toEqual(await greedyTokens(wasm, prompt, 16));
    }, { webgpu: { subgroups: false } });
  }
});

const F16_KV: LoadOptions = { kvCache: { bytes: 16 * 1024 * 1024, dtype: "f16" } };

describe("an f16 KV cache on WebGPU equals the WebAssembly backend's", () => {
  for (const dtype of ["f16", "q8_0"] as const) {
    onBothBackends(`tiny-llama ${dtype}: a short and a 100-token prompt x 12 tokens`, () => ensureTestModel("tiny-llama", "gguf", dtype), async (wasm, gpu) => {
      expect(gpu.runner.kvDtype).toBe("f16");
      for (const prompt of [prompts(wasm)[0], Array.from({ length: 100 }, (_, i) => 200 + ((i * 131) % 20000))]) {
        expect(await greedyTokens(gpu, prompt, 12)).toEqual(await greedyTokens(wasm, prompt, 12));
      }
    }, {}, F16_KV);
  }
});

describe("the serving engine on WebGPU", () => {
  for (const kv of ["f32", "f16"] as const) onBothBackends(`batched requests with a shared prefix give the WebAssembly tokens (${kv} KV)`, () => ensureTestModel("tiny-llama", "gguf", "q8_0"), async (wasm, gpu) => {
    const shared = Array.from({ length: 40 }, (_, i) => 300 + ((i * 37) % 500));
    const requests: EngineRequest[] = [5, 9, 13, 21].map((extra) => ({
      input: { tokens: [...shared, ...Array.from({ length: extra }, (_, i) => 900 + i * extra)] }, maxTokens: 12, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
    }));
    const run = async (model: LoadedModel) => {
      const engine = new Engine(model);
      try {
        // The first request fills the prefix cache; the rest share its blocks (a partial block is copied).
        const first = await tokensOf(engine, requests[0]);
        const rest = await Promise.all(requests.slice(1).map((request) => tokensOf(engine, request)));
        return { tokens: [first, ...rest], stats: engine.stats() };
      } finally {
        engine.close();
      }
    };
    const expected = await run(wasm);
    const got = await run(gpu);
    // With an f16 cache, a K or V value the two backends compute within float noise of each other (summation order)
    // can round to neighbouring halves. These random weights amplify that: the f16 cache moves logits by up to 0.8
    // against f32 on either backend, and one such rounding flip moved them by 0.6 at position 52 of one request, which
    // then diverged after 8 equal tokens. So with f16 the first 8 tokens must agree.
    const compared = (tokens: number[][]) => (kv === "f16" ? tokens.map((t) => t.slice(0, 8)) : tokens);
    expect(compared(got.tokens)).toEqual(compared(expected.tokens));
    expect(got.stats.cache.prefixHits).toBeGreaterThan(0);
  }, {}, kv === "f16" ? F16_KV : {});
});

describe("aborts on WebGPU", () => {
  it.skipIf(skipOutsideCi(unavailable))(titled("wait for the running pass, then free the request's blocks", unavailable), async () => {
    const model = await loadModel(await ensureTestModel("tiny-llama", "gguf", "q8_0"), { ...LOAD, backend: "webgpu" });
    const engine = new Engine(model);
    try {
      const greedy = (tokens: number[], maxTokens: number): EngineRequest => ({ input: { tokens }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true });
      for await (const event of engine.submit(greedy([5, 6, 7, 8], 200))) {
        if (event.type !== "text") continue;
        // Node runs immediates in order: the engine's next step (already queued) starts its GPU pass first, so
        // leaving the stream now aborts while that pass is in flight.
        await new Promise((resolve) => setImmediate(resolve));
        break;
      }
      for (let i = 0; i < 500 && engine.stats().running > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(engine.stats()).toMatchObject({ running: 0, waiting: 0, requests: { aborted: 1 } });
      expect(engine.stats().kvBlocks.used).toBe(0);
      expect(await tokensOf(engine, greedy([9, 10, 11], 3))).toHaveLength(3);
    } finally {
      engine.close();
      await model.dispose();
    }
  });
});
