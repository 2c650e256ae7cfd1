// Issue 40's chat-completions features end to end, with the official openai SDK (and the AI SDK) against a real server
// on the tiny Qwen3-shaped test model: logprobs whole and streamed, n choices with a seed (reproducible, each equal to
// the same request alone with seed + i, interleaved when streamed), reasoning_effort on and off (refused by a model
// that cannot reason: stories260K), ignore_eos and min_tokens in three formats, and the 400s naming each field.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText } from "ai";
import OpenAI from "openai";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

let model: ModelServer;
let openai: OpenAI;

beforeAll(async () => {
  model = await startModelServer({ key: "sk-choices", responses: true });
  openai = model.openai();
});
afterAll(async () => {
  await model?.close();
});

const messages = [{ role: "user" as const, content: "Tell me a story about a cat." }];

/** The engine request the server submitted last (of one choice). */
function lastEngineRequest() {
  return model.engine.requests.at(-1)!;
}

describe("logprobs", () => {
  it("whole: one entry per content token, top_logprobs as many as asked, most likely first, the greedy token first", async () => {
    const completion = await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 3 });
    const choice = completion.choices[0]!;
    const content = choice.logprobs!.content!;
    expect(content.length).toBeGreaterThan(0);
    expect(content.length).toBeLessThanOrEqual(completion.usage!.completion_tokens);
    for (const entry of content) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top_logprobs).toHaveLength(3);
      const tops = entry.top_logprobs.map((top) => top.logprob);
      expect([...tops].sort((a, b) => b - a)).toEqual(tops);
      // Greedy sampling picks the raw distribution's most likely token: the first alternative.
      expect(entry.top_logprobs[0]!.bytes).toEqual(entry.bytes);
      expect(entry.logprob).toBeCloseTo(entry.top_logprobs[0]!.logprob, 6);
    }
    // The tokens' bytes are the content's, in order.
    expect(Buffer.from(content.flatMap((entry) => entry.bytes!)).toString("utf8")).toBe(choice.message.content);
  });

  it("streamed: each chunk carries the logprobs of the tokens whose text it brings; joined they equal the whole response's", async () => {
    const params = { model: model.chatModel, messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 2 } as const;
    const whole = await openai.chat.completions.create(params);
    const stream = await openai.chat.completions.create({ ...params, stream: true });
    const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
    let text = "";
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        const tokens = choice.logprobs?.content ?? [];
        if (tokens.length > 0) expect(choice.delta.content).toBe(Buffer.from(tokens.flatMap((entry) => entry.bytes!)).toString("utf8"));
        streamed.push(...tokens);
        text += choice.delta.content ?? "";
      }
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(streamed).toEqual(whole.choices[0]!.logprobs!.content);
  });

  it("without logprobs, choices carry logprobs: null", async () => {
    const completion = await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 4, temperature: 0 });
    expect(completion.choices[0]!.logprobs).toBeNull();
    expect(lastEngineRequest().logprobs).toBeUndefined();
  });

  it("Responses: include message.output_text.logprobs gives output_text.logprobs, streamed the same", async () => {
    const params = { model: model.chatModel, input: "Tell me a story.", max_output_tokens: 8, temperature: 0, top_logprobs: 2, include: ["message.output_text.logprobs" as const], store: false };
    const response = await openai.responses.create(params);
    const message = response.output.find((item) => item.type === "message")!;
    const part = message.content[0] as OpenAI.Responses.ResponseOutputText;
    expect(part.logprobs!.length).toBeGreaterThan(0);
    for (const entry of part.logprobs!) expect(entry.top_logprobs).toHaveLength(2);
    const streamed: unknown[] = [];
    for await (const event of await openai.responses.create({ ...params, stream: true })) {
      if (event.type === "response.output_text.delta") streamed.push(...event.logprobs);
    }
    expect(streamed).toEqual(part.logprobs);
  });
});

describe("n choices", () => {
  const params = { messages, max_tokens: 8, temperature: 1, seed: 7, n: 3 };

  it("n = 3 with a seed: three choices, reproducible, each the same request alone with seed + i; usage counts the prompt once", async () => {
    const first = await openai.chat.completions.create({ ...params, model: model.chatModel });
    const again = await openai.chat.completions.create({ ...params, model: model.chatModel });
    expect(first.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    expect(again.choices.map((choice) => choice.message.content)).toEqual(first.choices.map((choice) => choice.message.content));
    const alone = await Promise.all([0, 1, 2].map((index) => openai.chat.completions.create({ ...params, model: model.chatModel, n: 1, seed: 7 + index })));
    expect(alone.map((completion) => completion.choices[0]!.message.content)).toEqual(first.choices.map((choice) => choice.message.content));
    expect(first.usage!.prompt_tokens).toBe(alone[0]!.usage!.prompt_tokens);
    expect(first.usage!.completion_tokens).toBe(alone.reduce((sum, completion) => sum + completion.usage!.completion_tokens, 0));
    const group = model.engine.requests.filter((request) => request.fork !== undefined).slice(-3);
    expect(group.map((request) => [request.fork!.size, request.sampling?.seed])).toEqual([[3, 7], [3, 8], [3, 9]]);
  });

  it("the choices' shared prompt is computed once: /metrics counts the other choices' prompt tokens as forked", async () => {
    const forked = async () => Number(/loom_forked_prompt_tokens\{model="[^"]*"\} (\d+)/.exec(await (await fetch(`${model.base}/metrics`)).text())?.[1]);
    const before = await forked();
    const completion = await openai.chat.completions.create({ ...params, model: model.chatModel, seed: 11 });
    // Each choice but the leader takes every prompt token but the last (which it computes for its own first token).
    expect((await forked()) - before).toBe(2 * (completion.usage!.prompt_tokens - 1));
  });

  it("streamed: every chunk names its choice, choices interleave, and reassembled they equal the whole response", async () => {
    const whole = await openai.chat.completions.create({ ...params, model: model.chatModel });
    const stream = await openai.chat.completions.create({ ...params, model: model.chatModel, stream: true, stream_options: { include_usage: true } });
    const texts = ["", "", ""];
    const finishes: (string | null)[] = [null, null, null];
    const order: number[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.choices.length).toBeLessThanOrEqual(1);
      for (const choice of chunk.choices) {
        order.push(choice.index);
        texts[choice.index] += choice.delta.content ?? "";
        if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts).toEqual(whole.choices.map((choice) => choice.message.content));
    expect(finishes).toEqual(whole.choices.map((choice) => choice.finish_reason));
    expect(usage).toEqual(whole.usage);
    // Interleaved: some chunk of a choice comes after a chunk of a later choice.
    expect(order.some((index, at) => order.slice(0, at).some((earlier) => earlier > index))).toBe(true);
  });
});

describe("reasoning_effort", () => {
  it("none turns thinking off, low turns it on with a budget capped by max_tokens, high without one", async () => {
    await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 4, reasoning_effort: "none" });
    expect(lastEngineRequest().input).toMatchObject({ templateKwargs: { enable_thinking: false } });
    expect(lastEngineRequest().thinkingBudget).toBeUndefined();
    await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 6, reasoning_effort: "low" });
    expect(lastEngineRequest().input).toMatchObject({ templateKwargs: { enable_thinking: true } });
    expect(lastEngineRequest().thinkingBudget).toMatchObject({ tokens: 6 });
    await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 4, reasoning_effort: "high" });
    expect(lastEngineRequest().input).toMatchObject({ templateKwargs: { enable_thinking: true } });
    expect(lastEngineRequest().thinkingBudget).toBeUndefined();
  });

  it("the AI SDK's providerOptions.openai.reasoningEffort reaches the model", async () => {
    const provider = createOpenAI({ baseURL: `${model.base}/v1`, apiKey: model.key });
    await generateText({ model: provider.chat(model.chatModel), prompt: "Hi", maxOutputTokens: 5, providerOptions: { openai: { reasoningEffort: "medium" } } });
    expect(lastEngineRequest().input).toMatchObject({ templateKwargs: { enable_thinking: true } });
    expect(lastEngineRequest().thinkingBudget).toMatchObject({ tokens: 5 });
  });

  it("a model that cannot reason refuses an effort that turns reasoning on, naming reasoning_effort", async () => {
    const stories = await startModelServer({ key: "sk-stories", modelPath: fileURLToPath(new URL("../models/stories260K/stories260K.gguf", import.meta.url)), contextSize: 256 });
    try {
      const client = stories.openai();
      const refused = await client.chat.completions.create({ model: stories.chatModel, messages, max_tokens: 4, reasoning_effort: "low" }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("reasoning_effort");
      const off = await client.chat.completions.create({ model: stories.chatModel, messages, max_tokens: 4, reasoning_effort: "none" });
      expect(off.choices).toHaveLength(1);
    } finally {
      await stories.close();
    }
  });
});

describe("ignore_eos and min_tokens", () => {
  it("ignore_eos generates up to the limit in chat completions, messages and Responses; min_tokens reaches the engine", async () => {
    const chat = await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 10, temperature: 0, ignore_eos: true, min_tokens: 10 } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect([chat.usage!.completion_tokens, chat.choices[0]!.finish_reason]).toEqual([10, "length"]);
    expect(lastEngineRequest()).toMatchObject({ ignoreEndOfGeneration: true, minTokens: 10 });
    const message = await model.anthropic().messages.create({ model: model.messagesModel, max_tokens: 9, messages, ignore_eos: true } as Parameters<ReturnType<ModelServer["anthropic"]>["messages"]["create"]>[0] & { stream?: false });
    expect([message.usage.output_tokens, message.stop_reason]).toEqual([9, "max_tokens"]);
    const response = await openai.responses.create({ model: model.chatModel, input: "Hi", max_output_tokens: 16, store: false, min_tokens: 16 } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(lastEngineRequest().minTokens).toBe(16);
    expect(response.usage!.output_tokens).toBe(16);
  });
});

describe("hostile values are 400s naming the field", () => {
  it.each([
    [{ n: 0 }, "n"],
    [{ n: 1000 }, "n"],
    [{ n: 17 }, "n"],
    [{ logprobs: true, top_logprobs: 21 }, "top_logprobs"],
    [{ top_logprobs: 2 }, "top_logprobs"],
    [{ logprobs: "yes" }, "logprobs"],
    [{ reasoning_effort: "maximum" }, "reasoning_effort"],
    [{ verbosity: "low" }, "verbosity"],
    [{ ignore_eos: 1 }, "ignore_eos"],
    [{ min_tokens: 5, max_tokens: 4 }, "min_tokens"],
  ])("%j", async (fields, param) => {
    const refused = await openai.chat.completions.create({ model: model.chatModel, messages, max_tokens: 4, ...fields } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
  });
});
