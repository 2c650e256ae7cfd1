// The engine on its own thread: the same events as the in-process engine, aborts, errors that keep their kind and
// field across the thread boundary, load failures, and recovery when the thread dies mid-request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { Engine, type ServingEngine } from "../engine.js";
import { type LoadOptions, type LoadedModel, loadModel } from "../load.js";
import { EngineError, type EngineEvent, type EngineRequest } from "../request.js";
import { WorkerEngine } from "./worker-engine.js";

const LOAD: LoadOptions = { contextSize: 256, threads: 2, kvCache: { bytes: 8 * 1024 * 1024 } };

const greedy = (text: string, maxTokens = 12): EngineRequest => ({
  input: { text }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
});

async function eventsOf(engine: ServingEngine, request: EngineRequest): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of engine.submit(request)) events.push(event);
  return events;
}

/** What must agree between the two engines (timings and request ids differ). */
function comparable(events: EngineEvent[]) {
  return events.map((event) => {
    if (event.type === "finish") return { type: event.type, reason: event.reason, tokens: event.tokens, usage: event.usage };
    if (event.type === "text") return { type: event.type, text: event.text };
    return { type: event.type };
  });
}

async function idle(engine: WorkerEngine): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const stats = await engine.stats();
    if (stats.running === 0 && stats.waiting === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the engine did not become idle");
}

describe("WorkerEngine", () => {
  let path: string;
  let worker: WorkerEngine;
  let model: LoadedModel;

  beforeAll(async () => {
    path = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    worker = await WorkerEngine.start(path, { load: LOAD });
    model = await loadModel(path, LOAD);
  });

  afterAll(async () => {
    await worker?.close();
    await model?.dispose();
  });

  it("describes the model it loaded", () => {
    expect(worker.model).toMatchObject({ path, architecture: model.config.architecture, contextSize: 256, vocabSize: model.config.vocab_size });
  });

  it("streams the same events as the engine in process, concurrent requests included", async () => {
    const inProcess = new Engine(model);
    try {
      const requests = ["Once upon a time", "The cat sat", "In a galaxy far away there was"].map((text) => greedy(text));
      const expected = await Promise.all(requests.map((request) => eventsOf(inProcess, request)));
      const got = await Promise.all(requests.map((request) => eventsOf(worker, request)));
      expect(got.map(comparable)).toEqual(expected.map(comparable));
      expect(got[0].at(-1)).toMatchObject({ type: "finish", reason: "length" });
    } finally {
      inProcess.close();
    }
  });

  it("carries logprobs across the thread: prompt_logprobs, and text and finish logprobs, as in process", async () => {
    const inProcess = new Engine(model);
    try {
      const request: EngineRequest = { ...greedy("Once upon a time there was", 6), logprobs: { top: 3 }, promptLogprobs: { top: 2 }, minTokens: 2 };
      const expected = await eventsOf(inProcess, request);
      const got = await eventsOf(worker, request);
      const logprobsOf = (events: EngineEvent[]) => events.flatMap((event) => {
        if (event.type === "prompt_logprobs" || event.type === "finish") return [{ type: event.type, logprobs: event.logprobs }];
        if (event.type === "text") return [{ type: event.type, text: event.text, tokens: event.tokens, logprobs: event.logprobs }];
        return [];
      });
      // The worker runs the built engine (dist/), whose float64 arithmetic may differ in the last bits from this source's.
      const values: number[][] = [[], []];
      const withoutValues = (events: EngineEvent[], into: number[]) => JSON.parse(JSON.stringify(logprobsOf(events), (key, value) => (key === "logprob" ? (into.push(value), 0) : value)));
      expect(withoutValues(got, values[0])).toEqual(withoutValues(expected, values[1]));
      expect(values[0].length).toBeGreaterThan(20);
      values[0].forEach((value, i) => expect(value).toBeCloseTo(values[1][i], 9));
      expect(got.find((event) => event.type === "prompt_logprobs")).toBeDefined();
      expect((got.find((event) => event.type === "finish") as Extract<EngineEvent, { type: "finish" }>).logprobs).toHaveLength(6);
      // Scoring only: maxTokens 0 crosses too.
      const scored = await eventsOf(worker, { input: { text: "The cat sat" }, maxTokens: 0, promptLogprobs: { top: 0 } });
      expect(scored.at(-1)).toMatchObject({ type: "finish", reason: "length", tokens: [] });
    } finally {
      inProcess.close();
    }
  });

  it("prepares conversations on its prompt thread with the engine's own tokens, compaction and errors", async () => {
    const inProcess = new Engine(model);
    // Past the 256-token context: auto compaction drops middle turns, the same ones on either thread.
    const turns = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 === 0 ? "user" as const : "assistant" as const, content: `turn ${i} of a long talk about cats and dogs` }));
    const conversation: EngineRequest = { input: { messages: [...turns, { role: "user", content: "And then?" }] }, maxTokens: 8, sampling: { temperature: 0 }, ignoreEndOfGeneration: true };
    const short: EngineRequest = { input: { messages: [{ role: "user", content: "Once upon a time" }] }, maxTokens: 8, sampling: { temperature: 0 } };
    const badRole = { input: { messages: [{ role: "narrator", content: "hi" }] } } as unknown as EngineRequest;
    const tooLong: EngineRequest = { input: { messages: [{ role: "user", content: "word ".repeat(400) }] }, enableAutoCompaction: false };
    const startOf = (events: EngineEvent[]) => {
      const { requestId: _, ...start } = events.find((event) => event.type === "start") as Extract<EngineEvent, { type: "start" }>;
      return start;
    };
    try {
      for (const request of [conversation, short]) {
        const expected = await eventsOf(inProcess, request);
        const got = await eventsOf(worker, request);
        expect(comparable(got)).toEqual(comparable(expected));
        expect(startOf(got)).toEqual(startOf(expected));
        expect(await worker.countTokens(request)).toBe(inProcess.countTokens(request));
      }
      expect(startOf(await eventsOf(worker, conversation)).compaction?.pruned.length).toBeGreaterThan(0);
      for (const request of [badRole, tooLong]) {
        const expected = (await eventsOf(inProcess, request)).at(-1) as Extract<EngineEvent, { type: "error" }>;
        const got = (await eventsOf(worker, request)).at(-1) as Extract<EngineEvent, { type: "error" }>;
        expect(got.type).toBe("error");
        expect({ kind: got.error.kind, field: got.error.field, message: got.error.message }).toEqual({ kind: expected.error.kind, field: expected.error.field, message: expected.error.message });
        await expect(worker.countTokens(request)).rejects.toMatchObject({ kind: expected.error.kind, field: expected.error.field });
      }
    } finally {
      inProcess.close();
    }
  });

  it("prepareAhead(): submit runs the prompt it gave as given, without preparing it again; any other prompt is prepared again", async () => {
    const inProcess = new Engine(model);
    const request: EngineRequest = { input: { messages: [{ role: "user", content: "A prompt prepared ahead of its submit" }] }, maxTokens: 8, sampling: { temperature: 0 }, ignoreEndOfGeneration: true };
    const other: EngineRequest = { ...request, input: { messages: [{ role: "user", content: "A much longer opening line, about a cat who kept a lighthouse by the sea" }] } };
    const promptTokensOf = async (stream: AsyncIterable<EngineEvent>) => {
      let promptTokens: number | undefined;
      for await (const event of stream) if (event.type === "finish") promptTokens = event.usage.promptTokens;
      return promptTokens;
    };
    try {
      const prepared = (await worker.prepareAhead(request))!;
      expect(prepared.tokens).toHaveLength(await worker.countTokens(request));
      const expected = await eventsOf(inProcess, request);
      const events: EngineEvent[] = [];
      for await (const event of worker.submit(request, prepared)) events.push(event);
      // (The worker's prefix cache may hold the template's opening from the tests before: reuse apart.)
      const reuseApart = (list: EngineEvent[]) => comparable(list).map((event) => ("usage" in event ? { ...event, usage: { ...event.usage, reusedPrefixTokens: 0 } } : event));
      expect(reuseApart(events)).toEqual(reuseApart(expected));
      // Taken as it is: submitted with another input, the request runs the prompt it was handed.
      const otherTokens = await worker.countTokens(other);
      expect(otherTokens).not.toBe(prepared.tokens.length);
      expect(await promptTokensOf(worker.submit(other, prepared))).toBe(prepared.tokens.length);
      // A prompt prepareAhead() did not give (a copy) is ignored: the request's own prompt is prepared.
      expect(await promptTokensOf(worker.submit(other, structuredClone(prepared)))).toBe(otherTokens);
      await expect(worker.prepareAhead({ input: { messages: [{ role: "user", content: "word ".repeat(400) }] }, enableAutoCompaction: false })).rejects.toMatchObject({ kind: "too_long", field: "input" });
      expect(await worker.prepareAhead({ input: { tokens: [1, 2, 3] } })).toBeUndefined();
    } finally {
      inProcess.close();
    }
  });

  it("ends a request aborted while its prompt is prepared as aborted, and frees it", async () => {
    const request: EngineRequest = { input: { messages: [{ role: "user", content: "Tell me a long story" }] }, maxTokens: 200, sampling: { temperature: 0 }, ignoreEndOfGeneration: true, id: "aborted-early" };
    const stream = worker.submit(request);
    expect(worker.abort("aborted-early")).toBe(true);
    const events: EngineEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "aborted" });
    expect(events.filter((event) => event.type === "text")).toHaveLength(0);
    await idle(worker);
    expect(worker.queueDepth).toBe(0);
    expect((await worker.stats()).kvBlocks.used).toBe(0);
  });

  it("keeps an error's kind and field across the thread boundary", async () => {
    const [event] = await eventsOf(worker, { ...greedy("hi"), sampling: { topP: 5 } });
    expect(event.type).toBe("error");
    const error = (event as Extract<EngineEvent, { type: "error" }>).error;
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ kind: "invalid_request", field: "sampling.topP" });
    const tooLong = await eventsOf(worker, { input: { text: "word ".repeat(400) } });
    expect(tooLong.at(-1)).toMatchObject({ type: "error", error: { kind: "too_long", field: "input" } });
  });

  it("frees a request's blocks when its reader leaves, and counts only unadmitted requests as queued", async () => {
    const stream = worker.submit(greedy("Tell me a long story", 200));
    expect(worker.queueDepth).toBe(1);
    for await (const event of stream) if (event.type === "text") break;
    expect(worker.queueDepth).toBe(0);
    await idle(worker);
    const stats = await worker.stats();
    expect(stats.requests.aborted).toBeGreaterThan(0);
    expect(stats.kvBlocks.used).toBe(0);
    expect(worker.abort("no-such-request")).toBe(false);
  });

  it("refuses a second request with a running id", async () => {
    const first = worker.submit({ ...greedy("One", 50), id: "same" });
    const second = await eventsOf(worker, { ...greedy("Two"), id: "same" });
    expect(second).toMatchObject([{ type: "error", error: { kind: "invalid_request", field: "id" } }]);
    worker.abort("same");
    const rest = [];
    for await (const event of first) rest.push(event);
    expect(rest.at(-1)).toMatchObject({ type: "finish", reason: "aborted" });
  });

  it("restart(): fails the requests in flight, reloads, and serves again", async () => {
    const before = await eventsOf(worker, greedy("After the storm"));
    const chat = (content: string): EngineRequest => ({ input: { messages: [{ role: "user", content }] }, maxTokens: 4, sampling: { temperature: 0 } });
    const stale = (await worker.prepareAhead(chat("Prepared before the restart")))!;
    const running = worker.submit(greedy("A request cut short", 200));
    const seen: EngineEvent[] = [];
    for await (const event of running) {
      seen.push(event);
      if (event.type === "text") worker.restart();
    }
    expect(seen.at(-1)).toMatchObject({ type: "error", error: { kind: "internal", message: "the engine was restarted" } });
    expect(worker.queueDepth).toBe(0);
    const after = await eventsOf(worker, greedy("After the storm"));
    expect(comparable(after)).toEqual(comparable(before));
    expect(worker.unavailable).toBeUndefined();
    // A prompt prepared for the previous thread is prepared again (the new thread's limits may differ).
    const request = chat("After the restart, a request with a longer prompt than the stale one");
    const finish = (await eventsOf(worker, { ...request, id: "after-restart" })).at(-1);
    let handed: EngineEvent | undefined;
    for await (const event of worker.submit(request, stale)) handed = event;
    expect(handed).toMatchObject({ type: "finish", usage: { promptTokens: (finish as Extract<EngineEvent, { type: "finish" }>).usage.promptTokens } });
    expect((finish as Extract<EngineEvent, { type: "finish" }>).usage.promptTokens).not.toBe(stale.tokens.length);
  });

  it("fails the requests in flight when its thread dies, reloads and serves again; a second death within a minute leaves it unavailable", async () => {
    const crashing = await WorkerEngine.start(path, { load: LOAD, testHooks: true });
    /** Submits a long request and kills the thread (exit code 42) once it streams; returns the request's events. */
    const killedDuring = async (text: string) => {
      const seen: EngineEvent[] = [];
      for await (const event of crashing.submit(greedy(text, 200))) {
        if (event.type === "text" && !seen.some((e) => e.type === "text")) crashing.exitThreadForTesting(42);
        seen.push(event);
      }
      return seen;
    };
    try {
      const before = await eventsOf(crashing, greedy("After the storm"));
      const first = await killedDuring("A request cut short");
      expect(first.at(-1)).toMatchObject({ type: "error", error: { kind: "internal", message: "the engine thread stopped: the engine thread exited with code 42" } });
      expect(crashing.queueDepth).toBe(0);
      expect(crashing.unavailable).toBeUndefined();
      // A fresh thread reloaded the model: the same request gives the same tokens.
      const after = await eventsOf(crashing, greedy("After the storm"));
      expect(comparable(after)).toEqual(comparable(before));
      expect(crashing.unavailable).toBeUndefined();

      const second = await killedDuring("Another request cut short");
      expect(second.at(-1)).toMatchObject({ type: "error", error: { kind: "internal", message: "the engine thread stopped: the engine thread exited with code 42" } });
      expect(crashing.unavailable?.message).toBe("the engine is unavailable: the engine thread exited with code 42");
      expect(await eventsOf(crashing, greedy("hi"))).toMatchObject([{ type: "error", error: { kind: "internal", message: crashing.unavailable!.message } }]);
      await expect(crashing.stats()).rejects.toBe(crashing.unavailable);
    } finally {
      await crashing.close();
    }
  });

  it("ends its thread for tests only when started with testHooks", () => {
    expect(() => worker.exitThreadForTesting()).toThrow(/testHooks/);
  });

  it("rejects a model that cannot be loaded with the load's own error", async () => {
    await expect(WorkerEngine.start(`${path}.missing`, { load: LOAD })).rejects.toThrow(/missing/);
  });

  it("refuses requests once closed", async () => {
    const closing = await WorkerEngine.start(path, { load: LOAD });
    await closing.close();
    expect(await eventsOf(closing, greedy("hi"))).toMatchObject([{ type: "error", error: { kind: "internal", message: "the engine is closed" } }]);
  });
});
