// A model spread over several WebAssembly memories computes exactly what it computes in one: the same logits, the same
// greedy tokens through loadModel and generate, and the same KV after copies (prefix and section reuse) in every layer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import type { ModelDtype } from "../../../scripts/model-dtypes.js";
import { Engine } from "../../engine.js";
import { generate } from "../../generate.js";
import type { KvDtype } from "../../kv/budget.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../../load.js";
import type { EngineRequest } from "../../request.js";
import { finishOf } from "../../testing/engine-tokens.js";
import type { MemoryLimits } from "./memory-plan.js";
import type { WasmModelRunner } from "./model-runner.js";
import { deterministicTokens as prompt } from "../../testing/seeded-random.js";

async function greedyTokens(model: LoadedModel, tokens: number[], maxTokens: number): Promise<number[]> {
  for await (const event of generate(model, tokens, { maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
    if (event.type === "done") return event.tokens;
  }
  throw new Error("generation ended without a done event");
}

const MiB = 1024 * 1024;

const cases: Array<{ preset: string; dtype: ModelDtype; kv: KvDtype; wasm: MemoryLimits; memories: number; why: string; maxSequences?: number; keepWindowKv?: boolean; contextSize?: number }> = [
  { preset: "tiny-llama", dtype: "f32", kv: "f32", wasm: { maxLayersPerMemory: 1 }, memories: 2, why: "tied embedding: looked up in the last memory" },
  { preset: "tiny-llama2", dtype: "q8_0", kv: "f16", wasm: { maxLayersPerMemory: 1 }, memories: 3, why: "untied, a layer per memory" },
  { preset: "tiny-llama2", dtype: "f32", kv: "f32", wasm: { maxMemoryBytes: 40 * MiB }, memories: 2, why: "split by bytes: the head alone" },
  // NOTE: sized to today's buffers (16 MiB headroom + about 2 MB for an f32 model, which needs no quantized-activation
  // buffers): the first test below says so if they change.
  { preset: "tiny-llama2", dtype: "f32", kv: "f32", wasm: { maxMemoryBytes: 35 * MiB }, memories: 3, why: "split by bytes: embedding, layers, head", maxSequences: 4 },
  { preset: "tiny-llama3", dtype: "f32", kv: "f32", wasm: { maxLayersPerMemory: 1 }, memories: 2, why: "RoPE factors in every memory" },
  { preset: "tiny-qwen3", dtype: "q8_0", kv: "f32", wasm: { maxLayersPerMemory: 1 }, memories: 2, why: "q/k norms" },
  { preset: "tiny-qwen2", dtype: "f32", kv: "f32", wasm: { maxLayersPerMemory: 1 }, memories: 2, why: "q/k/v biases" },
  { preset: "tiny-kquant", dtype: "q4_k_m", kv: "f16", wasm: { maxLayersPerMemory: 1 }, memories: 2, why: "K-quants on Q8_K activations" },
  // Every window layer's KV kept, so the chunks here need no local tables and section reuse re-rotates every layer
  // (proportional RoPE on the full ones); the shared-KV layers must stay with their source layers. per_layer_token_embd
  // takes no memory (read by rows from the file): the layers' KV for a context of 4096 (about 16 MB) is what keeps
  // them from fitting beside the head (tied embedding, 32 sequences' logits) in 128 MiB, by a wide margin either way.
  {
    preset: "tiny-gemma4", dtype: "f32", kv: "f32", wasm: { maxMemoryBytes: 128 * MiB }, memories: 2, keepWindowKv: true, contextSize: 4096,
    why: "per-layer inputs computed in the layers' memory, the tied embedding with the head",
  },
];

describe.each(cases)("$preset $dtype ($why) in $memories memories", ({ preset, dtype, kv, wasm, memories, maxSequences, keepWindowKv, contextSize }) => {
  let one: LoadedModel;
  let split: LoadedModel;
  beforeAll(async () => {
    const path = await ensureTestModel(preset, "gguf", dtype);
    const options: LoadOptions = { contextSize: contextSize ?? 256, threads: 2, maxSequences, kvCache: { bytes: 16 * MiB, dtype: kv, keepWindowKv } };
    one = await loadModel(path, options);
    split = await loadModel(path, { ...options, wasm });
  });
  afterAll(async () => {
    await one?.dispose();
    await split?.dispose();
  });

  it("is split as asked, with the KV capacity the budget asks for", () => {
    expect((one.runner as WasmModelRunner).memoryCount).toBe(1);
    expect((split.runner as WasmModelRunner).memoryCount).toBe(memories);
    expect(split.device).toContain(`${memories} memories`);
    // The budget limits both, unless memories forced small leave less room.
    if (wasm.maxMemoryBytes === undefined) expect(split.kvPool.capacity).toBe(one.kvPool.capacity);
    else expect(split.kvPool.capacity).toBeGreaterThanOrEqual((contextSize ?? 256) / 16);
  });

  it("computes bit-identical logits for a batch of prefill and decode chunks", () => {
    const chunks = (model: LoadedModel) => [
      { tokens: prompt(1, 37), startPosition: 0, blockTable: [0, 1, 2], wantLogits: true },
      { tokens: prompt(2, 5), startPosition: 0, blockTable: [3], wantLogits: true },
      { tokens: prompt(3, 9), startPosition: 0, blockTable: [4], wantLogits: false },
    ].map((chunk) => ({ ...chunk, blockTable: chunk.blockTable.map((block) => block + model.kvPool.capacity - 8) }));
    const expected = Float32Array.from(one.runner.forward(chunks(one)) as Float32Array);
    const actual = split.runner.forward(chunks(split)) as Float32Array;
    expect(actual.length).toBe(2 * one.config.vocab_size);
    expect(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(Buffer.from(expected.buffer))).toBe(true);
  });

  it("generates the same greedy tokens through loadModel and generate", async () => {
    for (const [seed, length] of [[7, 3], [8, 50]]) {
      expect(await greedyTokens(split, prompt(seed, length), 24)).toEqual(await greedyTokens(one, prompt(seed, length), 24));
    }
  });

  it("copies and re-rotates KV in every layer of every memory as one memory does", () => {
    const [a, b] = [one, split].map((model) => {
      const runner = model.runner as WasmModelRunner;
      const base = model.kvPool.capacity - 8; // blocks nobody else uses in these tests
      runner.forward([{ tokens: prompt(9, 40), startPosition: 0, blockTable: [base, base + 1, base + 2], wantLogits: false }]);
      const target = [base + 3, base + 4, base + 5];
      runner.copyKv([{ sourceBlocks: [base, base + 1, base + 2], sourceStart: 8, targetStart: 3, count: 24 }], target);
      return Array.from({ length: model.config.num_hidden_layers }, (_, layer) => runner.readKv(layer, target, 3, 24));
    });
    expect(a.length).toBeGreaterThan(1);
    a.forEach((layer, i) => {
      expect(b[i].k, `layer ${i} keys`).toEqual(layer.k);
      expect(b[i].v, `layer ${i} values`).toEqual(layer.v);
    });
  });

  it("gives the same tokens and reuse with prefix and section caching", async () => {
    const run = async (model: LoadedModel) => {
      const engine = new Engine(model);
      const greedy = (tokens: number[], maxTokens: number): EngineRequest => ({ input: { tokens }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true });
      const [A, B, C, D] = [prompt(21, 21), prompt(22, 13), prompt(23, 40), prompt(24, 6)];
      const results = [
        await finishOf(engine, greedy([...A, ...B, ...C], 4)),
        await finishOf(engine, greedy([...A, ...C, ...D], 8)), // section reuse: C's KV copied and re-rotated
        await finishOf(engine, greedy([...A, ...C, ...D, 500], 8)), // prefix reuse with a partial block copy
      ];
      engine.close();
      return results.map((result) => ({ tokens: result.tokens, usage: result.usage }));
    };
    const expected = await run(one);
    expect(expected[1].usage.reusedSuffixTokens).toBeGreaterThan(0);
    expect(await run(split)).toEqual(expected);
  });
});

describe("a model too large for the limits", () => {
  it("fails before loading, naming the part, the bytes it needs and the limit", async () => {
    const path = await ensureTestModel("tiny-llama2", "gguf", "f32");
    await expect(loadModel(path, { contextSize: 256, threads: 2, kvCache: { bytes: 16 * MiB }, wasm: { maxMemoryBytes: 32 * MiB } })).rejects.toThrow(
      /^the token embedding needs \d+ bytes \(.*\) in one memory, more than maxMemoryBytes, 33554432 bytes/,
    );
  });
});
