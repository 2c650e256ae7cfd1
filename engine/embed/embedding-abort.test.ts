// Aborting an embedding request mid-way, in process and across the engine thread (WorkerEngine): the request rejects
// naming the abort, its inputs stop computing at once (far fewer prompt tokens computed than it holds), no KV block
// stays held, and the next request runs to its end on the engine it freed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { Engine, type ServingEngine } from "../engine.js";
import { WorkerEngine } from "../host/worker-engine.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../load.js";
import type { EngineStats } from "../request.js";

/** A 32-token step: the batch below takes hundreds of steps, so an abort lands mid-way. */
const LOAD: LoadOptions = { contextSize: 256, threads: 1, batchSize: 32 };
/** 96 distinct inputs of about 60 tokens (mean pooling: every row computed, none taken from the cache). */
const BATCH = Array.from({ length: 96 }, (_, i) => `Input number ${i}: ${"a sentence of some words to embed, ".repeat(6)}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(engine: ServingEngine, done: (stats: EngineStats) => boolean): Promise<EngineStats> {
  for (let i = 0; i < 1000; i++) {
    const stats = await engine.stats();
    if (done(stats)) return stats;
    await sleep(2);
  }
  throw new Error("the engine never reached the state waited for");
}

/** Starts BATCH, aborts it once some of it is computed, and checks what the abort left. */
async function abortMidway(engine: ServingEngine, promptTokens: number): Promise<void> {
  const before = await engine.stats();
  const id = `abort-me-${Math.random().toString(36).slice(2)}`;
  const embedding = engine.embed!({ id, inputs: BATCH });
  const caught = embedding.catch((error: unknown) => error as Error);
  await until(engine, (stats) => stats.tokens.computedPrompt > before.tokens.computedPrompt);
  // A request in flight counts against the server's queue bound (maxQueue), as waiting generation requests do.
  expect(engine.queueDepth).toBeGreaterThan(0);
  expect(engine.abort(id)).toBe(true);
  const error = await caught;
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toContain("was aborted");
  const after = await until(engine, (stats) => stats.running === 0 && stats.waiting === 0);
  expect(after.kvBlocks.used).toBe(0);
  const computed = after.tokens.computedPrompt - before.tokens.computedPrompt;
  expect(computed).toBeGreaterThan(0);
  expect(computed).toBeLessThan(promptTokens / 2);
  // Nothing runs on after the abort.
  await sleep(50);
  expect((await engine.stats()).tokens.computedPrompt).toBe(after.tokens.computedPrompt);
  // The engine is free: the next request completes.
  const next = await engine.embed!({ inputs: BATCH.slice(0, 4) });
  expect(next.embeddings).toHaveLength(4);
  expect((await engine.stats()).kvBlocks.used).toBe(0);
  expect(engine.abort(id)).toBe(false);
}

describe("aborting an embedding request", () => {
  let path: string;
  let model: LoadedModel;
  let promptTokens: number;

  beforeAll(async () => {
    path = await ensureTestModel("tiny-qwen3-embedding-mean", "gguf", "f32");
    model = await loadModel(path, LOAD);
    promptTokens = BATCH.reduce((sum, text) => sum + model.tokenizer.encode(text, { addSpecial: true, parseSpecial: true }).length, 0);
  }, 120_000);
  afterAll(async () => {
    await model?.dispose();
  });

  it("in process: stops its inputs and frees their KV blocks", async () => {
    const engine = new Engine(model);
    try {
      await abortMidway(engine, promptTokens);
    } finally {
      engine.close();
    }
  }, 60_000);

  it("on the engine thread: WorkerEngine forwards the abort", async () => {
    const worker = await WorkerEngine.start(path, { load: LOAD });
    try {
      await abortMidway(worker, promptTokens);
    } finally {
      await worker.close();
    }
  }, 60_000);
});
