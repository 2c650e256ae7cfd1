// Log-probabilities and minTokens in the serving engine, on tiny Qwen3 (random weights, Qwen3's 151,936-token
// vocabulary) and stories260K (trained: it ends its stories): generated tokens' logprobs on text and finish events,
// prompt logprobs (chunked as one chunk, scoring with maxTokens 0, no prefix reuse), minTokens, and the checks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineEvent, EngineRequest, TokenLogprob } from "./request.js";
import { tokenLogprob } from "./sample/logprobs.js";
import { DEFAULT_MAX_LOGIT_ROWS } from "./sched/scheduler.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "./testing/fixtures.js";
import { TestSequences } from "./testing/sequence-kv.js";
import { deterministicTokens as prompt } from "./testing/seeded-random.js";

/** Every event of a request. */
async function eventsOf(engine: Engine, request: EngineRequest): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of engine.submit(request)) events.push(event);
  return events;
}

function finishIn(events: EngineEvent[]): Extract<EngineEvent, { type: "finish" }> {
  const finish = events.find((event) => event.type === "finish");
  if (!finish) throw (events.find((event) => event.type === "error") as { error?: Error } | undefined)?.error ?? new Error("no finish");
  return finish as Extract<EngineEvent, { type: "finish" }>;
}

function promptLogprobsIn(events: EngineEvent[]): (TokenLogprob | null)[] {
  const found = events.filter((event) => event.type === "prompt_logprobs");
  expect(found).toHaveLength(1);
  return (found[0] as Extract<EngineEvent, { type: "prompt_logprobs" }>).logprobs;
}

async function errorOf(engine: Engine, request: EngineRequest): Promise<{ field?: string; message: string }> {
  const events = await eventsOf(engine, request);
  const error = events.find((event) => event.type === "error");
  if (!error || error.type !== "error") throw new Error(`no error: ${JSON.stringify(events.map((event) => event.type))}`);
  return error.error;
}

/** The prompt's logprobs computed from one forward pass of all its rows (no engine, no chunking). */
function oneChunkPromptLogprobs(model: LoadedModel, tokens: number[], top: number): (TokenLogprob | null)[] {
  const kv = new TestSequences(model);
  try {
    const logits = model.runner.forward([{ tokens, startPosition: 0, ...kv.tables(kv.add(tokens.length)), wantLogits: true, allRowLogits: true }]) as Float32Array;
    const vocab = model.config.vocab_size;
    expect(logits.length).toBe(tokens.length * vocab);
    return tokens.map((token, i) => (i === 0 ? null : tokenLogprob(logits.subarray((i - 1) * vocab, i * vocab), token, top)));
  } finally {
    kv.releaseAll();
  }
}

function expectClose(actual: (TokenLogprob | null)[], expected: (TokenLogprob | null)[], tolerance: number): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((entry, i) => {
    if (expected[i] === null) return expect(entry, `position ${i}`).toBeNull();
    expect(entry!.token, `position ${i}`).toBe(expected[i]!.token);
    expect(Math.abs(entry!.logprob - expected[i]!.logprob), `position ${i}`).toBeLessThan(tolerance);
    expect(entry!.top.map((t) => t.token), `position ${i}`).toEqual(expected[i]!.top.map((t) => t.token));
  });
}

describe("logprobs on tiny-qwen3 f32", () => {
  let model: LoadedModel;
  // maxSequences 8: the runner's logits buffer holds 8 rows, so a chunk's 64 rows run through it in pages.
  beforeAll(async () => {
    model = await loadModel(await ensureTestModel("tiny-qwen3", "gguf", "f32"), { contextSize: 512, threads: 2, maxSequences: 8, batchSize: 256, kvCache: { bytes: 32 * 1024 * 1024 } });
  });
  afterAll(() => model?.dispose());

  it("reports each generated token's logprob and top tokens on text events, the same on finish; the greedy token is the top one", async () => {
    const engine = new Engine(model);
    const events = await eventsOf(engine, { input: { tokens: prompt(1, 12) }, maxTokens: 10, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, logprobs: { top: 3 } });
    const finish = finishIn(events);
    expect(finish.logprobs).toHaveLength(finish.tokens.length);
    const streamed = events.flatMap((event) => (event.type === "text" ? event.logprobs ?? [] : []));
    const streamedCount = events.reduce((sum, event) => sum + (event.type === "text" ? event.tokens ?? 0 : 0), 0);
    expect(streamed).toHaveLength(streamedCount);
    expect(streamed).toEqual(finish.logprobs!.slice(0, streamed.length));
    expect(streamed.length).toBe(finish.tokens.length); // the text is flushed at the finish
    finish.logprobs!.forEach((entry, i) => {
      expect(entry.token).toBe(finish.tokens[i]);
      expect(entry.top).toHaveLength(3);
      expect(entry.top[0].token).toBe(entry.token);
      expect(entry.top[0].logprob).toBe(entry.logprob);
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top[1].logprob).toBeLessThanOrEqual(entry.top[0].logprob);
      expect(entry.bytes).toEqual(Array.from(model.tokenizer.tokenBytes(entry.token)));
    });
    // The same tokens without logprobs (which would sample on a device): logprobs change nothing.
    const plain = finishIn(await eventsOf(engine, { input: { tokens: prompt(1, 12) }, maxTokens: 10, sampling: { temperature: 0 }, ignoreEndOfGeneration: true }));
    expect(plain.tokens).toEqual(finish.tokens);
    expect(plain.logprobs).toBeUndefined();
  });

  it("reports the raw distribution, not the sampled one: temperature and top-k do not change the logprobs", async () => {
    const engine = new Engine(model);
    const request = { input: { tokens: prompt(2, 9) }, maxTokens: 1, ignoreEndOfGeneration: true, logprobs: { top: 5 } };
    const greedy = finishIn(await eventsOf(engine, { ...request, sampling: { temperature: 0 } })).logprobs![0];
    const sampled = finishIn(await eventsOf(engine, { ...request, sampling: { temperature: 2.5, topK: 2, seed: 3 } })).logprobs![0];
    expect(sampled.top).toEqual(greedy.top);
    expect(greedy.top.slice(0, 2).map((t) => t.token)).toContain(sampled.token);
  });

  it("reports prompt logprobs (null first) after admitted and before any text, computed in chunks as in one pass", async () => {
    const engine = new Engine(model);
    const tokens = prompt(3, DEFAULT_MAX_LOGIT_ROWS * 2 + 22); // three chunks of logit rows
    const events = await eventsOf(engine, { input: { tokens }, maxTokens: 3, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, promptLogprobs: { top: 2 } });
    const order = events.map((event) => event.type);
    expect(order.indexOf("admitted")).toBeLessThan(order.indexOf("prompt_logprobs"));
    expect(order.indexOf("prompt_logprobs")).toBeLessThan(order.indexOf("text") === -1 ? order.indexOf("finish") : order.indexOf("text"));
    const entries = promptLogprobsIn(events);
    expect(entries).toHaveLength(tokens.length);
    expect(entries[0]).toBeNull();
    entries.slice(1).forEach((entry, i) => expect(entry!.token).toBe(tokens[i + 1]));
    expectClose(entries, oneChunkPromptLogprobs(model, tokens, 2), 1e-5);
    expect(finishIn(events).tokens).toHaveLength(3);
  });

  it("scores a prompt with maxTokens 0: prompt logprobs, no tokens, finish reason length; maxTokens 0 alone is refused", async () => {
    const engine = new Engine(model);
    const tokens = prompt(4, 20);
    const events = await eventsOf(engine, { input: { tokens }, maxTokens: 0, promptLogprobs: { top: 0 } });
    const entries = promptLogprobsIn(events);
    expect(entries).toHaveLength(20);
    expect(entries[1]!.top).toEqual([]);
    const finish = finishIn(events);
    expect(finish).toMatchObject({ reason: "length", tokens: [], usage: { promptTokens: 20, completionTokens: 0 } });
    expect(events.some((event) => event.type === "text" && event.text !== "")).toBe(false);
    expect(await errorOf(engine, { input: { tokens }, maxTokens: 0 })).toMatchObject({ field: "maxTokens" });
    // One token: its only entry is null.
    expect(promptLogprobsIn(await eventsOf(engine, { input: { tokens: [tokens[0]] }, maxTokens: 0, promptLogprobs: { top: 1 } }))).toEqual([null]);
  });

  it("computes the whole prompt for prompt logprobs (no prefix reuse) and still caches its blocks", async () => {
    const engine = new Engine(model);
    const tokens = prompt(5, 70);
    const first = await eventsOf(engine, { input: { tokens }, maxTokens: 1, sampling: { temperature: 0 } });
    expect(finishIn(first).usage.reusedPrefixTokens).toBe(0);
    const scored = await eventsOf(engine, { input: { tokens }, maxTokens: 0, promptLogprobs: { top: 1 } });
    expect(finishIn(scored).usage.reusedPrefixTokens).toBe(0);
    expectClose(promptLogprobsIn(scored), oneChunkPromptLogprobs(model, tokens, 1), 1e-5);
    const again = await eventsOf(engine, { input: { tokens }, maxTokens: 1, sampling: { temperature: 0 } });
    expect(finishIn(again).usage.reusedPrefixTokens).toBeGreaterThan(0);
  });

  it("serves prompt logprobs batched with other requests, each the same as alone", async () => {
    const engine = new Engine(model);
    const prompts = [prompt(6, 90), prompt(7, 40), prompt(8, 130)];
    const alone = prompts.map((tokens) => oneChunkPromptLogprobs(model, tokens, 2));
    const plain = finishIn(await eventsOf(new Engine(model), { input: { tokens: prompt(9, 30) }, maxTokens: 8, sampling: { temperature: 0 }, ignoreEndOfGeneration: true }));
    const [a, b, c, d] = await Promise.all([
      ...prompts.map((tokens) => eventsOf(engine, { input: { tokens }, maxTokens: 2, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, promptLogprobs: { top: 2 }, logprobs: { top: 1 } })),
      eventsOf(engine, { input: { tokens: prompt(9, 30) }, maxTokens: 8, sampling: { temperature: 0 }, ignoreEndOfGeneration: true }),
    ]);
    [a, b, c].forEach((events, i) => expectClose(promptLogprobsIn(events), alone[i], 1e-5));
    expect(finishIn(d).tokens).toEqual(plain.tokens);
  });

  it("writes logprob 0 and no alternatives for the thinking budget's forced close tag", async () => {
    const engine = new Engine(model);
    const text = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n";
    const finish = finishIn(await eventsOf(engine, {
      input: { text }, maxTokens: 12, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, thinkingBudget: { tokens: 3 }, logprobs: { top: 2 },
    }));
    expect(finish.logprobs).toHaveLength(finish.tokens.length);
    const forced = model.tokenizer.encode("\n</think>\n\n", { addSpecial: false, parseSpecial: true });
    expect(finish.tokens.slice(3, 3 + forced.length)).toEqual(forced);
    finish.logprobs!.slice(3, 3 + forced.length).forEach((entry) => expect(entry).toMatchObject({ logprob: 0, top: [] }));
    finish.logprobs!.slice(0, 3).forEach((entry) => expect(entry.top).toHaveLength(2));
  });

  it("never samples an end-of-generation token before minTokens, and reports the raw distribution there", async () => {
    // Random weights seldom pick a real end-of-generation token, so the model's tokenizer here names the greedy
    // run's fourth token as one (a GGUF's eos id is just such a declaration).
    const tokens = prompt(10, 10);
    const request: EngineRequest = { input: { tokens }, maxTokens: 12, sampling: { temperature: 0 }, logprobs: { top: 2 } };
    const reference = finishIn(await eventsOf(new Engine(model), request)).tokens;
    const end = reference.findIndex((token, i) => reference.indexOf(token) === i && i >= 3);
    const endToken = reference[end];
    const tokenizer = Object.create(model.tokenizer, { endOfGenerationIds: { value: new Set([endToken]) } }) as typeof model.tokenizer;
    const engine = new Engine({ ...model, tokenizer });
    const plain = finishIn(await eventsOf(engine, request));
    expect(plain).toMatchObject({ reason: "stop", tokens: reference.slice(0, end + 1) });
    const longer = finishIn(await eventsOf(engine, { ...request, minTokens: end + 3 }));
    expect(longer.tokens.length).toBeGreaterThanOrEqual(end + 3);
    expect(longer.tokens.slice(0, end)).toEqual(reference.slice(0, end));
    expect(longer.tokens.slice(0, end + 3)).not.toContain(endToken);
    expect(longer.logprobs![end].top[0].token).toBe(endToken); // the model's own preference, before the mask
    expect(longer.logprobs![end].top[1].token).toBe(longer.tokens[end]); // greedy took the best token left
  });

  it("keeps the end-of-generation token out of the text events, also when held-back text is flushed with it", async () => {
    const tokens = prompt(10, 10);
    const request: EngineRequest = { input: { tokens }, maxTokens: 12, sampling: { temperature: 0 }, logprobs: { top: 1 } };
    const reference = finishIn(await eventsOf(new Engine(model), request)).tokens;
    const end = reference.findIndex((token, i) => reference.indexOf(token) === i && i >= 3);
    const tokenizer = Object.create(model.tokenizer, { endOfGenerationIds: { value: new Set([reference[end]]) } }) as typeof model.tokenizer;
    const engine = new Engine({ ...model, tokenizer });
    // A stop string that starts with the text of the token before the end holds that text back until the end comes.
    const held = `${model.tokenizer.decode([reference[end - 1]!])}\u0001never`;
    const events = await eventsOf(engine, { ...request, stop: [held] });
    const finish = finishIn(events);
    expect(finish).toMatchObject({ reason: "stop", tokens: reference.slice(0, end + 1) });
    expect(finish.logprobs).toHaveLength(end + 1);
    const streamed = events.flatMap((event) => (event.type === "text" ? event.logprobs ?? [] : []));
    expect(streamed).toEqual(finish.logprobs!.slice(0, end));
    expect(events.reduce((sum, event) => sum + (event.type === "text" ? event.tokens ?? 0 : 0), 0)).toBe(end);
  });

  it("refuses bad logprobs, promptLogprobs and minTokens, naming the field", async () => {
    const engine = new Engine(model);
    const base: EngineRequest = { input: { tokens: [1, 2, 3] }, maxTokens: 4 };
    expect(await errorOf(engine, { ...base, logprobs: { top: 21 } })).toMatchObject({ field: "logprobs.top" });
    expect(await errorOf(engine, { ...base, logprobs: { top: -1 } })).toMatchObject({ field: "logprobs.top" });
    expect(await errorOf(engine, { ...base, promptLogprobs: { top: 2.5 } })).toMatchObject({ field: "promptLogprobs.top" });
    expect(await errorOf(engine, { ...base, minTokens: 5 })).toMatchObject({ field: "minTokens" });
    expect(await errorOf(engine, { ...base, minTokens: -1 })).toMatchObject({ field: "minTokens" });
    expect(await errorOf(engine, { ...base, minTokens: 1.5 })).toMatchObject({ field: "minTokens" });
    expect(finishIn(await eventsOf(engine, { ...base, minTokens: 4, ignoreEndOfGeneration: true })).tokens).toHaveLength(4);
  });
});

const stories = FIXTURES.stories260kGguf;
const storiesReason = missingFixtureReason(stories);

describe.skipIf(skipOutsideCi(storiesReason))(titled("minTokens and stop sequences on stories260K", storiesReason), () => {
  let model: LoadedModel;
  beforeAll(async () => {
    failIfMissing(storiesReason);
    model = await loadModel(stories, { contextSize: 512, threads: 2 });
  });
  afterAll(() => model?.dispose());

  /** A greedy story (stories260K never writes its end-of-generation token: a stop sequence ends it). */
  async function endedStory(engine: Engine, minTokens?: number, stop?: string[]) {
    const tokens = model.tokenizer.encode("Once upon a time", { addSpecial: true });
    return finishIn(await eventsOf(engine, { input: { tokens }, maxTokens: 400, sampling: { temperature: 0 }, logprobs: { top: 1 }, minTokens, stop }));
  }

  it("does not end on a stop sequence before minTokens", async () => {
    const engine = new Engine(model);
    const plain = await endedStory(engine, undefined, ["."]);
    expect(plain.stopSequence).toBe(".");
    const count = plain.tokens.length;
    const longer = await endedStory(engine, count + 3, ["."]);
    expect(longer.tokens.length).toBeGreaterThanOrEqual(count + 3);
    expect(longer.tokens.slice(0, count)).toEqual(plain.tokens);
  });
});
