// Gemma 3 served: tiny-gemma3 (F32) behind `loom serve`'s server, both official SDKs, whole and streamed. The prompt
// the engine gets is Gemma's chat format as the file's own template renders it (the system prompt folded into the
// first user turn), usage counts it, and the greedy reply is llama.cpp's greedy continuation of the same tokens.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { openLlamaCppReference } from "../engine/testing/llama-cpp.js";
import { type Tokenizer, tokenizerFromGguf } from "../engine/tokenizer/index.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

const skip = testModelSkipReason("tiny-gemma3");
const SYSTEM = "Answer briefly.";
const USER = "What is the capital of France?";
/** Gemma 3's chat format for SYSTEM + USER, as its template renders it, with the generation prompt. */
const RENDERED = `<bos><start_of_turn>user\n${SYSTEM}\n\n${USER}<end_of_turn>\n<start_of_turn>model\n`;

describe.skipIf(skipOutsideCi(skip))(titled("tiny-gemma3 through the server", skip), () => {
  let model: ModelServer;
  let path: string;
  let tokenizer: Tokenizer;
  beforeAll(async () => {
    failIfMissing(skip);
    path = await ensureTestModel("tiny-gemma3", "gguf", "f32");
    tokenizer = tokenizerFromGguf(readGgufHeader(path).metadata, path);
    model = await startModelServer({ modelPath: path, contextSize: 512 });
  }, 120_000);
  afterAll(() => model?.close());

  /** The prompt tokens the engine makes of the last request the server sent it. */
  const engineTokens = async () => (await model.worker.prepareAhead(model.engine.requests.at(-1)!))?.tokens;

  /** llama.cpp's tokens for RENDERED and its greedy reply (up to an end-of-generation token or `count`). */
  async function reference(count: number): Promise<{ prompt: number[]; reply: number[] }> {
    const llama = await openLlamaCppReference(path);
    try {
      const prompt = llama.tokenize(RENDERED).slice(1); // RENDERED spells out <bos>, which tokenize adds again
      const tokens = await llama.greedy(prompt, count);
      const end = tokens.findIndex((token) => token === 106 || token === 1); // <end_of_turn>, <eos>
      expect(end, "llama.cpp's reply is not empty").not.toBe(0);
      return { prompt, reply: end < 0 ? tokens : tokens.slice(0, end) };
    } finally {
      await llama.dispose();
    }
  }

  it("renders Gemma's chat format and replies as llama.cpp does, in chat completions, whole and streamed", async () => {
    const { prompt, reply } = await reference(12);
    const client = model.openai();
    const messages = [{ role: "system" as const, content: SYSTEM }, { role: "user" as const, content: USER }];
    const whole = await client.chat.completions.create({ model: model.chatModel, messages, max_tokens: 12, temperature: 0 });
    expect(await engineTokens()).toEqual(prompt);
    expect(whole.usage?.prompt_tokens).toBe(prompt.length);
    const expected = tokenizer.decode(reply);
    expect(whole.choices[0]!.message.content).toBe(expected);
    let streamed = "";
    for await (const chunk of await client.chat.completions.create({ model: model.chatModel, messages, max_tokens: 12, temperature: 0, stream: true })) {
      streamed += chunk.choices[0]?.delta.content ?? "";
    }
    expect(streamed).toBe(expected);
  }, 120_000);

  it("renders the same prompt from Anthropic messages, whole and streamed", async () => {
    const { prompt, reply } = await reference(12);
    const client = model.anthropic();
    const request = { model: model.messagesModel, system: SYSTEM, messages: [{ role: "user" as const, content: USER }], max_tokens: 12, temperature: 0 };
    const whole = await client.messages.create(request);
    expect(await engineTokens()).toEqual(prompt);
    // The prompt was just served: most of it now comes from the prefix cache, which Anthropic's usage counts apart.
    expect(whole.usage.input_tokens + (whole.usage.cache_read_input_tokens ?? 0) + (whole.usage.cache_creation_input_tokens ?? 0)).toBe(prompt.length);
    const expected = tokenizer.decode(reply);
    expect(whole.content.map((block) => (block.type === "text" ? block.text : "")).join("")).toBe(expected);
    let streamed = "";
    for await (const event of client.messages.stream(request)) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") streamed += event.delta.text;
    }
    expect(streamed).toBe(expected);
  }, 120_000);
});
