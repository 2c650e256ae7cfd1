// Log-probabilities on WebGPU: a chunk's every-row logits (allRowLogits, more rows than the logits buffer holds, so the
// LM head runs in pages) equal the WebAssembly runner's, and the serving engine's prompt and generated logprobs equal
// WebAssembly's while another request in the same steps samples on the device. Runs on any adapter (lavapipe in CI);
// without one each test skips with the reason in its title, except under CI=true, where it fails.
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../../scripts/test-models.js";
import { gpuUnavailable } from "../../../kernels/webgpu/gpu.js";
import { Engine } from "../../engine.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../../load.js";
import type { EngineEvent, EngineRequest, TokenLogprob } from "../../request.js";
import { failIfMissing, skipOutsideCi, titled } from "../../testing/fixtures.js";
import { TestSequences } from "../../testing/sequence-kv.js";
import type { SequenceChunk } from "../runner.js";

const unavailable = await gpuUnavailable();

// maxSequences 8: the logits buffer holds 8 rows, so a 40-row chunk's logits come back in 5 pages of the LM head.
const LOAD: LoadOptions = { contextSize: 256, threads: 2, maxSequences: 8, batchSize: 128, kvCache: { bytes: 16 * 1024 * 1024 } };

/** Logits of one pass over two sequences: every row of the first (40 tokens), the last of the second. */
async function twoChunkLogits(model: LoadedModel): Promise<Float32Array> {
  const kv = new TestSequences(model);
  try {
    const first = Array.from({ length: 40 }, (_, i) => 300 + ((i * 53) % 900));
    const second = [1000, 1001, 1002, 1003, 1004];
    const chunks: SequenceChunk[] = [
      { tokens: first, startPosition: 0, ...kv.tables(kv.add(first.length)), wantLogits: true, allRowLogits: true },
      { tokens: second, startPosition: 0, ...kv.tables(kv.add(second.length)), wantLogits: true },
    ];
    return Float32Array.from(await model.runner.forward(chunks));
  } finally {
    kv.releaseAll();
  }
}

async function eventsOf(engine: Engine, request: EngineRequest): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of engine.submit(request)) events.push(event);
  return events;
}

/** Largest |a - b| over two lists of entries, token ids equal. */
function largestDiff(a: (TokenLogprob | null)[], b: (TokenLogprob | null)[]): number {
  expect(a.map((entry) => entry?.token)).toEqual(b.map((entry) => entry?.token));
  let max = 0;
  a.forEach((entry, i) => {
    if (!entry) return;
    max = Math.max(max, Math.abs(entry.logprob - b[i]!.logprob));
    entry.top.forEach((alternative, j) => (max = Math.max(max, Math.abs(alternative.logprob - b[i]!.top[j].logprob))));
  });
  return max;
}

describe("logprobs on WebGPU", () => {
  it.skipIf(skipOutsideCi(unavailable))(titled("allRowLogits on WebGPU equals WebAssembly's logits; engine logprobs equal too, beside device sampling", unavailable), async () => {
    failIfMissing(unavailable);
    const file = await ensureTestModel("tiny-qwen3", "gguf", "f32");
    const wasm = await loadModel(file, { ...LOAD, backend: "wasm" });
    const gpu = await loadModel(file, { ...LOAD, backend: "webgpu" });
    try {
      expect(gpu.backend).toBe("webgpu");
      const expected = await twoChunkLogits(wasm);
      const actual = await twoChunkLogits(gpu);
      expect(actual.length).toBe(41 * wasm.config.vocab_size);
      let max = 0;
      for (let i = 0; i < expected.length; i++) max = Math.max(max, Math.abs(actual[i] - expected[i]));
      expect(max).toBeLessThan(1e-3);

      const tokens = Array.from({ length: 100 }, (_, i) => 400 + ((i * 71) % 3000));
      const scored: EngineRequest = { input: { tokens }, maxTokens: 4, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, promptLogprobs: { top: 3 }, logprobs: { top: 3 } };
      const plain: EngineRequest = { input: { tokens: tokens.slice(0, 30) }, maxTokens: 6, sampling: { temperature: 0 }, ignoreEndOfGeneration: true };
      // Together: the plain request samples on the device in the steps that bring back the other's every-row logits.
      const run = (model: LoadedModel) => { const engine = new Engine(model); return Promise.all([eventsOf(engine, scored), eventsOf(engine, plain)]); };
      const [[wasmScored, wasmPlain], [gpuScored, gpuPlain]] = [await run(wasm), await run(gpu)];
      const promptOf = (events: EngineEvent[]) => (events.find((event) => event.type === "prompt_logprobs") as Extract<EngineEvent, { type: "prompt_logprobs" }>).logprobs;
      const finishOf = (events: EngineEvent[]) => events.find((event) => event.type === "finish") as Extract<EngineEvent, { type: "finish" }>;
      expect(promptOf(gpuScored)).toHaveLength(100);
      expect(largestDiff(promptOf(gpuScored), promptOf(wasmScored))).toBeLessThan(1e-3);
      expect(finishOf(gpuScored).tokens).toEqual(finishOf(wasmScored).tokens);
      expect(largestDiff(finishOf(gpuScored).logprobs!, finishOf(wasmScored).logprobs!)).toBeLessThan(1e-3);
      expect(finishOf(gpuPlain).tokens).toEqual(finishOf(wasmPlain).tokens);
    } finally {
      await wasm.dispose();
      await gpu.dispose();
    }
  }, 300_000);
});
