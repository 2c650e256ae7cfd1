// What one request may cost the engine, and what its failure may cost the others: prompts are tokenized only up to
// the context, an explicit token limit must fit, a request whose sampling fails fails alone, and countTokens says what
// submit would run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineError, EngineEvent, EngineRequest } from "./request.js";
import { splitUnitsDuring } from "./testing/split-spy.js";

let model: LoadedModel;
beforeAll(async () => {
  model = await loadModel(await ensureTestModel("tiny-llama", "gguf", "q8_0"), { contextSize: 512, threads: 2, kvCache: { bytes: 32 * 1024 * 1024 } });
});
afterAll(() => model?.dispose());

async function eventsOf(engine: Engine, request: EngineRequest): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of engine.submit(request)) events.push(event);
  return events;
}

async function errorOf(engine: Engine, request: EngineRequest): Promise<EngineError> {
  const last = (await eventsOf(engine, request)).at(-1);
  if (last?.type !== "error") throw new Error(`expected an error, got ${last?.type}`);
  return last.error;
}

const text = (content: string, extra: Partial<EngineRequest> = {}): EngineRequest => ({ input: { messages: [{ role: "user", content }] }, sampling: { temperature: 0 }, ...extra });

describe("prompt size", () => {
  it("refuses an 8 MB prompt as too long after about a context's worth of tokenizing, with compaction on and off", async () => {
    const engine = new Engine(model);
    const huge = "Tell me about the weather in Oslo today, please. ".repeat(165_000); // 8.2 MB
    for (const enableAutoCompaction of [true, false]) {
      const units = await splitUnitsDuring(model.tokenizer, async () => {
        const error = await errorOf(engine, text(huge, { enableAutoCompaction }));
        expect(error).toMatchObject({ kind: "too_long", field: "input" });
        expect(error.message).toMatch(/more than 511 tokens/);
      });
      expect(units).toBeLessThan(200_000);
    }
    // A long conversation whose old tool results compaction can prune is still compacted, not refused.
    const toolTurn = (i: number) => [
      { role: "assistant" as const, content: "", tool_calls: [{ id: `c${i}`, type: "function" as const, function: { name: "search", arguments: "{}" } }] },
      { role: "tool" as const, tool_call_id: `c${i}`, content: "lorem ipsum dolor sit amet ".repeat(14) },
    ];
    const messages = [{ role: "user" as const, content: "Search." }, ...[1, 2, 3, 4, 5, 6].flatMap(toolTurn), { role: "user" as const, content: "Summarise." }];
    const withoutCompaction = await errorOf(engine, { input: { messages }, maxTokens: 1, enableAutoCompaction: false });
    expect(withoutCompaction).toMatchObject({ kind: "too_long" });
    const started = (await eventsOf(engine, { input: { messages }, maxTokens: 1 }))[0];
    expect(started).toMatchObject({ type: "start", compaction: { overBudget: false } });
  });

  it("counts a prompt's tokens as submit would run it (rendered and compacted), and refuses one past the context", async () => {
    const engine = new Engine(model);
    const request = text("How many tokens is this?");
    const start = (await eventsOf(engine, { ...request, maxTokens: 1 }))[0];
    expect(start.type === "start" && engine.countTokens(request)).toBe((start as { promptTokens: number }).promptTokens);
    expect(() => engine.countTokens(text("word ".repeat(4000)))).toThrow(/more than 511 tokens/);
  });
});

describe("token limits", () => {
  it("refuses an explicit maxTokens the context cannot hold, naming both counts; 'context' takes the rest; absent takes at most 256", async () => {
    const engine = new Engine(model);
    const prompt = text("Hello there, how are you?");
    const promptTokens = engine.countTokens(prompt);
    const room = 512 - promptTokens;
    const error = await errorOf(engine, { ...prompt, maxTokens: room + 1 });
    expect(error).toMatchObject({ kind: "invalid_request", field: "maxTokens" });
    expect(error.message).toBe(`maxTokens is ${room + 1}, but the prompt has ${promptTokens} tokens and the context holds 512: at most ${room} tokens can be generated`);
    const fill = (await eventsOf(engine, { ...prompt, maxTokens: "context", ignoreEndOfGeneration: true })).at(-1);
    expect(fill).toMatchObject({ type: "finish", reason: "length", usage: { completionTokens: room } });
    const fits = (await eventsOf(engine, { ...prompt, maxTokens: room, ignoreEndOfGeneration: true })).at(-1);
    expect(fits).toMatchObject({ type: "finish", usage: { completionTokens: room } });
    const unset = (await eventsOf(engine, { ...prompt, ignoreEndOfGeneration: true })).at(-1);
    expect(unset).toMatchObject({ type: "finish", usage: { completionTokens: Math.min(256, room) } });
    // With maxTokensUpToContext, a limit past the room is a ceiling: generation fills the context.
    const ceiling = (await eventsOf(engine, { ...prompt, maxTokens: room + 100, maxTokensUpToContext: true, ignoreEndOfGeneration: true })).at(-1);
    expect(ceiling).toMatchObject({ type: "finish", reason: "length", usage: { completionTokens: room } });
  });
});

describe("isolation", () => {
  it("fails a request whose constraint allows no token alone: the others in the same steps finish", async () => {
    const engine = new Engine(model, { maxSequences: 4 });
    const words = (model.config.vocab_size + 31) >>> 5;
    const nothingAllowed = { allowed: () => new Uint32Array(words), accept: () => undefined, complete: false, finished: false };
    // Every constrained request gets a constraint that masks every token (as a pattern no UTF-8 byte can match would).
    (engine as unknown as { constraints: { get: () => unknown } }).constraints = { get: () => ({ start: () => nothingAllowed }) };
    const constrained: EngineRequest = { ...text("Reply in JSON."), maxTokens: 8, constraint: { format: { type: "json_object" } } };
    const free: EngineRequest = { ...text("Reply freely."), maxTokens: 8, ignoreEndOfGeneration: true };
    const [a, b, c] = await Promise.all([eventsOf(engine, free), eventsOf(engine, constrained), eventsOf(engine, free)]);
    expect(a.at(-1)).toMatchObject({ type: "finish", usage: { completionTokens: 8 } });
    expect(c.at(-1)).toMatchObject({ type: "finish", usage: { completionTokens: 8 } });
    expect(b.at(-1)).toMatchObject({ type: "error", error: { kind: "internal", message: expect.stringMatching(/^sampling failed: /) } });
    expect(engine.stats().requests).toMatchObject({ finished: 2, failed: 1 });
  });
});

describe("isolation: a constraint violation", () => {
  it("fails only the request whose forced tokens its constraint refuses: the reasoning close after JSON", async () => {
    const engine = new Engine(model, { maxSequences: 4 });
    // The prompt opens the reasoning, so the thinking budget forces "\n</think>\n\n" after 3 tokens; the constraint
    // has no reasoning (no `thinking` tags), so the forced tokens are JSON it must refuse.
    const refused: EngineRequest = {
      input: { text: "Reply in JSON.<think>\n" }, maxTokens: 16, sampling: { temperature: 0 },
      thinkingBudget: { tokens: 3 }, constraint: { format: { type: "json_object" } },
    };
    const free: EngineRequest = { ...text("Reply freely."), maxTokens: 8, ignoreEndOfGeneration: true };
    const [a, b, c] = await Promise.all([eventsOf(engine, free), eventsOf(engine, refused), eventsOf(engine, free)]);
    expect(a.at(-1)).toMatchObject({ type: "finish", usage: { completionTokens: 8 } });
    expect(c.at(-1)).toMatchObject({ type: "finish", usage: { completionTokens: 8 } });
    const newline = model.tokenizer.encode("\n", { addSpecial: false })[0];
    expect(b.at(-1)).toMatchObject({
      type: "error",
      error: { kind: "internal", message: `constrained decoding failed: token ${newline} ("\\n") does not continue the constrained output` },
    });
    expect(b.filter((event) => event.type === "text").map((event) => (event as { text: string }).text).join("")).toMatch(/^\{/);
    expect(engine.stats().requests).toMatchObject({ finished: 2, failed: 1 });
    // The engine goes on: the same constrained request without the budget finishes.
    const { thinkingBudget: _, ...unforced } = refused;
    expect((await eventsOf(engine, unforced)).at(-1)).toMatchObject({ type: "finish" });
  });
});

describe("chunked prefill", () => {
  /** Tokens the decoding request streamed between the long prompt's admission and its first token. */
  async function decodedDuringPrefill(options: { stepTargetMs: number }): Promise<number> {
    const engine = new Engine(model, { ...options, cache: { prefixCaching: false } });
    let decoded = 0;
    let firstTokenSeen!: () => void;
    const decoding = new Promise<void>((resolve) => { firstTokenSeen = resolve; });
    const decoder = (async () => {
      for await (const event of engine.submit({ input: { tokens: [1, 2, 3] }, maxTokens: 100, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
        if (event.type === "text" || event.type === "finish") {
          decoded++;
          firstTokenSeen();
        }
      }
    })();
    await decoding;
    let atAdmission = 0;
    let atFirstToken = 0;
    const longPrompt = Array.from({ length: 400 }, (_, i) => 300 + ((i * 37) % 5000));
    for await (const event of engine.submit({ input: { tokens: longPrompt }, maxTokens: 2, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
      if (event.type === "admitted") atAdmission = decoded;
      if ((event.type === "text" || event.type === "finish") && atFirstToken === 0) atFirstToken = decoded;
    }
    engine.close();
    await decoder;
    return atFirstToken - atAdmission;
  }

  it("cuts a long prompt's prefill into chunks while another request decodes, so the other keeps streaming", async () => {
    // A 1 ms target takes the smallest chunks the pacer allows: a 400-token prompt needs several steps.
    expect(await decodedDuringPrefill({ stepTargetMs: 1 })).toBeGreaterThanOrEqual(5);
    // Off, the prompt goes in one step: the other request waits for all of it.
    expect(await decodedDuringPrefill({ stepTargetMs: 0 })).toBeLessThanOrEqual(2);
  });
});
