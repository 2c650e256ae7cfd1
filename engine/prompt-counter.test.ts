// PromptCounter counts what the engine counts, without the weights: conversations (with tools and template kwargs),
// plain text, token arrays, Llama and Qwen3 templates; a count past its limit is "too_long", and a malformed request
// fails as the engine fails it. Rebuilt from its source sent as msgpack (a gateway's), it counts the same and hashes
// a prompt's blocks as the engine's prefix cache reports them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { type LoadedModel, loadModel } from "./load.js";
import { PromptCounter } from "./prompt-counter.js";
import { chainHashes } from "./kv/block-hash.js";
import { EngineError, type EngineRequest, type PrefixCacheUpdate } from "./request.js";

const tool = { type: "function", function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const REQUESTS: Array<[string, EngineRequest["input"]]> = [
  ["one user turn", { messages: [{ role: "user", content: "Hi there, how are you?" }] }],
  ["a system prompt and several turns", { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Name a colour." }, { role: "assistant", content: "Blue." }, { role: "user", content: "Another, in French é ü 日本" }] }],
  ["tools and thinking off", { messages: [{ role: "user", content: "Weather in Paris?" }], tools: [tool], templateKwargs: { enable_thinking: false } }],
  ["plain text", { text: "Once upon a time, in a land far away" }],
  ["token ids", { tokens: [1, 2, 3, 4, 5] }],
];

for (const preset of ["tiny-qwen3", "tiny-llama"] as const) {
  describe(`PromptCounter on ${preset}`, () => {
    let model: LoadedModel;
    let engine: Engine;
    let counter: PromptCounter;
    beforeAll(async () => {
      const path = await ensureTestModel(preset, "gguf", "q8_0");
      model = await loadModel(path, { contextSize: 512, threads: 1, kvCache: { bytes: 8 * 1024 * 1024 } });
      engine = new Engine(model);
      counter = PromptCounter.open(path);
    }, 120_000);
    afterAll(async () => {
      engine?.close();
      await model?.dispose();
    });

    for (const [name, input] of REQUESTS) {
      it(`counts ${name} as the engine does`, () => {
        const request: EngineRequest = { id: "count", input };
        const expected = engine.countTokens(request);
        expect(expected).toBeGreaterThan(0);
        expect(counter.count(request, 511)).toBe(expected);
      });
    }

    it("hashes a prompt's blocks as the engine's prefix cache names them, from its source sent as msgpack", async () => {
      // What a gateway does: the worker's tokenizer crosses as plain data, the gateway hashes the prompt's blocks.
      const { Packr } = await import("msgpackr");
      const packr = new Packr({ useRecords: false });
      const remote = PromptCounter.fromSource(packr.unpack(packr.pack(PromptCounter.readSource(model.path))));
      const request: EngineRequest = { id: "hashed", input: { messages: [{ role: "system", content: "You answer in rhymes. ".repeat(12) }, { role: "user", content: "Why?" }] }, maxTokens: 1 };
      for (const [, input] of REQUESTS) expect(remote.count({ id: "c", input }, 511)).toBe(counter.count({ id: "c", input }, 511));
      const hashes = chainHashes(remote.tokens(request, 511), model.kvPool.blockSize);
      expect(hashes.length).toBeGreaterThanOrEqual(3);
      const updates: PrefixCacheUpdate[] = [];
      const unsubscribe = engine.onPrefixCacheChange((update) => updates.push(update));
      for await (const event of engine.submit(request)) if (event.type === "error") throw event.error;
      unsubscribe();
      const added = new Set(updates.flatMap((update) => update.added));
      for (const hash of hashes) expect(added.has(hash)).toBe(true);
      expect(engine.prefixCacheSnapshot().hashes).toEqual(expect.arrayContaining(hashes));
    });

    it("stops past its limit with too_long, and fails a malformed request as the engine does", () => {
      const long: EngineRequest = { id: "long", input: { text: "word ".repeat(400) } };
      expect(counter.count(long, 1000)).toBe(engine.countTokens(long));
      expect(() => counter.count(long, 16)).toThrow(expect.objectContaining({ kind: "too_long" }));
      const malformed = { id: "bad", input: { messages: [] } } as EngineRequest;
      const engineError = (() => { try { engine.countTokens(malformed); } catch (error) { return error; } })() as EngineError;
      const counterError = (() => { try { counter.count(malformed, 511); } catch (error) { return error; } })() as EngineError;
      expect(counterError).toBeInstanceOf(EngineError);
      expect([counterError.kind, counterError.field, counterError.message]).toEqual([engineError.kind, engineError.field, engineError.message]);
    });
  });
}
