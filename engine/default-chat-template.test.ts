// The serving engine on a model without a chat template (the bundled stories260K): conversations are rendered with the
// default ChatML template, and a reply ends at its turn markers written as text, as a normal end of turn.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { type GenerationEvent, generate } from "./generate.js";
import { type LoadedModel, loadModel } from "./load.js";
import type { EngineEvent, EngineRequest } from "./request.js";
import { REPOSITORY_ROOT } from "./testing/fixtures.js";

/** Shipped in the repository (models/stories260K), so never missing. */
const STORIES = join(REPOSITORY_ROOT, "models", "stories260K", "stories260K.gguf");

/** The request's text and its finish event. */
async function run(engine: Engine, request: EngineRequest): Promise<{ text: string; finish: Extract<EngineEvent, { type: "finish" }> }> {
  let text = "";
  for await (const event of engine.submit(request)) {
    if (event.type === "error") throw event.error;
    if (event.type === "text") text += event.text;
    if (event.type === "finish") return { text, finish: event };
  }
  throw new Error("the stream ended without a finish event");
}

/** A reply forced by grammar to be the JSON string `"a<|im_end|>b"`: the marker appears as text whatever the model. */
const MARKER_IN_REPLY = { format: { type: "json_schema", schema: { const: "a<|im_end|>b" } } } as const;

describe("a model without a chat template", () => {
  let model: LoadedModel;
  let engine: Engine;
  beforeAll(async () => {
    model = await loadModel(STORIES, { contextSize: 256, threads: 1 });
    engine = new Engine(model);
  });
  afterAll(async () => {
    engine?.close();
    await model?.dispose();
  });

  it("has none, and its conversations are rendered with the default ChatML template, BOS first", async () => {
    expect(model.chatTemplate).toBeNull();
    const rendered = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nTell me a story<|im_end|>\n<|im_start|>assistant\n";
    const expected = model.tokenizer.encode(rendered, { addSpecial: true, parseSpecial: true });
    expect(expected[0]).toBe(model.tokenizer.bosId);
    const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "Tell me a story" }] as const;
    expect(engine.countTokens({ input: { messages: [...messages] } })).toBe(expected.length);
    const { finish } = await run(engine, { input: { messages: [...messages] }, maxTokens: 4, sampling: { temperature: 0 } });
    expect(finish.usage.promptTokens).toBe(expected.length);
    expect(finish.tokens).toHaveLength(4);
  });

  it("ends a reply at the template's turn marker as an end of turn: no stop sequence, the marker not in the text", async () => {
    const messages = [{ role: "user" as const, content: "Hi" }];
    const ended = await run(engine, { input: { messages }, constraint: MARKER_IN_REPLY, maxTokens: 40 });
    expect(ended.text).toBe('"a');
    expect(ended.finish).toMatchObject({ reason: "stop", stopSequence: undefined });
    // The client's own stop sequence is still reported as one.
    const stopped = await run(engine, { input: { messages }, constraint: MARKER_IN_REPLY, maxTokens: 40, stop: ["<|im_end|>"] });
    expect(stopped.text).toBe('"a');
    expect(stopped.finish).toMatchObject({ reason: "stop", stopSequence: "<|im_end|>" });
  });

  it("leaves raw text prompts alone unless asked (endOfTurn), as a caller rendering its own prompt asks", async () => {
    const text = { input: { text: "Once upon a time" }, constraint: MARKER_IN_REPLY, maxTokens: 40 };
    expect((await run(engine, text)).text).toBe('"a<|im_end|>b"');
    const asked = await run(engine, { ...text, endOfTurn: ["<|im_start|>", "<|im_end|>"] });
    expect(asked.text).toBe('"a');
    expect(asked.finish).toMatchObject({ reason: "stop", stopSequence: undefined });
  });

  it("refuses malformed end-of-turn texts, naming the field", async () => {
    for (const endOfTurn of [[""], "x", Array.from({ length: 17 }, () => "x")]) {
      const events: EngineEvent[] = [];
      for await (const event of engine.submit({ input: { text: "x" }, endOfTurn: endOfTurn as string[] })) events.push(event);
      expect(events.at(-1)).toMatchObject({ type: "error", error: { kind: "invalid_request", field: "endOfTurn" } });
    }
  });
});

describe("a model with its own chat template", () => {
  it("gets no turn markers: its template's end-of-turn token ends the reply, text alone does not", async () => {
    const model = await loadModel(await ensureTestModel("tiny-qwen3", "gguf", "f32"), { contextSize: 256, threads: 1 });
    const engine = new Engine(model);
    try {
      expect(model.chatTemplate).toContain("<|im_start|>");
      const { text } = await run(engine, { input: { messages: [{ role: "user", content: "Hi" }], templateKwargs: { enable_thinking: false } }, constraint: MARKER_IN_REPLY, maxTokens: 40 });
      expect(text).toBe('"a<|im_end|>b"');
    } finally {
      engine.close();
      await model.dispose();
    }
  });
});

describe("generate() with end-of-turn texts", () => {
  it("ends at one as at an end-of-generation token, reporting no stop sequence", async () => {
    const model = await loadModel(STORIES, { contextSize: 256, threads: 1 });
    try {
      const prompt = model.tokenizer.encode("Once upon a time", { addSpecial: true });
      let text = "";
      let done: Extract<GenerationEvent, { type: "done" }> | undefined;
      // Greedy, stories260K goes on ", there was a little girl named Lily."
      for await (const event of generate(model, prompt, { maxTokens: 30, sampling: { temperature: 0 }, endOfTurn: ["Lily"] })) {
        if (event.type === "text") text += event.text;
        else done = event;
      }
      expect(text).toBe(", there was a little girl named ");
      expect(done).toMatchObject({ finishReason: "stop", stopSequence: undefined });
    } finally {
      await model.dispose();
    }
  });
});
