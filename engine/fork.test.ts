// Fork groups (EngineRequest.fork, OpenAI's `n`): the members of a group compute their prompt once and fork its KV
// (full blocks shared, the last partial block copied). Each member gives exactly the tokens of the same seeded request
// run alone (the forked KV equals the computed one), prefill is counted once, and an aborted, missing or preempted
// member never holds up or fails the others. On tiny Qwen3 (F32) and on tiny Gemma 3 with its sliding-window KV freed,
// on the WebAssembly backend.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { kvBlockBytes } from "./kv/budget.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineError, EngineEvent, EngineRequest } from "./request.js";
import { MAX_FORKS } from "./sched/fork-groups.js";
import { type Finish, finishOf } from "./testing/engine-tokens.js";
import { failIfMissing, skipOutsideCi, titled } from "./testing/fixtures.js";
import { deterministicTokens as prompt } from "./testing/seeded-random.js";

/** A seeded request at temperature 1 (every token a real draw). */
const seeded = (tokens: number[], seed: number, maxTokens = 12, extra: Partial<EngineRequest> = {}): EngineRequest => ({
  input: { tokens }, maxTokens, sampling: { temperature: 1, seed }, ignoreEndOfGeneration: true, ...extra,
});

/** The n members of one fork group, seeds seed + i. */
const members = (tokens: number[], n: number, group: string, seed = 100, maxTokens = 12) =>
  Array.from({ length: n }, (_, i) => seeded(tokens, seed + i, maxTokens, { id: `${group}-${i}`, fork: { group, size: n } }));

/** Each request's tokens when it runs alone on a fresh engine that computes the whole prompt. */
async function alone(model: LoadedModel, requests: EngineRequest[]): Promise<number[][]> {
  const engine = new Engine(model, { maxSequences: 1, cache: { prefixCaching: false } });
  const tokens: number[][] = [];
  for (const { fork: _, id: __, ...request } of requests) tokens.push((await finishOf(engine, request)).tokens);
  return tokens;
}

async function errorOf(engine: Engine, request: EngineRequest): Promise<EngineError> {
  for await (const event of engine.submit(request)) if (event.type === "error") return event.error;
  throw new Error("no error event");
}

const forkable = [
  { preset: "tiny-qwen3", dtype: "f32" },
  { preset: "tiny-llama", dtype: "f32" },
  { preset: "tiny-gemma3", dtype: "q8_0" }, // sliding-window layers with their KV freed (window 8, blocks of 16)
] as const;

describe.each(forkable)("fork groups on $preset $dtype", ({ preset, dtype }) => {
  const skip = testModelSkipReason(preset);
  let model: LoadedModel;
  beforeAll(async () => {
    if (skip) return;
    model = await loadModel(await ensureTestModel(preset, "gguf", dtype), { contextSize: 256, threads: 2, maxSequences: 8, kvCache: { bytes: 16 * 1024 * 1024 } });
  }, 120_000);
  afterAll(() => model?.dispose());

  // 48 tokens: the fork takes 47 positions (two full blocks shared, 15 copied); 37: two full blocks, 4 copied; 33: the
  // last prompt block holds one token, so the fork shares exactly two blocks and copies nothing.
  for (const length of [48, 37, 33]) {
    it.skipIf(skipOutsideCi(skip))(titled(`n = 4 of a ${length}-token prompt equal 4 seeded requests alone, prefill counted once`, skip), async () => {
      failIfMissing(skip);
      const tokens = prompt(length, length);
      const requests = members(tokens, 4, `g${length}`);
      const expected = await alone(model, requests);
      const engine = new Engine(model);
      const before = engine.stats().tokens;
      const results = await Promise.all(requests.map((request) => finishOf(engine, request)));
      results.forEach((result, i) => expect(result.tokens, `member ${i}`).toEqual(expected[i]));
      expect(new Set(results.map((result) => result.tokens.join())).size).toBeGreaterThan(1); // seeds differ: so do draws
      const after = engine.stats().tokens;
      // The leader computes the prompt; each other member computes only its last token, forking the rest.
      expect(after.computedPrompt - before.computedPrompt).toBe(length + 3);
      expect(after.forkedPrompt - before.forkedPrompt).toBe(3 * (length - 1));
      expect(results.map((result) => result.usage.reusedPrefixTokens)).toEqual([0, length - 1, length - 1, length - 1]);
      expect(results.every((result) => result.usage.promptTokens === length)).toBe(true);
      engine.close();
      expect(model.kvPool.freeCount).toBe(model.kvPool.capacity); // every shared and copied block went back
      if (model.localKv) expect(model.localKv.freeCount).toBe(model.localKv.capacity);
    });
  }

  it.skipIf(skipOutsideCi(skip))(titled("a leader with prompt logprobs computes every row and the others fork its prompt: one prefill", skip), async () => {
    failIfMissing(skip);
    const length = 37;
    const tokens = prompt(9, length);
    // Only the first member scores the prompt (as legacy completions' echo asks); it must lead, so it comes first.
    const requests = members(tokens, 3, "scored").map((request, i) => (i === 0 ? { ...request, promptLogprobs: { top: 2 } } : request));
    const expected = await alone(model, requests);
    const engine = new Engine(model);
    const scoredAlone = await (async () => {
      const single = new Engine(model, { cache: { prefixCaching: false } });
      try {
        for await (const event of single.submit({ input: { tokens }, maxTokens: 0, promptLogprobs: { top: 2 } })) if (event.type === "prompt_logprobs") return event.logprobs;
      } finally {
        single.close();
      }
      throw new Error("no prompt_logprobs");
    })();
    const before = engine.stats().tokens;
    const events = await Promise.all(requests.map(async (request) => {
      const seen: EngineEvent[] = [];
      for await (const event of engine.submit(request)) seen.push(event);
      return seen;
    }));
    events.forEach((seen, i) => {
      const finish = seen.find((event) => event.type === "finish");
      expect(finish?.type === "finish" && finish.tokens, `member ${i}`).toEqual(expected[i]);
      expect(seen.some((event) => event.type === "prompt_logprobs")).toBe(i === 0);
    });
    const scored = events[0]!.find((event) => event.type === "prompt_logprobs");
    expect(scored?.type === "prompt_logprobs" && scored.logprobs).toEqual(scoredAlone);
    const after = engine.stats().tokens;
    expect(after.computedPrompt - before.computedPrompt).toBe(length + 2);
    expect(after.forkedPrompt - before.forkedPrompt).toBe(2 * (length - 1));
    engine.close();
    expect(model.kvPool.freeCount).toBe(model.kvPool.capacity);
  });

  it.skipIf(skipOutsideCi(skip))(titled("greedy forks all give the same tokens, those of the request alone", skip), async () => {
    failIfMissing(skip);
    const tokens = prompt(5, 40);
    const requests = members(tokens, 3, "greedy").map((request) => ({ ...request, sampling: { temperature: 0 } }));
    const [expected] = await alone(model, requests.slice(0, 1));
    const engine = new Engine(model);
    const results = await Promise.all(requests.map((request) => finishOf(engine, request)));
    for (const result of results) expect(result.tokens).toEqual(expected);
    engine.close();
  });

  it.skipIf(skipOutsideCi(skip))(titled("a member aborted mid-way ends alone: the others finish with their tokens", skip), async () => {
    failIfMissing(skip);
    const tokens = prompt(6, 45);
    const requests = members(tokens, 4, "abort", 7, 24);
    const expected = await alone(model, requests);
    const engine = new Engine(model);
    const streams = requests.map((request) => engine.submit(request));
    const collect = async (index: number): Promise<Finish> => {
      let texts = 0;
      for await (const event of streams[index]) {
        if (event.type === "text" && index === 1 && ++texts === 2) engine.abort(streams[index].id);
        if (event.type === "error") throw event.error;
        if (event.type === "finish") return event;
      }
      throw new Error("no finish");
    };
    const results = await Promise.all([0, 1, 2, 3].map(collect));
    expect(results[1].reason).toBe("aborted");
    for (const i of [0, 2, 3]) expect(results[i].tokens, `member ${i}`).toEqual(expected[i]);
    engine.close();
    expect(model.kvPool.freeCount).toBe(model.kvPool.capacity);
  });

  it.skipIf(skipOutsideCi(skip))(titled("a leader aborted before its prompt is computed passes the lead on", skip), async () => {
    failIfMissing(skip);
    const tokens = prompt(8, 50);
    const requests = members(tokens, 3, "lead", 11);
    const expected = await alone(model, requests);
    const engine = new Engine(model);
    const streams = requests.map((request) => engine.submit(request));
    expect(engine.abort(streams[0].id)).toBe(true); // before any step ran
    const finishes = await Promise.all(streams.map(async (stream) => {
      let finish: EngineEvent | undefined;
      for await (const event of stream) if (event.type === "finish" || event.type === "error") finish = event;
      return finish as Finish;
    }));
    expect(finishes[0].reason).toBe("aborted");
    expect(finishes[1].tokens).toEqual(expected[1]);
    expect(finishes[2].tokens).toEqual(expected[2]);
    expect(engine.stats().tokens.forkedPrompt).toBe(tokens.length - 1); // member 2 forked from member 1
    engine.close();
  });

  it.skipIf(skipOutsideCi(skip))(titled("a group whose members never all arrive does not wait for them", skip), async () => {
    failIfMissing(skip);
    const tokens = prompt(9, 30);
    const requests = members(tokens, 5, "missing", 21).slice(0, 2);
    const expected = await alone(model, requests);
    const engine = new Engine(model);
    const results = await Promise.all(requests.map((request) => finishOf(engine, request)));
    results.forEach((result, i) => expect(result.tokens).toEqual(expected[i]));
    // A member arriving after the group ended starts a group of its own.
    const late = await finishOf(engine, members(tokens, 5, "missing", 21)[2]);
    expect(late.tokens).toEqual((await alone(model, [members(tokens, 5, "missing", 21)[2]]))[0]);
    engine.close();
  });
});

describe("fork groups under KV pressure and validation", () => {
  const preset = "tiny-qwen3";
  let model: LoadedModel;
  beforeAll(async () => {
    model = await loadModel(await ensureTestModel(preset, "gguf", "f32"), { contextSize: 256, threads: 2, maxSequences: 8, kvCache: { bytes: 16 * 1024 * 1024 } });
  }, 120_000);
  afterAll(() => model?.dispose());

  it("members preempted for KV recompute and still give their tokens", async () => {
    const { num_hidden_layers: layers, num_key_value_heads: kvHeads, head_dim: headDim } = model.config;
    const blockBytes = kvBlockBytes(layers, kvHeads * headDim, model.kvPool.blockSize, "f32");
    const small = await loadModel(await ensureTestModel(preset, "gguf", "f32"), { contextSize: 128, threads: 2, kvCache: { bytes: 10 * blockBytes } });
    try {
      expect(small.kvPool.capacity).toBe(10);
      const tokens = prompt(12, 40); // 3 blocks shared; each member grows to 4 blocks of its own by the end
      const requests = members(tokens, 4, "pressure", 31, 40);
      const expected = await alone(small, requests);
      const engine = new Engine(small);
      const results = await Promise.all(requests.map((request) => finishOf(engine, request)));
      results.forEach((result, i) => expect(result.tokens, `member ${i}`).toEqual(expected[i]));
      expect(engine.stats().requests.preemptions).toBeGreaterThan(0);
      engine.close();
      expect(small.kvPool.freeCount).toBe(10);
    } finally {
      await small.dispose();
    }
  });

  it("refuses a bad fork naming fork.size or fork.group", async () => {
    const engine = new Engine(model);
    const tokens = prompt(13, 10);
    for (const size of [1, MAX_FORKS + 1, 2.5, "4"]) {
      expect((await errorOf(engine, seeded(tokens, 1, 4, { fork: { group: "g", size: size as number } }))).field).toBe("fork.size");
    }
    expect((await errorOf(engine, seeded(tokens, 1, 4, { fork: { group: "", size: 2 } }))).field).toBe("fork.group");
    expect((await errorOf(engine, seeded(tokens, 1, 4, { fork: 3 as never }))).field).toBe("fork");
    // Within a live group: another prompt, another size, one member too many.
    const first = engine.submit(seeded(tokens, 1, 40, { fork: { group: "live", size: 2 } }));
    const otherPrompt = await errorOf(engine, seeded(prompt(14, 10), 2, 4, { fork: { group: "live", size: 2 } }));
    expect(otherPrompt.field).toBe("fork.group");
    expect(otherPrompt.message).toMatch(/same prompt/);
    expect((await errorOf(engine, seeded(tokens, 2, 4, { fork: { group: "live", size: 3 } }))).field).toBe("fork.size");
    const second = engine.submit(seeded(tokens, 2, 4, { fork: { group: "live", size: 2 } }));
    expect((await errorOf(engine, seeded(tokens, 3, 4, { fork: { group: "live", size: 2 } }))).field).toBe("fork.group");
    for (const stream of [first, second]) for await (const event of stream) if (event.type === "error") throw event.error;
    engine.close();
  });
});
