// The serving engine end to end on small random-weight models (stories260K, real weights, where a wrong prefix match
// must change what is written): batch invariance, prefix and section reuse, preemption, aborts, errors and stats.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import type { WasmModelRunner } from "./backends/wasm/model-runner.js";
import { Engine, type EngineOptions } from "./engine.js";
import { kvBlockBytes } from "./kv/budget.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineEvent, EngineRequest } from "./request.js";
import { type Finish, finishOf } from "./testing/engine-tokens.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "./testing/fixtures.js";
import { deterministicTokens as prompt } from "./testing/seeded-random.js";

const greedy = (tokens: number[], maxTokens = 16, extra: Partial<EngineRequest> = {}): EngineRequest => ({
  input: { tokens }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, ...extra,
});

const variants = [
  { preset: "tiny-llama", dtype: "f32", kv: "f32" },
  { preset: "tiny-llama", dtype: "q8_0", kv: "f32" },
  { preset: "tiny-llama", dtype: "f32", kv: "f16" },
  { preset: "tiny-llama3", dtype: "f32", kv: "f32" }, // RoPE frequency factors
  { preset: "tiny-qwen3", dtype: "q8_0", kv: "f32" }, // k norm before RoPE
] as const;

describe.each(variants)("Engine on $preset $dtype with $kv KV", ({ preset, dtype, kv }) => {
  let model: LoadedModel;
  beforeAll(async () => {
    model = await loadModel(await ensureTestModel(preset, "gguf", dtype), { contextSize: 512, threads: 2, kvCache: { bytes: 64 * 1024 * 1024, dtype: kv } });
  });
  afterAll(() => model?.dispose());

  const engineWith = (options: EngineOptions = {}) => new Engine(model, options);

  it("gives every request the same greedy tokens alone as in a batch of 32", async () => {
    const prompts = Array.from({ length: 32 }, (_, i) => prompt(i + 1, 3 + ((i * 7) % 60)));
    const alone = engineWith({ maxSequences: 1, cache: { prefixCaching: false } });
    const expected: number[][] = [];
    for (const p of prompts) expected.push((await finishOf(alone, greedy(p, 12))).tokens);
    const batched = engineWith({ maxSequences: 32, cache: { prefixCaching: false } });
    const results = await Promise.all(prompts.map((p) => finishOf(batched, greedy(p, 12))));
    results.forEach((result, i) => expect(result.tokens, `prompt ${i}`).toEqual(expected[i]));
  });

  it("gives identical outputs with the prefix cache on and off, and reports reused tokens", async () => {
    const system = prompt(99, 70);
    const requests = [0, 1, 2, 3].map((i) => [...system, ...prompt(200 + i, 5 + i)]);
    const off = engineWith({ cache: { prefixCaching: false } });
    const on = engineWith();
    for (const tokens of requests) {
      const a = await finishOf(off, greedy(tokens));
      const b = await finishOf(on, greedy(tokens));
      expect(b.tokens).toEqual(a.tokens);
      expect(a.usage.reusedPrefixTokens).toBe(0);
    }
    const repeat = await finishOf(on, greedy(requests[1]));
    expect(repeat.usage).toMatchObject({ promptTokens: requests[1].length, reusedPrefixTokens: requests[1].length - 1, reusedSuffixTokens: 0 });
    expect(on.stats().cache.prefixHitRate).toBeGreaterThan(0.5);
    const free = model.kvPool.freeCount;
    expect(on.stats().kvBlocks.cached).toBeGreaterThan(0);
    on.close();
    expect(model.kvPool.freeCount).toBeGreaterThan(free); // its cached blocks went back to the pool
  });

  it("reuses a section after one pruned span and reports prefix and suffix tokens separately", async () => {
    const A = prompt(1, 21);
    const B = prompt(2, 13);
    const C = prompt(3, 40);
    const D = prompt(4, 6);
    const engine = engineWith();
    await finishOf(engine, greedy([...A, ...B, ...C], 2));
    const hit = await finishOf(engine, greedy([...A, ...C, ...D], 4));
    expect(hit.usage).toMatchObject({ promptTokens: 67, reusedPrefixTokens: 21, reusedSuffixTokens: 30 }); // C's cached part: full blocks only
    // Two pruned spans: prefix only.
    await finishOf(engine, greedy([...A, ...B, ...C.slice(0, 15), ...D, ...C.slice(15)], 2));
    const two = await finishOf(engine, greedy([...A, ...C.slice(0, 15), ...C.slice(15, 30), ...prompt(5, 3)], 2));
    expect(two.usage.reusedSuffixTokens).toBe(0);
    expect(two.usage.reusedPrefixTokens).toBeGreaterThanOrEqual(21);
    expect(engine.stats().cache.sectionHitRate).toBeGreaterThan(0);
  });

  it("relocates keys exactly: first-layer keys of a reused section equal keys computed at the new positions", async () => {
    const A = prompt(11, 18);
    const B = prompt(12, 9);
    const C = prompt(13, 40);
    const engine = engineWith();
    await finishOf(engine, greedy([...A, ...B, ...C], 1));
    // Hold the relocated request open: its blocks then still hold the relocated KV.
    const stream = engine.submit(greedy([...A, ...C, 5000], 50));
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next(); // start
    await iterator.next(); // first text: admitted and computed
    const relocated = runningBlocks(engine, stream.id);
    const moved = (model.runner as WasmModelRunner).readKv(0, relocated, A.length, C.length);
    engine.abort(stream.id);
    // The same tokens computed directly at those positions, without any cache.
    const direct = engineWith({ cache: { prefixCaching: false } });
    const fresh = direct.submit(greedy([...A, ...C, 5000], 50));
    const freshIterator = fresh[Symbol.asyncIterator]();
    await freshIterator.next();
    await freshIterator.next();
    const computed = (model.runner as WasmModelRunner).readKv(0, runningBlocks(direct, fresh.id), A.length, C.length);
    direct.abort(fresh.id);
    // Layer-0 keys depend only on token and position; values too, so those must match exactly.
    expect(maxAbsDiff(moved.v, computed.v)).toBe(0);
    // Keys are rotated in f32; an f16 cache rounds them again on the way back.
    expect(maxAbsDiff(moved.k, computed.k)).toBeLessThan(kv === "f16" ? 1e-2 : 1e-4);
  });

  it("preempts under a small KV budget and still produces the same greedy tokens", async () => {
    const { num_hidden_layers: layers, num_key_value_heads: kvHeads, head_dim: headDim } = model.config;
    const blockBytes = kvBlockBytes(layers, kvHeads * headDim, model.kvPool.blockSize, kv);
    const small = await loadModel(await ensureTestModel(preset, "gguf", dtype), { contextSize: 128, threads: 2, kvCache: { bytes: 12 * blockBytes, dtype: kv } });
    try {
      expect(small.kvPool.capacity).toBe(12);
      const prompts = [0, 1, 2, 3, 4, 5].map((i) => prompt(40 + i, 30 + i));
      const alone = new Engine(small, { maxSequences: 1, cache: { prefixCaching: false } });
      const expected: number[][] = [];
      for (const p of prompts) expected.push((await finishOf(alone, greedy(p, 20))).tokens);
      const engine = new Engine(small, { cache: { prefixCaching: false } });
      const results = await Promise.all(prompts.map((p) => finishOf(engine, greedy(p, 20))));
      results.forEach((r, i) => expect(r.tokens, `prompt ${i}`).toEqual(expected[i]));
      expect(engine.stats().requests.preemptions).toBeGreaterThan(0);
      expect(small.kvPool.freeCount).toBe(12);
    } finally {
      await small.dispose();
    }
  });

  it("frees an aborted request's blocks at once, whether waiting or running", async () => {
    const engine = engineWith({ cache: { prefixCaching: false } });
    const before = model.kvPool.freeCount;
    const stream = engine.submit(greedy(prompt(7, 40), 400));
    const events: EngineEvent[] = [];
    let aborted = false;
    for await (const event of stream) {
      events.push(event);
      if (event.type === "text" && events.length > 3 && !aborted) {
        aborted = true;
        expect(model.kvPool.freeCount).toBeLessThan(before);
        expect(engine.abort(stream.id)).toBe(true);
        expect(model.kvPool.freeCount).toBe(before);
      }
    }
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "aborted" });
    expect(engine.abort(stream.id)).toBe(false);
    // Leaving the loop early aborts too.
    const second = engine.submit(greedy(prompt(8, 10), 400));
    for await (const event of second) if (event.type === "text") break;
    expect(engine.stats()).toMatchObject({ running: 0, waiting: 0 });
    expect(model.kvPool.freeCount).toBe(before);
  });

  it("fails bad and impossible requests at once with an error naming the field", async () => {
    const engine = engineWith();
    const errorOf = async (request: EngineRequest) => {
      const events: EngineEvent[] = [];
      for await (const event of engine.submit(request)) events.push(event);
      expect(events).toHaveLength(1);
      const [event] = events;
      if (event.type !== "error") throw new Error(`expected an error, got ${event.type}`);
      return event.error;
    };
    expect(await errorOf(greedy(prompt(1, 600)))).toMatchObject({ kind: "too_long", field: "input" });
    expect(await errorOf(greedy([]))).toMatchObject({ kind: "invalid_request", field: "input" });
    expect(await errorOf(greedy([1, 2, 99999999]))).toMatchObject({ kind: "invalid_request", field: "input.tokens" });
    expect(await errorOf({ ...greedy([1, 2]), sampling: { topP: 3 } })).toMatchObject({ kind: "invalid_request", field: "sampling.topP" });
    expect(await errorOf({ ...greedy([1, 2]), maxTokens: 0 })).toMatchObject({ field: "maxTokens" });
    expect(await errorOf({ ...greedy([1, 2]), stop: [""] })).toMatchObject({ field: "stop[0]" });
    expect(await errorOf({ ...greedy([1, 2]), priority: 1.5 })).toMatchObject({ field: "priority" });
    expect(await errorOf({ input: { messages: [] } })).toMatchObject({ field: "input.messages" });
  });

  it("streams text and usage for a chat conversation", async () => {
    const engine = engineWith();
    const events: EngineEvent[] = [];
    for await (const event of engine.submit({ input: { messages: [{ role: "user", content: "Hello there" }] }, maxTokens: 5, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) events.push(event);
    expect(events[0]).toMatchObject({ type: "start" });
    // A fresh engine has nothing cached: nothing is reused.
    expect(events[1]).toMatchObject({ type: "admitted", reusedPrefixTokens: 0, reusedSuffixTokens: 0 });
    const finish = events.at(-1) as Finish;
    expect(finish).toMatchObject({ type: "finish", reason: "length", usage: { completionTokens: 5 } });
    expect(finish.usage.promptTokens).toBe((events[0] as { promptTokens: number }).promptTokens);
  });
});

describe("Engine thinking budget", () => {
  it("closes the reasoning itself once the budget is spent, and the answer follows", async () => {
    const model = await loadModel(await ensureTestModel("tiny-qwen3", "gguf", "q8_0"), { contextSize: 256, threads: 2, kvCache: { bytes: 8 * 1024 * 1024 } });
    try {
      const engine = new Engine(model);
      const run = async (budget: number) => {
        let text = "";
        let tokens = 0;
        let finish: Finish | undefined;
        const request: EngineRequest = { input: { text: "Why is the sky blue?<think>\n" }, maxTokens: 20, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, thinkingBudget: { tokens: budget } };
        for await (const event of engine.submit(request)) {
          if (event.type === "text") {
            text += event.text;
            tokens += event.tokens!;
          }
          if (event.type === "finish") finish = event;
        }
        // The text events account for every generated token, the forced ones included.
        expect(tokens).toBe(finish!.usage.completionTokens);
        return { text, finish: finish! };
      };
      const capped = await run(5);
      const closeAt = capped.finish.tokens.indexOf(model.tokenizer.encode("</think>", { addSpecial: false, parseSpecial: true })[0]);
      expect(closeAt).toBeGreaterThanOrEqual(5);
      expect(closeAt).toBeLessThanOrEqual(6); // five reasoning tokens, then the forced "\n</think>\n\n"
      expect(capped.text).toContain("</think>");
      expect(capped.finish.usage.completionTokens).toBe(20);
      const free = await run(100);
      expect(free.text).not.toContain("</think>");
      engine.close();
    } finally {
      await model.dispose();
    }
  });
});

describe("Engine auto compaction", () => {
  let model: LoadedModel;
  beforeAll(async () => {
    model = await loadModel(await ensureTestModel("tiny-llama", "gguf", "q8_0"), { contextSize: 1024, threads: 2, kvCache: { bytes: 32 * 1024 * 1024 } });
  });
  afterAll(() => model?.dispose());

  const toolTurn = (i: number) => [
    { role: "assistant" as const, content: "", tool_calls: [{ id: `call${i}`, type: "function" as const, function: { name: "search", arguments: `{"q":"step ${i}"}` } }] },
    { role: "tool" as const, tool_call_id: `call${i}`, content: `Result ${i}:\n${"lorem ipsum dolor sit amet ".repeat(12)}\nend of result ${i}.` },
  ];
  const conversation = [
    { role: "system" as const, content: "You are a careful research agent." },
    { role: "user" as const, content: "Find the answer in four steps." },
    ...[1, 2, 3, 4].flatMap(toolTurn),
    { role: "assistant" as const, content: "Done searching.", reasoning_content: "I have enough now." },
    { role: "user" as const, content: "Summarise." },
  ];

  it("prunes old tool results by default, reports them, and is off per request", async () => {
    const engine = new Engine(model);
    const started = async (request: EngineRequest) => {
      for await (const event of engine.submit(request)) if (event.type === "start") return event;
      throw new Error("no start event");
    };
    const on = await started({ input: { messages: conversation }, maxTokens: 1 });
    const off = await started({ input: { messages: conversation }, maxTokens: 1, enableAutoCompaction: false });
    expect(off.compaction).toBeUndefined();
    const toolParts = on.compaction!.pruned.filter((part) => part.kind === "tool_result");
    expect(toolParts.flatMap((part) => part.messageIndices)).toEqual([3, 5]);
    expect(on.compaction!.tokensSaved).toBeGreaterThan(0);
    expect(on.promptTokens).toBe(off.promptTokens - on.compaction!.tokensSaved);
  });

  it("drops the oldest middle turns when over the working-memory budget", async () => {
    const engine = new Engine(model, { compaction: { workingMemoryTokens: 300 } });
    const events: EngineEvent[] = [];
    for await (const event of engine.submit({ input: { messages: conversation }, maxTokens: 1 })) events.push(event);
    const start = events[0];
    if (start?.type !== "start") throw new Error(`expected a start event first, got ${JSON.stringify(start)}`);
    expect(start.compaction!.pruned.some((part) => part.kind === "turns")).toBe(true);
    expect(start.compaction!.overBudget).toBe(false);
    expect(start.promptTokens).toBeLessThanOrEqual(300);
    expect(events.at(-1)).toMatchObject({ type: "finish", usage: { promptTokens: start.promptTokens, completionTokens: 1 } });
  });
});

const storiesReason = missingFixtureReason(FIXTURES.stories260kGguf);

describe.skipIf(skipOutsideCi(storiesReason))(titled("Engine prefix cache on stories260K (real weights)", storiesReason), () => {
  let model: LoadedModel;
  beforeAll(async () => {
    failIfMissing(storiesReason);
    model = await loadModel(FIXTURES.stories260kGguf, { contextSize: 256, threads: 2, kvCache: { bytes: 16 * 1024 * 1024 } });
  });
  afterAll(() => model?.dispose());

  it("gives identical outputs with the cache on and off for prompts that differ from a cached one only at the first or last token of a block", async () => {
    const blockSize = model.kvPool.blockSize;
    const text = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. One day, she saw a big red ball under a tree.";
    // Three full blocks and a few tokens more.
    const base = model.tokenizer.encode(text).slice(0, 3 * blockSize + 3);
    expect(base).toHaveLength(3 * blockSize + 3);
    // A token the base prompt does not hold: no later section of it can match from there either.
    const stranger = Array.from({ length: 500 }, (_, i) => i + 10).find((token) => !base.includes(token))!;
    const off = new Engine(model, { cache: { prefixCaching: false } });
    const baseTokens = (await finishOf(off, greedy(base, 12))).tokens;
    let differentOutputs = 0;
    for (const depth of [0, 1, 2]) {
      for (const position of [0, blockSize - 1]) {
        const where = `token ${position} of block ${depth}`;
        const other = [...base];
        other[depth * blockSize + position] = stranger;
        const on = new Engine(model);
        await finishOf(on, greedy(base, 12)); // caches the base prompt's blocks
        const cached = await finishOf(on, greedy(other, 12));
        const fresh = await finishOf(off, greedy(other, 12));
        expect(cached.tokens, where).toEqual(fresh.tokens);
        // Reused: the tokens before the one that differs, not one more.
        expect(cached.usage, where).toMatchObject({ reusedPrefixTokens: depth * blockSize + position, reusedSuffixTokens: 0 });
        if (fresh.tokens.join() !== baseTokens.join()) differentOutputs++;
        on.close();
      }
    }
    // The one changed token changes what the model writes for most of them: KV from the base prompt would show.
    expect(differentOutputs).toBeGreaterThanOrEqual(3);
    off.close();
  });
});

/** The block table of a running request (test access to engine internals). */
function runningBlocks(engine: Engine, id: string): number[] {
  const requests = (engine as unknown as { requests: Map<string, { kv: { blocks: number[] } }> }).requests;
  const request = requests.get(id);
  if (!request) throw new Error(`request ${id} is not running`);
  return [...request.kv.blocks];
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}
