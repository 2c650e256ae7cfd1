// POST /v1/embeddings through a `loom gateway` in front of a `loom worker` serving tiny-qwen3-embedding, as operators
// run them (this machine's PostgreSQL and Redis): the official openai SDK's embeddings.create, float and base64, a
// batch and dimensions, with usage; the vectors equal the model's own in process; a client that disconnects stops its
// request on the worker (its engine stops well short of the request and holds no KV block). The same processes answer
// the routes the embeddings route sits beside: legacy completions through the SDK's completions.create (a scoring
// request by token ids, n choices with a seed, streamed), and /tokenize, /detokenize, each equal to the model in process.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../engine/engine.js";
import type { EngineEvent, EngineRequest, EngineStats, TokenLogprob } from "../../engine/request.js";
import { type LoadedModel, loadModel } from "../../engine/load.js";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import type { Database } from "../platform/contract.js";
import { openDatabase } from "../platform/db/open-database.js";
import { deleteKeys, redisMissingReason, TEST_REDIS_URL, testKeyPrefix } from "../platform/limits/testing/redis.js";
import { createPlatformStores } from "../platform/store/platform-stores.js";
import { choiceSeed } from "../protocol/choices.js";
import { dropSchema, schemaUrl, TEST_BACKENDS, TEST_POSTGRES_URL, testSchemaName } from "../platform/testing/test-databases.js";
import { LOOM_CLI, type LoomProcess, startLoom, stopChild } from "../testing/loom-process.js";
import { modelKey } from "./frames.js";
import { WorkerLink } from "./worker-link.js";

const cliReason = existsSync(LOOM_CLI) ? undefined : `${LOOM_CLI} is missing: run \`npm run build\` first`;
const postgresReason = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!.reason;
const reason = cliReason ?? postgresReason ?? (await redisMissingReason());

const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TEXTS = ["Once upon a time", "The capital of France is Paris.", "A third, longer input to embed: ".repeat(5)];

/** What a worker's /health says: its requests in flight and submitted since start. */
const healthOf = async (worker: LoomProcess) => (await (await fetch(`${worker.base}/health`)).json()) as { status: string; inFlight: number; submitted: number };

describe.skipIf(skipOutsideCi(reason))(titled("embeddings through a gateway and a worker", reason), () => {
  const schema = testSchemaName();
  const clusterPrefix = `${testKeyPrefix()}cluster:`;
  const limitsPrefix = testKeyPrefix();
  let database: Database;
  let worker: LoomProcess;
  let gateway: LoomProcess;
  let openai: OpenAI;
  let modelName: string;
  let local: LoadedModel;
  const token = randomBytes(24).toString("hex");

  beforeAll(async () => {
    failIfMissing(reason);
    const url = TEST_POSTGRES_URL!;
    database = await openDatabase({ url, schema });
    const stores = createPlatformStores(database);
    const organization = await stores.organizations.create("embeddings", { requestsPerMinute: 100_000 });
    const key = (await stores.keys.create(organization.id, "inference", "embeddings")).key;

    const path = await ensureTestModel("tiny-qwen3-embedding", "gguf", "f32");
    local = await loadModel(path, { contextSize: 512, threads: 1 });
    const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_API_KEYS, ...inherited } = process.env;
    const env = { ...inherited, LOOM_CLUSTER_TOKEN: token, LOOM_CLUSTER_KEY_PREFIX: clusterPrefix, LOOM_REDIS_KEY_PREFIX: limitsPrefix };
    worker = await startLoom("worker", ["--model", path, "--register", TEST_REDIS_URL, "--port", "0", "--threads", "1", "--context", "512", "--heartbeat-ms", "200"], { env, children });
    gateway = await startLoom("gateway", ["--database-url", schemaUrl(url, schema), "--redis-url", TEST_REDIS_URL, "--port", "0"], { env, children });
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.base}/v1`, maxRetries: 0, timeout: 60_000 });
    for (let i = 0; i < 500 && modelName === undefined; i++) {
      modelName = (await openai.models.list()).data.map((entry) => entry.id).find((id) => !id.endsWith("-marathon"))!;
      if (modelName === undefined) await sleep(20);
    }
    expect(modelName).toBeDefined();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map(stopChild));
    await local?.dispose();
    await database?.close();
    if (TEST_POSTGRES_URL) await dropSchema(TEST_POSTGRES_URL, schema);
    await deleteKeys(clusterPrefix);
    await deleteKeys(limitsPrefix);
  });

  it("answers embeddings.create with the model's vectors, float and base64, batched and truncated, with usage", async () => {
    const engine = new Engine(local);
    try {
      const expected = await engine.embed({ inputs: TEXTS });
      const floats = await openai.embeddings.create({ model: modelName, input: TEXTS, encoding_format: "float" });
      expect(floats.model).toBe(modelName);
      expect(floats.data.map((item) => item.index)).toEqual([0, 1, 2]);
      expect(floats.usage.prompt_tokens).toBe(expected.tokenCounts.reduce((sum, count) => sum + count, 0));
      floats.data.forEach((item, i) => item.embedding.forEach((value, j) => expect(Math.abs(value - expected.embeddings[i]![j]!)).toBeLessThan(1e-6)));
      // The SDK's default: base64, which it decodes.
      const decoded = await openai.embeddings.create({ model: modelName, input: TEXTS[0]! });
      expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding.map((value) => Math.fround(value)));
      const short = await openai.embeddings.create({ model: modelName, input: TEXTS[1]!, encoding_format: "float", dimensions: 16 });
      const truncated = await engine.embed({ inputs: [TEXTS[1]!], dimensions: 16 });
      expect(short.data[0]!.embedding).toHaveLength(16);
      short.data[0]!.embedding.forEach((value, j) => expect(Math.abs(value - truncated.embeddings[0]![j]!)).toBeLessThan(1e-6));
      const refused = await openai.embeddings.create({ model: modelName, input: [[1, 2, 999_999]] }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("input[0][2]");
    } finally {
      engine.close();
    }
  }, 60_000);

  it("stops a disconnected client's request on the worker", async () => {
    const before = await healthOf(worker);
    // 2000 inputs of 120 token ids (ids: reserved exactly, within the organization's tokens per minute): seconds of work.
    const input = Array.from({ length: 2000 }, (_, i) => Array.from({ length: 120 }, (_, j) => 1000 + ((i * 131 + j * 17) % 100_000)));
    const controller = new AbortController();
    let settled: unknown;
    const request = openai.embeddings.create({ model: modelName, input }, { signal: controller.signal }).catch((error: unknown) => error).then((outcome) => (settled = outcome));
    while ((await healthOf(worker)).submitted === before.submitted && settled === undefined) await sleep(5);
    expect(settled).toBeUndefined();
    await sleep(100);
    controller.abort();
    expect(await request).toBeInstanceOf(OpenAI.APIUserAbortError);
    while ((await healthOf(worker)).inFlight > 0) await sleep(5);
    // The worker's engine, asked over a link of its own as a gateway asks: nothing held, and it stopped well short
    // of the request's 240,000 tokens.
    const link = new WorkerLink(worker.base, token, () => undefined);
    try {
      const description = await link.ready;
      const stats = await link.ask<EngineStats>(modelKey(description.models[0]!), { method: "stats" });
      expect(stats.running + stats.waiting).toBe(0);
      expect(stats.kvBlocks.used).toBe(0);
      expect(stats.tokens.computedPrompt).toBeLessThan(120_000);
    } finally {
      link.close("test over");
    }
    const next = await openai.embeddings.create({ model: modelName, input: "still serving", encoding_format: "float" });
    expect(next.data[0]!.embedding).toHaveLength(64);
  }, 60_000);

  /** The model's own events in this process for one engine request. */
  const runLocally = async (request: EngineRequest): Promise<EngineEvent[]> => {
    const engine = new Engine(local);
    try {
      const events: EngineEvent[] = [];
      for await (const event of engine.submit(request)) events.push(event);
      return events;
    } finally {
      engine.close();
    }
  };

  /** POSTs JSON to the gateway with the test's key; the status and parsed body. */
  const post = async (path: string, body: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${gateway.base}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${openai.apiKey}` }, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };

  it("scores a token-id prompt through completions.create (echo, logprobs 1, max_tokens 0) as the model does in process", async () => {
    const tokens = local.tokenizer.encode("The cat sat on the mat, and the dog", { addSpecial: true, parseSpecial: true });
    const completion = await openai.completions.create({ model: modelName, prompt: tokens, echo: true, logprobs: 1, max_tokens: 0 });
    expect(completion.object).toBe("text_completion");
    expect(completion.usage).toMatchObject({ prompt_tokens: tokens.length, completion_tokens: 0 });
    const choice = completion.choices[0]!;
    expect(choice.text).toBe(local.tokenizer.decode(tokens));
    const events = await runLocally({ input: { tokens }, maxTokens: 0, promptLogprobs: { top: 1 } });
    const expected = (events.find((event) => event.type === "prompt_logprobs") as Extract<EngineEvent, { type: "prompt_logprobs" }>).logprobs;
    const logprobs = choice.logprobs!;
    expect(logprobs.token_logprobs).toHaveLength(tokens.length);
    expect(logprobs.token_logprobs![0]).toBeNull();
    expect(logprobs.top_logprobs![0]).toBeNull();
    expect(logprobs.text_offset![0]).toBe(0);
    for (let i = 1; i < tokens.length; i++) {
      const entry = expected[i] as TokenLogprob;
      expect(Math.abs(logprobs.token_logprobs![i]! - entry.logprob), `token ${i}`).toBeLessThan(1e-5);
      // The most likely token there, named by its text, with its log-probability.
      const top = Object.values(logprobs.top_logprobs![i]!);
      expect(Math.max(...top)).toBeCloseTo(entry.top[0]!.logprob, 5);
    }
  }, 60_000);

  it("gives n = 2 choices with a seed, the same on a repeat and streamed, as the model samples them in process", async () => {
    const prompt = local.tokenizer.encode("Once upon a time", { addSpecial: true, parseSpecial: true });
    const body = { model: modelName, prompt, n: 2, seed: 11, temperature: 1, max_tokens: 8, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming;
    const first = await openai.completions.create(body);
    expect(first.choices.map((choice) => choice.index)).toEqual([0, 1]);
    expect(first.choices.every((choice) => choice.finish_reason === "length")).toBe(true);
    // The prompt billed once, both choices' tokens counted.
    expect(first.usage).toMatchObject({ prompt_tokens: prompt.length, completion_tokens: 16 });
    const again = await openai.completions.create(body);
    expect(again.choices.map((choice) => choice.text)).toEqual(first.choices.map((choice) => choice.text));
    // Choice j samples with seed + j, as one request alone in this process samples it.
    for (const j of [0, 1]) {
      const events = await runLocally({ input: { tokens: prompt }, maxTokens: 8, sampling: { temperature: 1, seed: choiceSeed(11, j) }, ignoreEndOfGeneration: true });
      const text = events.flatMap((event) => (event.type === "text" ? [event.text] : [])).join("");
      expect(first.choices[j]!.text, `choice ${j}`).toBe(text);
    }
    const stream = await openai.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    const texts = ["", ""];
    const finishes: (string | null)[] = [null, null];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        texts[choice.index] += choice.text;
        finishes[choice.index] = choice.finish_reason ?? finishes[choice.index]!;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts).toEqual(first.choices.map((choice) => choice.text));
    expect(finishes).toEqual(["length", "length"]);
    expect(usage).toMatchObject({ prompt_tokens: prompt.length, completion_tokens: 16 });
  }, 60_000);

  it("answers /tokenize and /detokenize in llama.cpp's and vLLM's shapes, as the model's tokenizer", async () => {
    const text = "Hello world, <|im_start|> once more";
    const llamaCpp = await post("/tokenize", { content: text, with_pieces: true });
    expect(llamaCpp.status).toBe(200);
    const ids = local.tokenizer.encode(text, { addSpecial: false, parseSpecial: true });
    expect(llamaCpp.body.tokens.map((entry: { id: number }) => entry.id)).toEqual(ids);
    expect(llamaCpp.body.tokens.map((entry: { piece: string }) => entry.piece).join("")).toBe(text);
    expect((await post("/detokenize", { tokens: ids })).body.content).toBe(text);

    const vllm = await post("/tokenize", { model: modelName, prompt: text, return_token_strs: true });
    expect(vllm.body.tokens).toEqual(local.tokenizer.encode(text, { addSpecial: true, parseSpecial: true }));
    expect(vllm.body.count).toBe(vllm.body.tokens.length);
    expect(vllm.body.max_model_len).toBe(512);
    // A conversation tokenized as a chat completion through the gateway runs it.
    const messages = [{ role: "user" as const, content: "Hello world" }];
    const chat = await post("/tokenize", { model: modelName, messages });
    const completion = await openai.chat.completions.create({ model: modelName, messages, max_tokens: 1 });
    expect(completion.usage!.prompt_tokens).toBe(chat.body.count);
    expect((await post("/detokenize", { model: modelName, tokens: chat.body.tokens })).body.prompt).toContain("<|im_start|>user\nHello world<|im_end|>");

    const refused = await post("/detokenize", { model: modelName, tokens: [1, 10_000_000] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe("tokens[1]");
  }, 60_000);
});
