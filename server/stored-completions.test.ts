// Stored chat completions end to end with the official openai SDK against a real server on the random-weight
// tiny-qwen3 model (server/testing/model-server.ts): `store: true` with metadata, whole and streamed, then list (with
// pages, order and the model and metadata filters), retrieve, update, delete and the messages list; service_tier;
// prompt_cache_key reaching the engine as the gateway's affinity key (server/cluster/affinity.test.ts routes on it);
// hostile queries and bodies refused naming the field; and, with the platform on, completions that belong to their
// organization.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_BACKENDS, freshPlatform } from "./platform/testing/test-databases.js";
import { type ModelServer, startModelServer } from "./testing/model-server.js";

/** Parsed JSON, read loosely: the shapes are what the assertions check. */
type Json = Record<string, any>;

/** Expects an OpenAI error body naming `param`. */
async function expectError(response: Response, status: number, param: string | null, message?: RegExp): Promise<void> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as Json;
  expect(body.error.param).toBe(param);
  if (message) expect(body.error.message).toMatch(message);
}

describe("stored chat completions (no platform: the key's own, in the embedded database)", () => {
  let model: ModelServer;
  let client: OpenAI;
  const ask = (extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
    client.chat.completions.create({ model: model.chatModel, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Tell me about the storm." }], max_tokens: 6, temperature: 0, ...extra });
  const raw = (path: string, init: RequestInit = {}) => fetch(`${model.base}${path}`, { ...init, headers: { authorization: `Bearer ${model.key}`, "content-type": "application/json", ...init.headers } });

  beforeAll(async () => {
    model = await startModelServer({ responses: true, threads: 1 });
    client = model.openai();
  }, 120_000);
  afterAll(async () => model?.close());

  it("keeps a completion with store: true and its metadata: retrieve, update, messages, delete", async () => {
    const created = await ask({ store: true, metadata: { user: "ada", topic: "storm" } });
    const retrieved = await client.chat.completions.retrieve(created.id);
    // The response object as it was answered, with its metadata.
    expect(retrieved).toStrictEqual({ ...created, metadata: { user: "ada", topic: "storm" } });

    const messages = await client.chat.completions.messages.list(created.id);
    expect(messages.data).toStrictEqual([
      { id: `${created.id}-0`, role: "system", content: "Be brief.", content_parts: null },
      { id: `${created.id}-1`, role: "user", content: "Tell me about the storm.", content_parts: null },
    ]);
    expect(messages.has_more).toBe(false);

    const updated = await client.chat.completions.update(created.id, { metadata: { user: "grace" } });
    expect((updated as Json).metadata).toStrictEqual({ user: "grace" });
    expect(updated.choices).toStrictEqual(created.choices);
    expect(((await client.chat.completions.retrieve(created.id)) as Json).metadata).toStrictEqual({ user: "grace" });

    expect(await client.chat.completions.delete(created.id)).toStrictEqual({ object: "chat.completion.deleted", id: created.id, deleted: true });
    await expect(client.chat.completions.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.chat.completions.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("keeps nothing without store: true", async () => {
    const created = await ask({ metadata: { user: "ada" } });
    await expect(client.chat.completions.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const notStored = await ask({ store: false });
    await expect(client.chat.completions.retrieve(notStored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("keeps a streamed completion as its chunks assemble, before the stream's end", async () => {
    const stream = await client.chat.completions.create({ model: model.chatModel, messages: [{ role: "user", content: "Count to three." }], max_tokens: 6, temperature: 0, stream: true, store: true, metadata: { kind: "stream" } });
    let content = "";
    let id = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      id = chunk.id;
      content += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    const stored = (await client.chat.completions.retrieve(id)) as Json;
    expect(stored).toMatchObject({ id, object: "chat.completion", model: model.chatModel, metadata: { kind: "stream" } });
    expect(stored.choices).toStrictEqual([{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: finish, logprobs: null }]);
    // No include_usage: the stored completion has the usage a whole response would have had.
    expect(stored.usage.completion_tokens).toBeGreaterThan(0);
    expect(stored.usage.total_tokens).toBe(stored.usage.prompt_tokens + stored.usage.completion_tokens);
    // The same as the whole response to the same greedy request.
    const whole = await client.chat.completions.create({ model: model.chatModel, messages: [{ role: "user", content: "Count to three." }], max_tokens: 6, temperature: 0 });
    expect(stored.choices[0].message).toStrictEqual(whole.choices[0]!.message);
  });

  it("lists completions in pages, in either order, filtered by metadata and model", async () => {
    const batch = `b${Date.now()}`;
    const made: string[] = [];
    for (let index = 0; index < 3; index++) made.push((await ask({ store: true, metadata: { batch, index: String(index) } })).id);
    const first = await client.chat.completions.list({ metadata: { batch }, limit: 2 });
    expect(first.data.map((completion) => completion.id)).toStrictEqual(made.slice(0, 2));
    expect(first.has_more).toBe(true);
    // The SDK follows `after` through the pages.
    const all: string[] = [];
    for await (const completion of client.chat.completions.list({ metadata: { batch }, limit: 2 })) all.push(completion.id);
    expect(all).toStrictEqual(made);
    const newestFirst = await client.chat.completions.list({ metadata: { batch }, order: "desc" });
    expect(newestFirst.data.map((completion) => completion.id)).toStrictEqual([...made].reverse());
    const one = await client.chat.completions.list({ metadata: { batch, index: "1" } });
    expect(one.data.map((completion) => completion.id)).toStrictEqual([made[1]]);
    expect((one.data[0] as Json).metadata).toStrictEqual({ batch, index: "1" });
    expect((await client.chat.completions.list({ metadata: { batch }, model: model.chatModel })).data).toHaveLength(3);
    expect((await client.chat.completions.list({ metadata: { batch }, model: "some-other-model" })).data).toHaveLength(0);
    const page = (await (await raw(`/v1/chat/completions?metadata[batch]=${batch}&limit=1&after=${made[0]}`)).json()) as Json;
    expect(page).toMatchObject({ object: "list", first_id: made[1], last_id: made[1], has_more: true });
  });

  it("pages the messages of a completion", async () => {
    const messages = Array.from({ length: 5 }, (_, index) => ({ role: "user" as const, content: `turn ${index}` }));
    const created = await ask({ store: true, messages: [...messages, { role: "user", content: [{ type: "text", text: "last " }, { type: "text", text: "one" }] }] });
    const page = await client.chat.completions.messages.list(created.id, { limit: 2, order: "desc" });
    expect(page.data.map((message) => message.id)).toStrictEqual([`${created.id}-5`, `${created.id}-4`]);
    expect(page.data[0]).toMatchObject({ role: "user", content: "last one", content_parts: [{ type: "text", text: "last " }, { type: "text", text: "one" }] });
    const all: string[] = [];
    for await (const message of client.chat.completions.messages.list(created.id, { limit: 4 })) all.push(message.content!);
    expect(all).toStrictEqual([...messages.map((message) => message.content), "last one"]);
  });

  it("answers service_tier auto or default as the default tier, whole and streamed, and refuses the others by name", async () => {
    expect((await ask({ service_tier: "auto" })).service_tier).toBe("default");
    expect((await ask({ service_tier: "default", store: true })).service_tier).toBe("default");
    const stream = await client.chat.completions.create({ model: model.chatModel, messages: [{ role: "user", content: "Hi" }], max_tokens: 3, stream: true, service_tier: "auto", stream_options: { include_usage: true } });
    for await (const chunk of stream) expect(chunk.service_tier).toBe("default");
    for (const tier of ["flex", "priority", "scale"]) {
      await expectError(await raw("/v1/chat/completions", { method: "POST", body: JSON.stringify({ model: model.chatModel, messages: [{ role: "user", content: "Hi" }], service_tier: tier }) }), 400, "service_tier");
    }
  });

  it("hands prompt_cache_key to the engine as the routing affinity key, from chat completions and Responses", async () => {
    await ask({ prompt_cache_key: "tenant-7" });
    expect(model.engine.requests.at(-1)?.affinityKey).toBe("tenant-7");
    await client.responses.create({ model: model.chatModel, input: "Hi", max_output_tokens: 2, prompt_cache_key: "tenant-8", store: false });
    expect(model.engine.requests.at(-1)?.affinityKey).toBe("tenant-8");
    await ask();
    expect(model.engine.requests.at(-1)?.affinityKey).toBeUndefined();
    await expectError(await raw("/v1/chat/completions", { method: "POST", body: JSON.stringify({ model: model.chatModel, messages: [{ role: "user", content: "Hi" }], prompt_cache_key: 7 }) }), 400, "prompt_cache_key");
  });

  it("refuses hostile metadata, queries and ids naming the field", async () => {
    const post = (body: Json) => raw("/v1/chat/completions", { method: "POST", body: JSON.stringify({ model: model.chatModel, messages: [{ role: "user", content: "Hi" }], max_tokens: 2, store: true, ...body }) });
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"]));
    await expectError(await post({ metadata: many }), 400, "metadata", /at most 16/);
    await expectError(await post({ metadata: { ["k".repeat(65)]: "v" } }), 400, "metadata", /at most 64 characters/);
    await expectError(await post({ metadata: { k: "v".repeat(513) } }), 400, "metadata.k", /at most 512 characters/);
    await expectError(await post({ metadata: { k: 3 } }), 400, "metadata.k");
    await expectError(await post({ store: "yes" }), 400, "store");

    await expectError(await raw("/v1/chat/completions?limit=0"), 400, "limit");
    await expectError(await raw("/v1/chat/completions?limit=1000"), 400, "limit");
    await expectError(await raw("/v1/chat/completions?limit=ten"), 400, "limit");
    await expectError(await raw("/v1/chat/completions?order=sideways"), 400, "order");
    await expectError(await raw("/v1/chat/completions?stream=true"), 400, "stream");
    await expectError(await raw(`/v1/chat/completions?${Array.from({ length: 17 }, (_, index) => `metadata[k${index}]=v`).join("&")}`), 400, "metadata");

    for (const id of ["nope", "chatcmpl-", "chatcmpl-%00", `chatcmpl-${"a".repeat(200)}`, "resp_123"]) {
      await expectError(await raw(`/v1/chat/completions/${id}`), 404, "completion_id");
      await expectError(await raw(`/v1/chat/completions/${id}/messages`), 404, "completion_id");
      await expectError(await raw(`/v1/chat/completions/${id}`, { method: "DELETE" }), 404, "completion_id");
    }
    const created = await ask({ store: true });
    const update = (body: unknown) => raw(`/v1/chat/completions/${created.id}`, { method: "POST", body: JSON.stringify(body) });
    await expectError(await update({ metadata: { a: "b" }, model: "x" }), 400, "model", /only metadata/);
    await expectError(await update({}), 400, "metadata");
    await expectError(await update({ metadata: { k: 1 } }), 400, "metadata.k");
    await expectError(await update([1]), 400, null);
    await expectError(await raw(`/v1/chat/completions/${created.id}/messages?limit=101`), 400, "limit");
    // null clears the metadata.
    expect(((await (await update({ metadata: null })).json()) as Json).metadata).toStrictEqual({});
    const put = await raw(`/v1/chat/completions/${created.id}`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")?.split(", ").sort()).toStrictEqual(["DELETE", "GET", "HEAD", "POST"]);
    // Without a key, nothing is read.
    expect((await fetch(`${model.base}/v1/chat/completions/${created.id}`)).status).toBe(401);
  });
});

const pglite = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;

describe("stored chat completions belong to their organization (platform on PGlite)", () => {
  let model: ModelServer;
  let remove: () => Promise<void>;
  let acme: OpenAI;
  let globex: OpenAI;

  beforeAll(async () => {
    const fresh = await freshPlatform(pglite);
    remove = fresh.remove;
    model = await startModelServer({ responses: true, platform: fresh.options, threads: 1 });
    const stores = model.platform!.stores;
    const acmeOrganization = await stores.organizations.create("Acme", { closedBeta: true });
    const globexOrganization = await stores.organizations.create("Globex", { closedBeta: true });
    acme = model.openai({ apiKey: (await stores.keys.create(acmeOrganization.id, "inference", "app")).key });
    globex = model.openai({ apiKey: (await stores.keys.create(globexOrganization.id, "inference", "app")).key });
  }, 120_000);

  afterAll(async () => {
    await model?.close();
    await remove?.();
  });

  it("answers another organization's completion id with 404 everywhere, and lists only the organization's own", async () => {
    const created = await acme.chat.completions.create({ model: model.chatModel, messages: [{ role: "user", content: "Hi" }], max_tokens: 3, store: true, metadata: { owner: "acme" } });
    await expect(globex.chat.completions.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(globex.chat.completions.update(created.id, { metadata: { owner: "globex" } })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(globex.chat.completions.messages.list(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(globex.chat.completions.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await globex.chat.completions.list()).data).toStrictEqual([]);
    // Still there, unchanged, for its owner.
    expect(((await acme.chat.completions.retrieve(created.id)) as Json).metadata).toStrictEqual({ owner: "acme" });
    expect((await acme.chat.completions.list()).data.map((completion) => completion.id)).toStrictEqual([created.id]);
  });
});
