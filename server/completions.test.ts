// POST /v1/completions with the official openai SDK against a server on tiny Qwen3 (random weights): string, token-id
// and batched prompts, echo with logprobs (scoring, max_tokens 0), n choices with a seed, streaming with usage, and
// hostile inputs each refused with a 400 naming the field. POST /tokenize and /detokenize in llama.cpp's and vLLM's
// shapes.
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

let server: ModelServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startModelServer({ contextSize: 256, threads: 1 });
  client = server.openai();
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** POSTs JSON with the server's key; the status and parsed body. */
async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.base}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${server.key}` }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

describe("POST /v1/completions", () => {
  it("completes a string prompt with OpenAI's legacy shape and usage", async () => {
    const completion = await client.completions.create({ model: server.chatModel, prompt: "Once upon a time", max_tokens: 8, temperature: 0 });
    expect(completion.object).toBe("text_completion");
    expect(completion.id).toMatch(/^cmpl-/);
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]!.index).toBe(0);
    expect(completion.choices[0]!.logprobs).toBeNull();
    expect(["stop", "length"]).toContain(completion.choices[0]!.finish_reason);
    const { tokens } = (await post("/tokenize", { model: server.chatModel, prompt: "Once upon a time" })).body;
    expect(completion.usage!.prompt_tokens).toBe(tokens.length);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(8);
  }, 60_000);

  it("scores a token-id prompt: echo, logprobs 1, max_tokens 0 (lm-evaluation-harness's request)", async () => {
    const { tokens } = (await post("/tokenize", { content: "The cat sat on the mat" })).body as { tokens: number[] };
    const completion = await client.completions.create({ model: server.chatModel, prompt: tokens, echo: true, logprobs: 1, max_tokens: 0 });
    const choice = completion.choices[0]!;
    const { content } = (await post("/detokenize", { tokens })).body;
    expect(choice.text).toBe(content);
    const logprobs = choice.logprobs!;
    expect(logprobs.tokens).toHaveLength(tokens.length);
    expect(logprobs.token_logprobs).toHaveLength(tokens.length);
    expect(logprobs.token_logprobs![0]).toBeNull();
    expect(logprobs.top_logprobs![0]).toBeNull();
    for (let i = 1; i < tokens.length; i++) {
      const logprob = logprobs.token_logprobs![i]!;
      expect(logprob).toBeLessThanOrEqual(0);
      // The chosen token is among the dict's entries, with at most logprobs + 1 of them.
      const top = logprobs.top_logprobs![i]!;
      expect(top[logprobs.tokens![i]!]).toBeCloseTo(logprob, 6);
      expect(Object.keys(top).length).toBeLessThanOrEqual(2);
    }
    expect(logprobs.text_offset![0]).toBe(0);
    expect(completion.usage!.completion_tokens).toBe(0);
    expect(completion.usage!.prompt_tokens).toBe(tokens.length);
  }, 60_000);

  it("scores a prompt for n choices with one prefill: every choice echoes the first choice's prompt logprobs, whole and streamed", async () => {
    const { tokens } = (await post("/tokenize", { content: "The cat sat on the mat and looked at the dog" })).body as { tokens: number[] };
    const params = { model: server.chatModel, prompt: tokens, echo: true, logprobs: 2, max_tokens: 3, n: 3, seed: 5, temperature: 1 } as const;
    const single = await client.completions.create({ ...params, n: 1 });
    const metrics = async () => Number(/loom_forked_prompt_tokens\{model="[^"]*"\} (\d+)/.exec(await (await fetch(`${server.base}/metrics`)).text())?.[1]);
    const forkedBefore = await metrics();
    const completion = await client.completions.create(params);
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    const promptPart = (choice: OpenAI.CompletionChoice) => choice.logprobs!.token_logprobs!.slice(0, tokens.length);
    for (const choice of completion.choices) expect(promptPart(choice)).toEqual(promptPart(single.choices[0]!));
    // Only the first choice asked the engine for the prompt's logprobs; the other two forked its prompt.
    const submitted = server.engine.requests.slice(-3);
    expect(submitted.map((request) => request.promptLogprobs !== undefined)).toEqual([true, false, false]);
    expect((await metrics()) - forkedBefore).toBe(2 * (tokens.length - 1));
    expect(completion.usage!.prompt_tokens).toBe(tokens.length);
    // Streamed: each choice's echo (with the prompt's logprobs) comes before its completion's text.
    const stream = await client.completions.create({ ...params, stream: true });
    const streamed = ["", "", ""];
    const firstLogprobs: (number | null)[][] = [[], [], []];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        if (streamed[choice.index] === "" && choice.text !== "") firstLogprobs[choice.index] = choice.logprobs!.token_logprobs!.slice(0, tokens.length);
        streamed[choice.index] += choice.text;
      }
    }
    expect(streamed).toEqual(completion.choices.map((choice) => choice.text));
    for (const logprobs of firstLogprobs) expect(logprobs).toEqual(promptPart(single.choices[0]!));
  }, 60_000);

  it("echoes a prompt and then its completion with the completion's logprobs after the prompt's", async () => {
    const completion = await client.completions.create({ model: server.chatModel, prompt: "Hello there", echo: true, logprobs: 2, max_tokens: 4, temperature: 0, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming);
    const choice = completion.choices[0]!;
    expect(choice.text.startsWith("Hello there")).toBe(true);
    const promptTokens = completion.usage!.prompt_tokens;
    expect(choice.logprobs!.tokens).toHaveLength(promptTokens + 4);
    expect(choice.logprobs!.token_logprobs![0]).toBeNull();
    expect(choice.logprobs!.text_offset![promptTokens]).toBe("Hello there".length);
    expect(choice.finish_reason).toBe("length");
  }, 60_000);

  it("points each token's text_offset at the text it adds: BOS adds none, characters split over byte tokens count once", async () => {
    // stories260K: SentencePiece with BOS and byte fallback (its vocabulary has no CJK or emoji pieces).
    const stories = await startModelServer({ key: "sk-stories", modelPath: fileURLToPath(new URL("../models/stories260K/stories260K.gguf", import.meta.url)), contextSize: 256, threads: 1 });
    try {
      const prompt = "Once upon a time 日本 🙂 done";
      const completion = await stories.openai().completions.create({ model: stories.chatModel, prompt, echo: true, logprobs: 1, max_tokens: 6, temperature: 0, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming);
      const { text, logprobs } = completion.choices[0]!;
      expect(text.startsWith(prompt)).toBe(true);
      const tokens = logprobs!.tokens!;
      const offsets = logprobs!.text_offset!;
      expect(tokens[0]).toBe("<s>");
      expect(tokens.some((token) => token.startsWith("bytes:"))).toBe(true);
      expect(offsets.slice(0, 2)).toEqual([0, 0]);
      for (let i = 1; i < offsets.length; i++) expect(offsets[i]).toBeGreaterThanOrEqual(offsets[i - 1]!);
      expect(Math.max(...offsets)).toBeLessThanOrEqual(text.length);
      // A token of whole characters starts where the text holds it (SentencePiece's first word without its space).
      tokens.forEach((token, i) => {
        if (i === 0 || token.startsWith("bytes:")) return;
        expect(text.startsWith(token, offsets[i]) || text.startsWith(token.trimStart(), offsets[i]), `token ${i} ${JSON.stringify(token)} at ${offsets[i]}`).toBe(true);
      });
      expect(offsets[completion.usage!.prompt_tokens]).toBe(prompt.length);
    } finally {
      await stories.close();
    }
  }, 60_000);

  it("gives n choices per prompt with a seed, the same on a repeat; index = prompt * n + choice", async () => {
    const ask = () => client.completions.create({ model: server.chatModel, prompt: ["A story:", "A poem:"], n: 2, seed: 7, temperature: 1, max_tokens: 6 });
    const first = await ask();
    expect(first.choices.map((choice) => choice.index)).toEqual([0, 1, 2, 3]);
    const again = await ask();
    expect(again.choices.map((choice) => choice.text)).toEqual(first.choices.map((choice) => choice.text));
    // Each prompt billed once, every choice's tokens counted.
    const one = await client.completions.create({ model: server.chatModel, prompt: "A story:", max_tokens: 1 });
    const two = await client.completions.create({ model: server.chatModel, prompt: "A poem:", max_tokens: 1 });
    expect(first.usage!.prompt_tokens).toBe(one.usage!.prompt_tokens + two.usage!.prompt_tokens);
  }, 60_000);

  it("passes prompt_cache_key on as the gateway's affinity key, and each prompt's choices as one fork group", async () => {
    await client.completions.create({ model: server.chatModel, prompt: ["A story:", "A poem:"], n: 2, max_tokens: 2, prompt_cache_key: "user-7" } as OpenAI.CompletionCreateParamsNonStreaming);
    const grouped = server.engine.requests.slice(-4);
    expect(grouped.map((request) => request.affinityKey)).toEqual(["user-7", "user-7", "user-7", "user-7"]);
    expect(grouped.map((request) => request.fork?.group)).toEqual([grouped[0]!.fork!.group, grouped[0]!.fork!.group, grouped[2]!.fork!.group, grouped[2]!.fork!.group]);
    expect(grouped[0]!.fork!.group).not.toBe(grouped[2]!.fork!.group);
  }, 60_000);

  it("answers 503 rather than a truncated 200 when the engine stops a choice its client still waits for", async () => {
    const before = server.engine.requests.length;
    const answer = post("/v1/completions", { model: server.chatModel, prompt: "Once upon a time", max_tokens: 200, ignore_eos: true, temperature: 0, n: 2 });
    while (server.engine.requests.length < before + 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 30));
    // What a shutdown does to a running request: the engine ends it as aborted.
    server.engine.abort(server.engine.requests.at(-1)!.id!);
    const { status, body } = await answer;
    expect(status).toBe(503);
    expect(body.error.message).toContain("stopped this completion before it finished");
  }, 60_000);

  it("streams text_completion chunks equal to the whole answer, then usage and [DONE]", async () => {
    const body = { model: server.chatModel, prompt: "Once upon a time", max_tokens: 8, temperature: 0, logprobs: 1 };
    const whole = await client.completions.create(body);
    const stream = await client.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let text = "";
    const tokens: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("text_completion");
      for (const choice of chunk.choices) {
        text += choice.text;
        tokens.push(...(choice.logprobs?.tokens ?? []));
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0]!.text);
    expect(tokens).toEqual(whole.choices[0]!.logprobs!.tokens);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage).toMatchObject({ prompt_tokens: whole.usage!.prompt_tokens, completion_tokens: whole.usage!.completion_tokens });
  }, 60_000);

  it("refuses hostile and unsupported inputs with a 400 naming the field", async () => {
    const model = server.chatModel;
    const cases: Array<[unknown, string | null]> = [
      [{ model, prompt: Array.from({ length: 5000 }, () => 1) }, "prompt"],
      [{ model, prompt: [1, 2, -3] }, "prompt[2]"],
      [{ model, prompt: [1, 2, 1e9] }, "prompt[2]"],
      [{ model, prompt: [[1, 2], [3, 1.5]] }, "prompt[1][1]"],
      [{ model, prompt: [[1, 2], "text"] }, "prompt[1]"],
      [{ model, prompt: ["text", [1, 2]] }, "prompt[1]"],
      [{ model, prompt: [] }, "prompt"],
      [{ model, prompt: "x", n: 17 }, "n"],
      [{ model, prompt: Array.from({ length: 20 }, () => "x"), n: 16 }, "n"],
      [{ model, prompt: "x", n: 2, best_of: 3 }, "best_of"],
      [{ model, prompt: "x", logprobs: 6 }, "logprobs"],
      [{ model, prompt: "x", max_tokens: 0 }, "max_tokens"],
      [{ model, prompt: "x", max_tokens: 1000 }, "max_tokens"],
      [{ model, prompt: "x", suffix: "end" }, "suffix"],
      [{ model, prompt: "x", logit_bias: { "1": 5 } }, "logit_bias"],
      [{ model, prompt: "x", min_tokens: 9, max_tokens: 4 }, "min_tokens"],
      [{ model, prompt: "x", stream_options: { include_usage: true } }, "stream_options"],
      [{ model, prompt: "x", frobnicate: true }, null],
    ];
    for (const [body, param] of cases) {
      const { status, body: answer } = await post("/v1/completions", body);
      expect(status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.error.type).toBe("invalid_request_error");
      expect(answer.error.param, JSON.stringify(body).slice(0, 80)).toBe(param);
      if (param === null) expect(answer.error.message).toContain("frobnicate");
    }
    const missing = await post("/v1/completions", { model: "nope", prompt: "x" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("model_not_found");
  }, 60_000);

  it("asks for the key as the chat routes do", async () => {
    const response = await fetch(`${server.base}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: server.chatModel, prompt: "x" }) });
    expect(response.status).toBe(401);
  });
});

describe("POST /tokenize and /detokenize", () => {
  it("answers llama.cpp's shape: tokens, pieces, and the text back", async () => {
    const plain = (await post("/tokenize", { content: "Hello world" })).body;
    expect(plain.tokens.every((token: unknown) => typeof token === "number")).toBe(true);
    const pieces = (await post("/tokenize", { content: "Hello world", with_pieces: true })).body;
    expect(pieces.tokens.map((entry: { id: number }) => entry.id)).toEqual(plain.tokens);
    expect(pieces.tokens.map((entry: { piece: string }) => entry.piece).join("")).toBe("Hello world");
    expect((await post("/detokenize", { tokens: plain.tokens })).body.content).toBe("Hello world");
  });

  it("answers vLLM's shape, and renders messages with the chat template", async () => {
    const prompt = (await post("/tokenize", { model: server.chatModel, prompt: "Hello world", return_token_strs: true })).body;
    expect(prompt.count).toBe(prompt.tokens.length);
    expect(prompt.max_model_len).toBe(256);
    expect(prompt.token_strs.join("")).toBe("Hello world");
    const chat = (await post("/tokenize", { model: server.chatModel, messages: [{ role: "user", content: "Hello world" }] })).body;
    const rendered = (await post("/detokenize", { model: server.chatModel, tokens: chat.tokens })).body.prompt;
    expect(rendered).toContain("<|im_start|>user\nHello world<|im_end|>");
    expect(rendered).toContain("<|im_start|>assistant\n");
    // The same prompt a chat completion runs with.
    const completion = await client.chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "Hello world" }], max_tokens: 1 });
    expect(completion.usage!.prompt_tokens).toBe(chat.count);
  }, 60_000);

  it("refuses bad ids and unknown fields by name", async () => {
    const bad = await post("/detokenize", { tokens: [1, -2] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("tokens[1]");
    const beyond = await post("/detokenize", { tokens: [1, 10_000_000] });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error.param).toBe("tokens[1]");
    const unknown = await post("/tokenize", { content: "x", frobnicate: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("frobnicate");
    const noGenerationPrompt = await post("/tokenize", { messages: [{ role: "user", content: "x" }], add_generation_prompt: false });
    expect(noGenerationPrompt.body.error.param).toBe("add_generation_prompt");
  });
});
