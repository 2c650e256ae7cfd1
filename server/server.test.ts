// The HTTP server end to end on loopback: the official openai and @anthropic-ai/sdk clients against a real server on
// a small model (its engine on a worker thread, as `loom serve` runs it), raw HTTP for error cases, and disconnects
// freeing their requests.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import { seededRandom } from "../engine/testing/seeded-random.js";
import { WorkerEngine } from "../engine/host/worker-engine.js";
import { createEndpoints } from "./adapters/endpoints.js";
import { StaticKeys } from "./http/auth.js";
import { type LoomServer, startServer } from "./server.js";
import { ModelRegistry, defaultSlugs } from "./models.js";

const KEY = "sk-test-key";
let engine: WorkerEngine;
let server: LoomServer;
let base: string;
let chatSlug: string;
let messagesSlug: string;

beforeAll(async () => {
  const path = await ensureTestModel("tiny-llama", "gguf", "q8_0");
  engine = await WorkerEngine.start(path, { load: { contextSize: 512, threads: 2, kvCache: { bytes: 32 * 1024 * 1024 } } });
  const model = engine.model;
  const slugs = defaultSlugs(model);
  chatSlug = slugs.openai[0];
  messagesSlug = slugs.anthropic[0];
  const registry = new ModelRegistry([{ model, engine, slugs, created: 1_700_000_000 }]);
  server = await startServer({ registry, auth: new StaticKeys([KEY]), endpoints: createEndpoints(registry), maxBodyBytes: 64 * 1024 }, "127.0.0.1", 0);
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  server?.close();
  await engine?.close();
});

const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: base, maxRetries: 0 });

/** Waits until the engine has nothing running or waiting (a disconnect lands between steps). */
async function engineIdle(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const stats = await engine.stats();
    if (stats.running === 0 && stats.waiting === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("OpenAI chat completions", () => {
  it("answers non-streaming requests in the OpenAI shape", async () => {
    const completion = await openai().chat.completions.create({
      model: chatSlug, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello there" }],
      max_tokens: 6, temperature: 0, seed: 3, top_p: 0.9, frequency_penalty: 0.1, presence_penalty: 0.1,
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe(chatSlug);
    expect(completion.choices[0].message.role).toBe("assistant");
    expect(typeof completion.choices[0].message.content).toBe("string");
    expect(["stop", "length"]).toContain(completion.choices[0].finish_reason);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(6);
  });

  it("streams chunks, then a usage chunk with no choices, then [DONE]; repeated prompts report cached tokens", async () => {
    const request = { model: chatSlug, messages: [{ role: "user" as const, content: "Tell me a story about a cat and a dog" }], max_tokens: 8, temperature: 0 };
    const first = await openai().chat.completions.create(request);
    const stream = await openai().chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      if (chunk.choices.length === 0) usage = chunk.usage;
      else {
        text += chunk.choices[0].delta.content ?? "";
        finish = chunk.choices[0].finish_reason ?? finish;
      }
    }
    expect(text).toBe(first.choices[0].message.content);
    expect(finish).toBe(first.choices[0].finish_reason);
    expect(usage!.completion_tokens).toBe(first.usage!.completion_tokens);
    expect(usage!.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it("rejects bad fields with the OpenAI error shape naming the field", async () => {
    const error = await openai().chat.completions.create({ model: chatSlug, messages: [{ role: "user", content: "hi" }], temperature: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("temperature");
    const missing = await openai().chat.completions.create({ model: "service/nope", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const unauthorised = await new OpenAI({ apiKey: "wrong", baseURL: `${base}/v1`, maxRetries: 0 }).chat.completions.create({ model: chatSlug, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(unauthorised).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("refuses max_tokens the context cannot hold after the prompt with a 400 naming both counts; top_p 0 is greedy", async () => {
    const error = await openai().chat.completions.create({ model: chatSlug, messages: [{ role: "user", content: "hi" }], max_tokens: 600 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.param).toBe("max_tokens");
    expect(bad.message).toMatch(/^400 max_tokens is 600, but the prompt has \d+ tokens and the context holds 512: at most \d+ tokens can be generated$/);
    const newer = await openai().chat.completions.create({ model: chatSlug, messages: [{ role: "user", content: "hi" }], max_completion_tokens: 600 }).catch((e: unknown) => e);
    expect((newer as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("max_completion_tokens");
    expect((newer as Error).message).toMatch(/^400 max_completion_tokens is 600, but/);
    const request = { model: chatSlug, messages: [{ role: "user" as const, content: "Count to three" }], max_tokens: 5, seed: 1 };
    const nucleusOfOne = await openai().chat.completions.create({ ...request, top_p: 0, temperature: 1.5 });
    const greedy = await openai().chat.completions.create({ ...request, temperature: 0 });
    expect(nucleusOfOne.choices[0].message.content).toBe(greedy.choices[0].message.content);
  });
});

describe("Anthropic messages", () => {
  it("answers non-streaming requests in the messages shape", async () => {
    const message = await anthropic().messages.create({
      model: messagesSlug, max_tokens: 6, system: "Be brief.", messages: [{ role: "user", content: "Hello there" }],
      temperature: 0, top_k: 5, top_p: 0.9, metadata: { user_id: "u1" },
    });
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.content.at(-1)?.type).toBe("text");
    expect(["end_turn", "max_tokens", "stop_sequence"]).toContain(message.stop_reason);
    expect(message.usage.output_tokens).toBeLessThanOrEqual(6);
  });

  it("streams events in order and ends with message_stop", async () => {
    const request = { model: messagesSlug, max_tokens: 8, messages: [{ role: "user" as const, content: "Tell me a story about a cat and a dog" }], temperature: 0 };
    const whole = await anthropic().messages.create(request);
    const stream = await anthropic().messages.create({ ...request, stream: true });
    const types: string[] = [];
    let text = "";
    let started: Anthropic.Usage | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
      if (event.type === "message_start") started = event.message.usage;
    }
    // The prompt's tokens, read from the cache or not (the whole response before it cached the same prompt).
    const counted = await anthropic().messages.countTokens({ model: messagesSlug, messages: request.messages });
    expect(started!.input_tokens + (started!.cache_read_input_tokens ?? 0)).toBe(counted.input_tokens);
    expect(whole.usage.input_tokens + (whole.usage.cache_read_input_tokens ?? 0)).toBe(counted.input_tokens);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(types.at(-2)).toBe("message_delta");
    expect(text).toBe(whole.content.map((block) => (block.type === "text" ? block.text : "")).join(""));
  });

  it("accepts x-api-key and rejects a wrong key with authentication_error", async () => {
    const error = await new Anthropic({ apiKey: "wrong", baseURL: base, maxRetries: 0 }).messages.create({ model: messagesSlug, max_tokens: 4, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    const missing = await anthropic().messages.create({ model: messagesSlug, max_tokens: 0, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it("counts a request's input tokens as the message's usage reports them, and refuses max_tokens past the context", async () => {
    const params = { model: messagesSlug, system: "Be brief.", messages: [{ role: "user" as const, content: "How many tokens is this?" }] };
    const counted = await anthropic().messages.countTokens(params);
    const message = await anthropic().messages.create({ ...params, max_tokens: 2 });
    expect(counted.input_tokens).toBe(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0));
    const tooMany = await anthropic().messages.create({ ...params, max_tokens: 4096 }).catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(Anthropic.BadRequestError);
    expect((tooMany as Error).message).toMatch(/max_tokens is 4096, but the prompt has \d+ tokens and the context holds 512/);
  });
});

describe("raw HTTP", () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: "POST", body, headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers } });

  it("gives clean errors for invalid JSON, content type, size, nesting and routes", async () => {
    const invalid = await post("/v1/chat/completions", "{not json");
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error.type).toBe("invalid_request_error");
    const type = await post("/v1/messages", "{}", { "content-type": "text/plain" });
    expect(type.status).toBe(400);
    expect(await type.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const large = await post("/v1/chat/completions", JSON.stringify({ pad: "x".repeat(100_000) }));
    expect(large.status).toBe(413);
    const deep = await post("/v1/chat/completions", "[".repeat(5000) + "]".repeat(5000));
    expect(deep.status).toBe(400);
    const route = await fetch(`${base}/v2/nothing`);
    expect(route.status).toBe(404);
    const tooLong = await post("/v1/chat/completions", JSON.stringify({ model: chatSlug, messages: [{ role: "user", content: "word ".repeat(2000) }] }));
    expect(tooLong.status).toBe(400);
    expect((await tooLong.json()).error.message).toMatch(/context/);
  });

  it("frees the request when the client disconnects mid-stream", async () => {
    const controller = new AbortController();
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: "POST", signal: controller.signal,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: chatSlug, messages: [{ role: "user", content: "go on forever" }], max_tokens: 400, stream: true }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    expect((await engine.stats()).running).toBe(1);
    controller.abort();
    await engineIdle();
    expect(await engine.stats()).toMatchObject({ running: 0, waiting: 0 });
    expect((await engine.stats()).requests.aborted).toBeGreaterThan(0);
  });

  it("answers a full queue with 503 server_overloaded (chat completions) and 529 (messages) and Retry-After", async () => {
    const registry = new ModelRegistry([{ model: engine.model, engine, slugs: defaultSlugs(engine.model), created: 1 }]);
    const full = await startServer({ registry, auth: new StaticKeys([KEY]), endpoints: createEndpoints(registry), maxQueue: 0 }, "127.0.0.1", 0);
    try {
      const at = `http://127.0.0.1:${full.port}`;
      const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
      const chat = await fetch(`${at}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify({ model: chatSlug, messages: [{ role: "user", content: "hi" }] }) });
      expect(chat.status).toBe(503);
      expect(chat.headers.get("retry-after")).toBe("2");
      expect(await chat.json()).toMatchObject({ error: { code: "server_overloaded" } });
      const messages = await fetch(`${at}/v1/messages`, { method: "POST", headers, body: JSON.stringify({ model: messagesSlug, max_tokens: 4, messages: [{ role: "user", content: "hi" }] }) });
      expect(messages.status).toBe(529);
      expect(await messages.json()).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
    } finally {
      full.close();
    }
  });

  it("never crashes on random bodies: every one gets a JSON error or a completion", async () => {
    const random = seededRandom(11);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const values: unknown[] = [null, true, 0, -1, 1e309, "x", "", [], {}, [1, "a"], { role: "user" }, "service/nope", 3.5, chatSlug, messagesSlug];
    for (let i = 0; i < 150; i++) {
      const body: Record<string, unknown> = { model: pick([chatSlug, messagesSlug, pick(values)]) };
      for (const key of ["messages", "max_tokens", "temperature", "stream", "stop", "system", "tools", "thinking", "top_k"]) if (random() < 0.5) body[key] = pick(values);
      if (random() < 0.5) body.messages = [{ role: pick(["user", "assistant", "tool", "x"]), content: pick(values) }];
      if (random() < 0.3) body.max_tokens = 2;
      const raw = random() < 0.1 ? JSON.stringify(body).slice(0, Math.floor(random() * 40)) : JSON.stringify(body);
      const response = await post(pick(["/v1/chat/completions", "/v1/messages"]), raw);
      expect([200, 400, 404]).toContain(response.status);
      await response.text();
    }
    expect((await fetch(`${base}/health`)).status).toBe(200);
    await engineIdle();
  });

  it("lists models behind the key and serves health and metrics", async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    expect((await fetch(`${base}/v1/models`)).status).toBe(401);
    const models = await (await fetch(`${base}/v1/models`, { headers: auth })).json();
    expect(models.object).toBe("list");
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining([chatSlug, messagesSlug]));
    expect((await fetch(`${base}/v1/models/${encodeURIComponent(chatSlug)}`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/loom_http_requests_total\{route="\/v1\/chat\/completions",status="200"\} \d+/);
    expect(metrics).toMatch(/loom_time_to_first_token_seconds_count [1-9]/);
    expect(metrics).toMatch(/loom_kv_blocks_free\{model=/);
  });
});
