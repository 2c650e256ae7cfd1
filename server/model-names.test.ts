// The names a model answers to over HTTP, against a real server on the bundled stories260K with the platform on: the
// spec's slugs, and beside them the model's own name (`stories260k`) and `default`, through the official OpenAI and
// Anthropic SDKs on chat completions, the Responses API and messages (and count_tokens); both /v1/models listings name
// them; a request under an alias is answered, accounted and restricted under its model's slug; /health counts models.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLED_MODEL } from "./cli/default-model.js";
import type { Organization } from "./platform/contract.js";
import { TEST_BACKENDS, freshPlatform } from "./platform/testing/test-databases.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

const PGLITE = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;
const CHAT = "service/tim-stories260k-27b";
const MESSAGES = "service/llama-marathon";

describe("a model's own name and `default` beside its slugs", () => {
  let server: ModelServer;
  let remove: () => Promise<void>;
  let organization: Organization;
  let key: string;
  const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
  const openai = (secret = key) => new OpenAI({ apiKey: secret, baseURL: `${server.base}/v1`, maxRetries: 0 });
  const anthropic = (secret = key) => new Anthropic({ apiKey: secret, baseURL: server.base, maxRetries: 0 });
  const usageByModel = async (secret = key): Promise<Record<string, number>> => {
    const usage = (await (await fetch(`${server.base}/api/v1/usage`, { headers: bearer(secret) })).json()) as { models: Array<{ slug: string; consumedToday: number }> };
    return Object.fromEntries(usage.models.map((model) => [model.slug, model.consumedToday]));
  };

  beforeAll(async () => {
    const fresh = await freshPlatform(PGLITE);
    remove = fresh.remove;
    server = await startModelServer({ modelPath: BUNDLED_MODEL.path, contextSize: 256, platform: fresh.options, responses: true });
    organization = await server.platform!.stores.organizations.create("Names", { closedBeta: true });
    key = (await server.platform!.stores.keys.create(organization.id, "inference", "app")).key;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await remove?.();
  });

  it("keeps the spec's slugs for the bundled model", () => {
    expect([server.chatModel, server.messagesModel]).toEqual([CHAT, MESSAGES]);
  });

  it.each(["stories260k", "default", CHAT])("serves chat completions and the Responses API under %s, answering with the slug", async (name) => {
    const completion = await openai().chat.completions.create({ model: name, messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 3 });
    expect(completion.model).toBe(CHAT);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    const chunks: string[] = [];
    const stream = await openai().chat.completions.create({ model: name, messages: [{ role: "user", content: "Once" }], max_tokens: 2, stream: true });
    for await (const chunk of stream) chunks.push(chunk.model);
    expect(new Set(chunks)).toEqual(new Set([CHAT]));
    const response = await openai().responses.create({ model: name, input: "Once upon a time", max_output_tokens: 3 });
    expect(response.model).toBe(CHAT);
    expect(response.status).toMatch(/^(completed|incomplete)$/);
  });

  it.each(["stories260k", "default", MESSAGES])("serves messages and count_tokens under %s, answering with the slug", async (name) => {
    const message = await anthropic().messages.create({ model: name, max_tokens: 3, messages: [{ role: "user", content: "Once upon a time" }] });
    expect(message.model).toBe(MESSAGES);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const counted = await anthropic().messages.countTokens({ model: name, messages: [{ role: "user", content: "Once upon a time" }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  it("lists the aliases after the slugs in both formats' /v1/models, and finds each by id", async () => {
    const listed = await openai().models.list();
    expect(listed.data.map((model) => model.id)).toEqual([CHAT, MESSAGES, "stories260k", "default"]);
    expect(new Set(listed.data.map((model) => model.object))).toEqual(new Set(["model"]));
    expect((await openai().models.retrieve("stories260k")).id).toBe("stories260k");
    const page = await anthropic().models.list();
    expect(page.data.map((model) => model.id)).toEqual([CHAT, MESSAGES, "stories260k", "default"]);
    expect(page.data.every((model) => model.type === "model")).toBe(true);
    expect((await anthropic().models.retrieve("default")).id).toBe("default");
  });

  it("names every accepted model when one is unknown", async () => {
    const chat = await openai().chat.completions.create({ model: "stories", messages: [{ role: "user", content: "hi" }], max_tokens: 1 }).catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError);
    expect((chat as Error).message).toContain(`available: ${CHAT}, stories260k, default`);
    const message = await anthropic().messages.create({ model: "stories", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error);
    expect(message).toBeInstanceOf(Anthropic.NotFoundError);
    expect((message as Error).message).toContain(`available: ${MESSAGES}, stories260k, default`);
  });

  it("accounts a request under an alias to its model's slug, and restricts it as that slug", async () => {
    const fresh = (await server.platform!.stores.keys.create(organization.id, "inference", "billing")).key;
    const before = await usageByModel(fresh);
    const completion = await openai(fresh).chat.completions.create({ model: "stories260k", messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
    const message = await anthropic(fresh).messages.create({ model: "default", max_tokens: 2, messages: [{ role: "user", content: "hi" }] });
    const after = await usageByModel(fresh);
    expect(Object.keys(after).sort()).toEqual([MESSAGES, CHAT].sort());
    expect(after[CHAT]! - (before[CHAT] ?? 0)).toBe(completion.usage!.total_tokens);
    expect(after[MESSAGES]! - (before[MESSAGES] ?? 0)).toBe(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0) + message.usage.output_tokens);

    // A key limited to the chat slug may use the model under its aliases there, and not in the messages format.
    const limited = (await server.platform!.stores.keys.create(organization.id, "inference", "limited", { allowedModels: [CHAT] })).key;
    expect((await openai(limited).chat.completions.create({ model: "default", messages: [{ role: "user", content: "hi" }], max_tokens: 1 })).model).toBe(CHAT);
    const refused = await anthropic(limited).messages.create({ model: "default", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((refused as Error).message).toContain(`'${MESSAGES}'`);
  });

  it("counts models on /health, not the names they answer to", async () => {
    const health = await (await fetch(`${server.base}/health`)).json();
    expect(health).toMatchObject({ status: "ok", models: 1 });
  });
});
