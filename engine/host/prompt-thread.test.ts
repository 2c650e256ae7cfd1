// The prompt thread: the same prompts as the engine prepares (compaction and errors included), questions that fail
// when it is closed, and a thread that cannot read its model's tokenizer marked unavailable, not restarted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { Engine } from "../engine.js";
import { type LoadedModel, loadModel } from "../load.js";
import { prepareRequestPrompt } from "../prompt.js";
import { EngineError, type EngineRequest } from "../request.js";
import { PromptThread } from "./prompt-thread.js";

describe("PromptThread", () => {
  let path: string;
  let model: LoadedModel;
  let engine: Engine;

  beforeAll(async () => {
    path = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    model = await loadModel(path, { contextSize: 256, threads: 1 });
    engine = new Engine(model);
  });

  afterAll(async () => {
    engine?.close();
    await model?.dispose();
  });

  it("prepares what the engine prepares: tokens, compaction and end-of-turn texts", async () => {
    const thread = new PromptThread(path);
    try {
      const promptModel = { tokenizer: model.tokenizer, chatTemplate: model.chatTemplate, vocabSize: model.config.vocab_size };
      const turns = Array.from({ length: 60 }, (_, i) => ({ role: i % 2 === 0 ? "user" as const : "assistant" as const, content: `turn ${i}: the weather, the sea` }));
      const requests: EngineRequest[] = [
        { input: { text: "Once upon a time" } },
        { input: { messages: [...turns, { role: "user", content: "and?" }] } },
        { input: { messages: [...turns, { role: "user", content: "and?" }] }, enableAutoCompaction: false, maxTokens: 1 },
      ];
      const settings = engine.promptSettings;
      for (const request of requests.slice(0, 2)) {
        expect(await thread.prepare(request, settings)).toEqual(prepareRequestPrompt(promptModel, request, settings));
        expect(await thread.count(request, settings)).toBe(engine.countTokens(request));
      }
      expect((await thread.prepare(requests[1]!, settings)).compaction?.tokensSaved).toBeGreaterThan(0);
      const refused = thread.prepare(requests[2]!, settings);
      await expect(refused).rejects.toBeInstanceOf(EngineError);
      await expect(refused).rejects.toMatchObject({ kind: "too_long", field: "input" });
    } finally {
      await thread.close();
    }
  });

  it("fails questions once closed, and is no longer available", async () => {
    const thread = new PromptThread(path);
    await thread.count({ input: { text: "hi" } }, engine.promptSettings);
    await thread.close();
    expect(thread.available).toBe(false);
    await expect(thread.count({ input: { text: "hi" } }, engine.promptSettings)).rejects.toThrow(/not available/);
  });

  it("is unavailable for good once a thread cannot read its model, so its engine prepares prompts itself", async () => {
    const thread = new PromptThread(`${path}.missing`);
    await expect(thread.count({ input: { text: "hi" } }, engine.promptSettings)).rejects.not.toBeInstanceOf(EngineError);
    expect(thread.available).toBe(false);
    await thread.close();
  });
});
