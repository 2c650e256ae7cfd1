// The platform's HTTP surface with the platform on, on PGlite and on the machine's PostgreSQL: the official SDKs with
// database-issued keys, every error row of spec section 7 and every validation rule of 4.3-4.5, revocation,
// isolation between organizations, and key secrets kept out of list responses, errors and the log.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { ServerLog } from "../http/log.js";
import { type ModelServer, startModelServer } from "../testing/model-server.js";
import type { Organization } from "./contract.js";
import { TEST_BACKENDS, freshPlatform } from "./testing/test-databases.js";

/** Everything the server logged, to check that no secret reaches it. */
function capturingLog(): ServerLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, requestError: (requestId, route, error) => lines.push(`${requestId} ${route} ${error instanceof Error ? error.stack : String(error)}`) };
}

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`the platform over HTTP on ${backend.name}`, backend.reason), () => {
    let server: ModelServer;
    let remove: () => Promise<void>;
    const log = capturingLog();
    let acme: Organization;
    let globex: Organization;
    let acmeManagement: string;
    let globexManagement: string;
    const secrets: string[] = [];
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.base}${path}`, { headers });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    /** Mints an inference key through the management API, as a user does. */
    async function mint(management: string, name = "app"): Promise<{ id: string; key: string }> {
      const response = await post("/api/v1/management/api-keys", { name }, bearer(management));
      expect(response.status).toBe(200);
      const { apiKey } = await response.json();
      secrets.push(apiKey.key);
      return apiKey;
    }

    beforeAll(async () => {
      failIfMissing(backend.reason);
      const fresh = await freshPlatform(backend);
      remove = fresh.remove;
      server = await startModelServer({ platform: fresh.options, server: { log } });
      const stores = server.platform!.stores;
      acme = await stores.organizations.create("Acme", { closedBeta: true });
      globex = await stores.organizations.create("Globex");
      acmeManagement = (await stores.keys.create(acme.id, "management", "ops")).key;
      globexManagement = (await stores.keys.create(globex.id, "management", "ops")).key;
      secrets.push(acmeManagement, globexManagement);
    }, 120_000);

    afterAll(async () => {
      await server?.close();
      await remove?.();
    });

    it("serves the official SDKs with a key minted through the management API, and counts it in usage", async () => {
      const { key } = await mint(acmeManagement);
      const openai = new OpenAI({ apiKey: key, baseURL: `${server.base}/v1`, maxRetries: 0 });
      const completion = await openai.chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 3 });
      const anthropic = new Anthropic({ apiKey: key, baseURL: server.base, maxRetries: 0 });
      const message = await anthropic.messages.create({ model: server.messagesModel, max_tokens: 3, messages: [{ role: "user", content: "hi" }] });
      const usage = await (await get("/api/v1/usage", bearer(key))).json();
      const byModel = Object.fromEntries(usage.models.map((model: { slug: string; consumedToday: number }) => [model.slug, model.consumedToday]));
      const chatTokens = completion.usage!.prompt_tokens + completion.usage!.completion_tokens;
      const messageTokens = message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0) + message.usage.output_tokens;
      if (server.chatModel === server.messagesModel) expect(byModel[server.chatModel]).toBe(chatTokens + messageTokens);
      else expect(byModel).toEqual({ [server.chatModel]: chatTokens, [server.messagesModel]: messageTokens });
      expect(usage).toMatchObject({ billingMode: null, plan: { label: null, status: null, isUnlimitedComp: false, dailyAllowance: null }, credits: { balanceDollars: 0, overageThisPeriodDollars: 0 } });
      // The key's last use is recorded with its usage, with no write of its own.
      const listed = await (await get("/api/v1/management/api-keys", bearer(acmeManagement))).json();
      expect(listed.apiKeys.find((entry: { keyPrefix: string }) => key.startsWith(entry.keyPrefix)).lastUsedAt).not.toBeNull();
    });

    it("refuses an organization with a dedicated pool on loom serve (no pools here), naming the pool, and bills no tokens", async () => {
      const stores = server.platform!.stores;
      const pooled = await stores.organizations.create("Pooled", { pool: "acme-pool" });
      const { key } = await stores.keys.create(pooled.id, "inference", "pooled");
      const openai = new OpenAI({ apiKey: key, baseURL: `${server.base}/v1`, maxRetries: 0 });
      const refused = await openai.chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }).catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
      expect((refused as Error).message).toMatch(/dedicated pool 'acme-pool'/);
      for (const row of await stores.usage.rows(pooled.id)) expect([row.inputTokens, row.outputTokens]).toEqual([0, 0]);
      // Back on the shared pool, it is served.
      await stores.organizations.update(pooled.id, { pool: null });
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the accountant's organization cache
      const served = await openai.chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 3 });
      expect(served.choices).toHaveLength(1);
    });

    it("GET /api/v1/usage: 401 without a key, with an unknown, a revoked or a management key; 403 without closed-beta access", async () => {
      const { id, key } = await mint(acmeManagement, "soon revoked");
      expect((await get("/api/v1/usage", bearer(key))).status).toBe(200);
      expect((await fetch(`${server.base}/api/v1/management/api-keys/${id}`, { method: "DELETE", headers: bearer(acmeManagement) })).status).toBe(200);
      for (const headers of [{}, bearer(`sk-gw-${"x".repeat(43)}`), bearer(key), bearer(acmeManagement), { "x-api-key": "nonsense" }]) {
        const response = await get("/api/v1/usage", headers);
        expect(response.status).toBe(401);
        const body = await response.json();
        expect(Object.keys(body)).toEqual(["error"]);
        expect(typeof body.error).toBe("string");
      }
      const outsider = await mint(globexManagement);
      const refused = await get("/api/v1/usage", { "x-api-key": outsider.key });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: "Closed-beta access is required" });
    });

    it("an inference key reads only its own organization's usage", async () => {
      await server.platform!.stores.organizations.update(globex.id, { closedBeta: true });
      const globexKey = await mint(globexManagement);
      const globexUsage = await (await get("/api/v1/usage", bearer(globexKey.key))).json();
      expect(globexUsage.models).toEqual([]);
      const acmeUsage = await (await get("/api/v1/usage", bearer((await mint(acmeManagement)).key))).json();
      expect(acmeUsage.models.length).toBeGreaterThan(0);
    });

    it("POST /api/v1/management/api-keys checks name and body, and answers {apiKey} with the secret once", async () => {
      const cases: Array<[unknown, number, RegExp]> = [
        [{}, 400, /name is required/],
        [{ name: "" }, 400, /must not be empty/],
        [{ name: " \t " }, 400, /must not be empty/],
        [{ name: "x".repeat(256) }, 400, /at most 255 characters, got 256/],
        [{ name: 7 }, 400, /name must be a string/],
        [{ name: "ok", admin: true }, 400, /unknown field "admin"/],
        [[], 400, /must be a JSON object/],
        ["{not json", 400, /not valid JSON/],
      ];
      for (const [body, status, message] of cases) {
        const response = await post("/api/v1/management/api-keys", body, bearer(acmeManagement));
        expect(response.status, JSON.stringify(body)).toBe(status);
        expect((await response.json()).error).toMatch(message);
      }
      const created = await post("/api/v1/management/api-keys", { name: "é".repeat(255) }, bearer(acmeManagement));
      expect(created.status).toBe(200);
      const { apiKey } = await created.json();
      secrets.push(apiKey.key);
      expect(Object.keys(apiKey).sort()).toEqual(["createdAt", "id", "key", "keyPrefix", "name"]);
      expect(apiKey.key).toMatch(/^sk-gw-[A-Za-z0-9_-]{43,}$/);
      expect(apiKey.key.startsWith(apiKey.keyPrefix)).toBe(true);
      expect(apiKey.keyPrefix.length).toBeLessThan(16);
      expect(new Date(apiKey.createdAt).toISOString()).toBe(apiKey.createdAt);
    });

    it("management routes refuse inference keys, missing and unknown keys (401), and list only their organization's keys", async () => {
      const inference = await mint(acmeManagement);
      for (const headers of [{}, bearer(inference.key), bearer(`sk-mgmt-${"y".repeat(43)}`)]) {
        expect((await get("/api/v1/management/api-keys", headers)).status).toBe(401);
        expect((await post("/api/v1/management/api-keys", { name: "x" }, headers)).status).toBe(401);
      }
      const acmeList = await (await get("/api/v1/management/api-keys", { "x-api-key": acmeManagement })).json();
      const globexList = await (await get("/api/v1/management/api-keys", bearer(globexManagement))).json();
      const acmeIds = new Set(acmeList.apiKeys.map((key: { id: string }) => key.id));
      expect(acmeIds.has(inference.id)).toBe(true);
      for (const key of globexList.apiKeys) expect(acmeIds.has(key.id)).toBe(false);
      for (const key of acmeList.apiKeys) expect(Object.keys(key).sort()).toEqual(["createdAt", "id", "isActive", "keyPrefix", "lastUsedAt", "name"]);
    });

    it("DELETE revokes only the organization's own key: another organization's id is a 404 and keeps working", async () => {
      const victim = await mint(acmeManagement, "victim");
      const across = await fetch(`${server.base}/api/v1/management/api-keys/${victim.id}`, { method: "DELETE", headers: bearer(globexManagement) });
      expect(across.status).toBe(404);
      expect((await across.json()).error).toMatch(/no API key/);
      const openai = new OpenAI({ apiKey: victim.key, baseURL: `${server.base}/v1`, maxRetries: 0 });
      await openai.chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 1 });
      const revoked = await fetch(`${server.base}/api/v1/management/api-keys/${victim.id}`, { method: "DELETE", headers: bearer(acmeManagement) });
      expect(await revoked.json()).toEqual({ apiKey: { id: victim.id, isActive: false } });
      // Revoked on this process: refused at once, in each format's own shape.
      const error = await openai.chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      const anthropic = new Anthropic({ apiKey: victim.key, baseURL: server.base, maxRetries: 0 });
      expect(await anthropic.messages.create({ model: server.messagesModel, max_tokens: 1, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.AuthenticationError);
      const listed = await (await get("/api/v1/management/api-keys", bearer(acmeManagement))).json();
      expect(listed.apiKeys.find((key: { id: string }) => key.id === victim.id).isActive).toBe(false);
      // Hostile ids: a malformed escape names the field; an id of another shape is not found (or, too long for the request line, 431).
      const malformed = await fetch(`${server.base}/api/v1/management/api-keys/%ZZ`, { method: "DELETE", headers: bearer(acmeManagement) });
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toMatchObject({ field: "id" });
      for (const id of ["x".repeat(5000), "key_1' OR '1'='1", "%00"]) {
        const response = await fetch(`${server.base}/api/v1/management/api-keys/${encodeURIComponent(id)}`, { method: "DELETE", headers: bearer(acmeManagement) });
        expect([400, 404, 431], id.slice(0, 20)).toContain(response.status);
      }
    });

    it("inference refuses management keys and malformed keys before reading the body, and unknown platform paths answer {error}", async () => {
      const response = await post("/v1/chat/completions", { model: server.chatModel, messages: [{ role: "user", content: "hi" }] }, bearer(acmeManagement));
      expect(response.status).toBe(401);
      expect((await response.json()).error.message).toMatch(/takes inference keys/);
      const unknown = await get("/api/v1/nothing-here", bearer(acmeManagement));
      expect(unknown.status).toBe(404);
      expect(Object.keys(await unknown.json())).toEqual(["error"]);
      const wrongMethod = await fetch(`${server.base}/api/v1/usage`, { method: "POST", headers: bearer(acmeManagement) });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD");
    });

    it("answers admitted requests with rate-limit headers in both formats", async () => {
      const { key } = await mint(acmeManagement);
      const chat = await post("/v1/chat/completions", { model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 1 }, bearer(key));
      expect(chat.status).toBe(200);
      expect(chat.headers.get("x-ratelimit-limit-requests")).toBe("100");
      expect(Number(chat.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(1_000_000);
      const messages = await post("/v1/messages", { model: server.messagesModel, max_tokens: 1, stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": key, "anthropic-version": "2023-06-01" });
      expect(messages.status).toBe(200);
      await messages.text();
      expect(messages.headers.get("anthropic-ratelimit-requests-limit")).toBe("100");
      expect(messages.headers.get("anthropic-ratelimit-tokens-reset")).toMatch(/^\d{4}-\d\d-\d\dT/);
    });

    it("never shows a key's secret in list responses, error bodies or the server log", async () => {
      const everything = JSON.stringify(await (await get("/api/v1/management/api-keys", bearer(acmeManagement))).json()) +
        JSON.stringify(await (await get("/api/v1/usage", bearer(acmeManagement))).json()) + log.lines.join("\n");
      for (const secret of secrets) {
        const body = secret.slice(secret.indexOf("-", 3) + 1);
        expect(everything).not.toContain(body);
        expect(everything).not.toContain(body.slice(8));
      }
    });
  });
}

describe.skipIf(skipOutsideCi(TEST_BACKENDS[1]!.reason))(titled("the platform when its database goes away", TEST_BACKENDS[1]!.reason), () => {
  it("answers the usage endpoint with 502, and a response whose usage cannot be recorded with an error, never a 500, a success or a hang", async () => {
    failIfMissing(TEST_BACKENDS[1]!.reason);
    const fresh = await freshPlatform(TEST_BACKENDS[1]!, { cacheMs: 60_000 });
    const server = await startModelServer({ platform: fresh.options });
    try {
      const stores = server.platform!.stores;
      const organization = await stores.organizations.create("Acme", { closedBeta: true });
      const { key } = await stores.keys.create(organization.id, "inference", "app");
      expect((await fetch(`${server.base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      const chatRequest = (stream: boolean) => fetch(`${server.base}/v1/chat/completions`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, signal: AbortSignal.timeout(10_000),
        body: JSON.stringify({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 1, stream }),
      });
      // Served while the database answers: the key and the organization are now cached.
      expect((await chatRequest(false)).status).toBe(200);
      await server.platform!.database.close();
      // Generated, but its usage cannot be recorded: not delivered as a success, in either form.
      const whole = await chatRequest(false);
      expect(whole.status).toBe(502);
      expect((await whole.json()).error.message).toMatch(/usage could not be recorded/);
      const streamed = await chatRequest(true);
      const events = await streamed.text();
      expect(events).toMatch(/usage could not be recorded/);
      expect(events).not.toMatch(/"finish_reason":"(length|stop)"/);
      const usage = await fetch(`${server.base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
      expect(usage.status).toBe(502);
      expect((await usage.json()).error).toMatch(/usage could not be read/);

    } finally {
      await server.close().catch(() => undefined);
      await fresh.remove();
    }
  }, 60_000);
});
