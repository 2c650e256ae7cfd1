// POST /v1/embeddings with the official openai SDK against a server on tiny-qwen3-embedding (random weights, last-token
// pooling): a string, a batch of strings, token ids, base64 (which the SDK decodes itself), dimensions, usage; the
// vectors equal the engine's own for the same inputs; hostile inputs each refused with a 400 naming the field; a
// generation-only model refuses the route by name.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

let server: ModelServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startModelServer({ preset: "tiny-qwen3-embedding", contextSize: 128, threads: 1 });
  client = server.openai();
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** POSTs JSON with the server's key; the status and parsed body. */
async function post(path: string, body: unknown, base = server.base, key = server.key): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const norm = (vector: readonly number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe("POST /v1/embeddings", () => {
  it("embeds a string: one unit vector of the model's width, usage in prompt tokens", async () => {
    const response = await client.embeddings.create({ model: server.chatModel, input: "Once upon a time", encoding_format: "float" });
    expect(response.object).toBe("list");
    expect(response.model).toBe(server.chatModel);
    expect(response.data).toHaveLength(1);
    expect(response.data[0]!.object).toBe("embedding");
    expect(response.data[0]!.index).toBe(0);
    expect(response.data[0]!.embedding).toHaveLength(64);
    expect(norm(response.data[0]!.embedding)).toBeCloseTo(1, 5);
    expect(response.usage.prompt_tokens).toBeGreaterThan(0);
    expect(response.usage.total_tokens).toBe(response.usage.prompt_tokens);
  }, 60_000);

  it("embeds a batch in input order, each vector as it is alone; token ids give their text's vector", async () => {
    const texts = ["The cat sat on the mat", "A quick brown fox", "Once upon a time"];
    const batch = await client.embeddings.create({ model: server.chatModel, input: texts, encoding_format: "float" });
    expect(batch.data.map((item) => item.index)).toEqual([0, 1, 2]);
    const alone = await client.embeddings.create({ model: server.chatModel, input: texts[2]!, encoding_format: "float" });
    batch.data[2]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(alone.data[0]!.embedding[i]!, 6));
    expect(batch.data[0]!.embedding).not.toEqual(batch.data[1]!.embedding);
    const { tokens } = (await post("/tokenize", { model: server.chatModel, prompt: texts[0] })).body as { tokens: number[] };
    const byIds = await client.embeddings.create({ model: server.chatModel, input: [tokens], encoding_format: "float" });
    expect(byIds.usage.prompt_tokens).toBe(tokens.length);
    byIds.data[0]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(batch.data[0]!.embedding[i]!, 6));
    const flatIds = await client.embeddings.create({ model: server.chatModel, input: tokens, encoding_format: "float" });
    expect(flatIds.data[0]!.embedding).toEqual(byIds.data[0]!.embedding);
  }, 60_000);

  it("answers base64 (little-endian float32) that the SDK decodes to the float answer", async () => {
    const floats = await client.embeddings.create({ model: server.chatModel, input: "base64 please", encoding_format: "float" });
    // The SDK asks for base64 when no format is given, and decodes it into numbers.
    const decoded = await client.embeddings.create({ model: server.chatModel, input: "base64 please" });
    expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding.map((value) => Math.fround(value)));
    const raw = await post("/v1/embeddings", { model: server.chatModel, input: "base64 please", encoding_format: "base64" });
    const bytes = Buffer.from(raw.body.data[0].embedding as string, "base64");
    expect(bytes.length).toBe(64 * 4);
    expect(bytes.readFloatLE(4)).toBe(Math.fround(floats.data[0]!.embedding[1]!));
  }, 60_000);

  it("truncates to dimensions and norms again", async () => {
    const full = await client.embeddings.create({ model: server.chatModel, input: "shorter please", encoding_format: "float" });
    const short = await client.embeddings.create({ model: server.chatModel, input: "shorter please", encoding_format: "float", dimensions: 16 });
    expect(short.data[0]!.embedding).toHaveLength(16);
    expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 5);
    const head = full.data[0]!.embedding.slice(0, 16);
    const scale = norm(head);
    short.data[0]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(head[i]! / scale, 5));
  }, 60_000);

  it("stops the request's inputs on the engine when the client disconnects, and the engine serves the next one", async () => {
    const before = await server.worker.stats();
    // 1500 inputs of about 100 tokens: hundreds of steps, so the disconnect lands mid-way.
    const input = Array.from({ length: 1500 }, (_, i) => `${i} ${"many words to embed in one long input, ".repeat(12)}`);
    const controller = new AbortController();
    const request = client.embeddings.create({ model: server.chatModel, input }, { signal: controller.signal, maxRetries: 0 }).catch((error: unknown) => error);
    for (let i = 0; i < 2000 && (await server.worker.stats()).tokens.computedPrompt === before.tokens.computedPrompt; i++) await new Promise((resolve) => setTimeout(resolve, 2));
    controller.abort();
    expect(await request).toBeInstanceOf(OpenAI.APIUserAbortError);
    let after = await server.worker.stats();
    for (let i = 0; i < 2000 && (after.running > 0 || after.waiting > 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      after = await server.worker.stats();
    }
    expect(after.running + after.waiting).toBe(0);
    expect(after.kvBlocks.used).toBe(0);
    // Well short of its 150,000 tokens: its inputs stopped.
    expect(after.tokens.computedPrompt - before.tokens.computedPrompt).toBeLessThan(75_000);
    const next = await client.embeddings.create({ model: server.chatModel, input: "still serving", encoding_format: "float" });
    expect(next.data[0]!.embedding).toHaveLength(64);
  }, 60_000);

  it.each([
    [{ input: "" }, "input"],
    [{ input: [] }, "input"],
    [{ input: ["a", 3] }, "input[1]"],
    [{ input: [[1, 2], [3, -1]] }, "input[1][1]"],
    [{ input: [[1, 2], [3, 151936]] }, "input[1][1]"],
    [{ input: [5, 1.5] }, "input[1]"],
    [{ input: "x", encoding_format: "int8" }, "encoding_format"],
    [{ input: "x", dimensions: 65 }, "dimensions"],
    [{ input: "x", dimensions: 0 }, "dimensions"],
    [{ input: "x", stream: true }, "stream"],
    [{ input: ["x", "word ".repeat(200)] }, "input[1]"],
    [{ input: Array.from({ length: 2049 }, () => "x") }, "input"],
  ])("refuses %j with a 400 naming %s", async (fields, param) => {
    const { status, body } = await post("/v1/embeddings", { model: server.chatModel, ...fields });
    expect(status).toBe(400);
    expect(body.error.param).toBe(param);
    expect(body.error.message).toContain(param);
  }, 60_000);
});

describe("a generation-only model", () => {
  let plain: ModelServer;
  beforeAll(async () => {
    plain = await startModelServer({ contextSize: 128, threads: 1 });
  }, 120_000);
  afterAll(async () => {
    await plain?.close();
  });

  it("refuses /v1/embeddings by name", async () => {
    const error = await plain.openai().embeddings.create({ model: plain.chatModel, input: "hello" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(`model ${plain.chatModel} does not produce embeddings (its GGUF declares no pooling_type)`);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("model");
  }, 60_000);
});
