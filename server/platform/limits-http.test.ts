// The platform's limits as clients meet them, through real HTTP on the tiny test model: bursts at 3x the requests
// and tokens per minute admit the limit and refuse the rest in each format's own shape with Retry-After and
// rate-limit headers; settlement returns unused reservation; windows slide (no second full burst at a boundary); the
// daily cap survives a restart (seeded from the usage table); two `loom serve` processes on one Redis share one
// limit; a key revoked on one process is refused by the other within a second; an unreachable Redis refuses (fail
// closed) unless --limits-fail-open.
import type { ChildProcess } from "node:child_process";
import { cpSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PromptCounter } from "../../engine/prompt-counter.js";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { startLoomServe, stopChild } from "../testing/loom-process.js";
import { type ModelServer, startModelServer } from "../testing/model-server.js";
import type { Database } from "./contract.js";
import { openDatabase } from "./db/open-database.js";
import { deleteKeys, inspectionClient, redisMissingReason, TEST_REDIS_URL, testKeyPrefix } from "./limits/testing/redis.js";
import type { OrganizationPatch } from "./store/organization-patch.js";
import { createPlatformStores, type PlatformStores } from "./store/platform-stores.js";
import { dropSchema, schemaUrl, TEST_BACKENDS, TEST_POSTGRES_URL, migratedDataDir, temporaryDataDir, testSchemaName } from "./testing/test-databases.js";

const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;
const postgresReason = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!.reason;
const redisReason = await redisMissingReason();

/** One HTTP answer, whichever client got it. */
interface Outcome {
  format: "openai" | "anthropic";
  status: number;
  headers: Headers;
  /** The JSON body as it came over the wire (`{error: {...}}` for chat completions, `{type: "error", ...}` for messages). */
  body: any;
}

/** Chat completions through the official client; an API error becomes an Outcome (the SDK keeps the body's `error`). */
async function viaOpenAi(client: OpenAI, params: OpenAI.ChatCompletionCreateParamsNonStreaming): Promise<Outcome> {
  try {
    const { data, response } = await client.chat.completions.create(params).withResponse();
    return { format: "openai", status: response.status, headers: response.headers, body: data };
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return { format: "openai", status: error.status, headers: error.headers!, body: { error: error.error } };
    throw error;
  }
}

/** Messages through the official client; an API error becomes an Outcome (the SDK keeps the whole body). */
async function viaAnthropic(client: Anthropic, params: Anthropic.MessageCreateParamsNonStreaming): Promise<Outcome> {
  try {
    const { data, response } = await client.messages.create(params).withResponse();
    return { format: "anthropic", status: response.status, headers: response.headers, body: data };
  } catch (error) {
    if (error instanceof Anthropic.APIError && error.status !== undefined) return { format: "anthropic", status: error.status, headers: error.headers!, body: error.error };
    throw error;
  }
}

/**
 * A raw POST in a format's own way of presenting the key. Sent again once when the connection was reset: fetch reuses
 * idle keep-alive connections, and on a crowded machine one the server has just closed for idleness can be picked
 * (the server closed it unread, so sending the request again counts it once).
 */
async function post(base: string, format: "openai" | "anthropic", key: string, body: object): Promise<Outcome> {
  try {
    return await postOnce(base, format, key, body);
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== "ECONNRESET") throw error;
    return postOnce(base, format, key, body);
  }
}

async function postOnce(base: string, format: "openai" | "anthropic", key: string, body: object): Promise<Outcome> {
  const response = await fetch(`${base}${format === "openai" ? "/v1/chat/completions" : "/v1/messages"}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(format === "openai" ? { authorization: `Bearer ${key}` } : { "x-api-key": key, "anthropic-version": "2023-06-01" }) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { format, status: response.status, headers: response.headers, body: await response.json() };
}

const chatBody = (model: string, maxTokens: number) => ({ model, messages: [{ role: "user" as const, content: "hi" }], max_tokens: maxTokens, temperature: 0 });

/** OpenAI's duration text ("0s", "120ms", "2.5s", "1m0s"). */
const DURATION = /^(\d+h)?(\d+m)?(\d+(\.\d+)?s|\d+ms)$/;
/** Anthropic's reset: RFC 3339, UTC, to the second. */
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** Checks the rate-limit headers of one response: both trios, Anthropic's names on messages, the limits given. */
function expectRateLimitHeaders(outcome: Outcome, limits: { requests: number; tokens: number }): void {
  const header = (name: string) => outcome.headers.get(name);
  for (const [kind, limit] of [["requests", limits.requests], ["tokens", limits.tokens]] as const) {
    expect(header(`x-ratelimit-limit-${kind}`)).toBe(String(limit));
    expect(header(`x-ratelimit-remaining-${kind}`)).toMatch(/^\d+$/);
    expect(Number(header(`x-ratelimit-remaining-${kind}`))).toBeLessThanOrEqual(limit);
    expect(header(`x-ratelimit-reset-${kind}`)).toMatch(DURATION);
    if (outcome.format === "anthropic") {
      expect(header(`anthropic-ratelimit-${kind}-limit`)).toBe(String(limit));
      expect(header(`anthropic-ratelimit-${kind}-remaining`)).toBe(header(`x-ratelimit-remaining-${kind}`));
      expect(header(`anthropic-ratelimit-${kind}-reset`)).toMatch(RFC3339);
    } else {
      expect(header(`anthropic-ratelimit-${kind}-limit`)).toBeNull();
    }
  }
}

/** Checks a 429 in its format's own shape, with Retry-After in whole seconds within `maxRetryAfter`. */
function expectRateLimited(outcome: Outcome, maxRetryAfter: number, message: RegExp): void {
  expect(outcome.status).toBe(429);
  if (outcome.format === "openai") {
    expect(outcome.body).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
    expect(outcome.body.error.message).toMatch(message);
  } else {
    expect(outcome.body).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(outcome.body.error.message).toMatch(message);
  }
  const retryAfter = outcome.headers.get("retry-after");
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(maxRetryAfter);
}

const admittedOf = (outcomes: Outcome[]) => outcomes.filter((outcome) => outcome.status === 200);
const refusedOf = (outcomes: Outcome[]) => outcomes.filter((outcome) => outcome.status !== 200);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("limits through HTTP on one server (PGlite, limits in memory)", () => {
  let dataDir: string;
  let server: ModelServer;
  let stores: PlatformStores;
  /** Prompt tokens of chatBody's conversation in chat completions, measured by a probe request. */
  let promptTokens: number;
  let organizationNumber = 0;

  /** A fresh organization with `patch` and one inference key (with `keyLimits`), and clients of both SDKs on it. */
  async function tenant(patch: OrganizationPatch, keyLimits?: { requestsPerMinute?: number; tokensPerMinute?: number }) {
    const organization = await stores.organizations.create(`limits-http ${++organizationNumber}`, patch);
    const { key } = await stores.keys.create(organization.id, "inference", "burst", keyLimits ? { limits: keyLimits } : undefined);
    return { organization, key, openai: server.openai({ apiKey: key }), anthropic: server.anthropic({ apiKey: key }) };
  }

  beforeAll(async () => {
    dataDir = await migratedDataDir();
    // maxQueue above the largest burst: requests past the engine queue would be 503s before the limits see them.
    server = await startModelServer({ platform: { dataDir }, server: { maxQueue: 2048 } });
    stores = server.platform!.stores;
    const probe = await tenant({});
    const outcome = await viaOpenAi(probe.openai, chatBody(server.chatModel, 1));
    expect(outcome.status).toBe(200);
    promptTokens = outcome.body.usage.prompt_tokens;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("admits an organization's rpm out of a 3x burst over both formats and refuses the rest with 429, Retry-After and rate-limit headers", async () => {
    const limit = 20;
    const { openai, anthropic } = await tenant({ requestsPerMinute: limit });
    const outcomes = await Promise.all(Array.from({ length: 3 * limit }, (_, index) => index % 2 === 0
      ? viaOpenAi(openai, chatBody(server.chatModel, 2))
      : viaAnthropic(anthropic, { model: server.messagesModel, max_tokens: 2, messages: [{ role: "user", content: "hi" }] })));

    const admitted = admittedOf(outcomes);
    // GCRA at 20/min gains one request every 3 s: a burst that takes under 3 s admits exactly the limit.
    expect(admitted.length).toBeGreaterThanOrEqual(limit);
    expect(admitted.length).toBeLessThanOrEqual(limit + 1);
    for (const outcome of refusedOf(outcomes)) {
      // Retry-After says when one request fits again (60 s / 20), not when a minute ends.
      expectRateLimited(outcome, 60 / limit, /organization's requests per minute \(20\)/);
      expectRateLimitHeaders(outcome, { requests: limit, tokens: 1_000_000 });
      expect(outcome.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    }
    for (const outcome of admitted) expectRateLimitHeaders(outcome, { requests: limit, tokens: 1_000_000 });
    // Each admission took one request of the window: the remaining counts the admitted saw are all different.
    const remaining = admitted.map((outcome) => Number(outcome.headers.get("x-ratelimit-remaining-requests")));
    expect(new Set(remaining).size).toBeGreaterThanOrEqual(limit);
    expect(Math.min(...remaining)).toBe(0);
    expect(new Set(outcomes.map((outcome) => outcome.format))).toEqual(new Set(["openai", "anthropic"]));
  });

  it("admits a key's rpm out of a 3x burst under a looser organization limit, and leaves the organization's other keys alone", async () => {
    const limit = 15;
    const { organization, openai, anthropic } = await tenant({ requestsPerMinute: 1000 }, { requestsPerMinute: limit });
    const outcomes = await Promise.all(Array.from({ length: 3 * limit }, (_, index) => index % 2 === 0
      ? viaAnthropic(anthropic, { model: server.messagesModel, max_tokens: 2, messages: [{ role: "user", content: "hi" }] })
      : viaOpenAi(openai, chatBody(server.chatModel, 2))));

    const admitted = admittedOf(outcomes);
    expect(admitted.length).toBeGreaterThanOrEqual(limit);
    expect(admitted.length).toBeLessThanOrEqual(limit + 1);
    // The headers show the tightest requests limit: the key's.
    for (const outcome of refusedOf(outcomes)) {
      expectRateLimited(outcome, 60 / limit, /API key's requests per minute \(15\)/);
      expectRateLimitHeaders(outcome, { requests: limit, tokens: 1_000_000 });
    }
    for (const outcome of admitted) expectRateLimitHeaders(outcome, { requests: limit, tokens: 1_000_000 });

    const other = await stores.keys.create(organization.id, "inference", "unlimited key");
    const outcome = await post(server.base, "anthropic", other.key, { model: server.messagesModel, max_tokens: 1, messages: [{ role: "user", content: "hi" }] });
    expect(outcome.status).toBe(200);
    expectRateLimitHeaders(outcome, { requests: 1000, tokens: 1_000_000 });
  });

  it("admits a third of a burst reserving 3x the tokens per minute (prompt + max_tokens), overshooting by at most one request's max_tokens", async () => {
    const maxTokens = 40;
    const cost = promptTokens + maxTokens;
    const limit = 10 * cost;
    const { openai } = await tenant({ tokensPerMinute: limit });
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => viaOpenAi(openai, chatBody(server.chatModel, maxTokens))));

    const admitted = admittedOf(outcomes);
    // Greedy decoding of random weights runs to max_tokens: every admitted request used what it reserved.
    for (const outcome of admitted) expect(outcome.body.choices[0].finish_reason).toBe("length");
    // At limit/60 tokens per second a request's worth takes 6 s to come back: the burst admits 10 (11 if slow).
    expect(admitted.length).toBeGreaterThanOrEqual(10);
    expect(admitted.length).toBeLessThanOrEqual(11);
    const used = admitted.reduce((sum, outcome) => sum + outcome.body.usage.total_tokens, 0);
    expect(used).toBeLessThanOrEqual(limit + maxTokens);
    for (const outcome of refusedOf(outcomes)) {
      expectRateLimited(outcome, Math.ceil((60 * cost) / limit), /organization's tokens per minute/);
      expectRateLimitHeaders(outcome, { requests: 100, tokens: limit });
      expect(Number(outcome.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(cost);
    }
  });

  it("returns the unused reservation at settlement: after a request with a large max_tokens stops early, the next one fits", async () => {
    const maxTokens = 500;
    const cost = promptTokens + maxTokens;
    const limit = cost + 87;
    const { openai } = await tenant({ tokensPerMinute: limit });
    // A JSON boolean: the grammar ends the answer after a token or two, far below max_tokens.
    const early = { ...chatBody(server.chatModel, maxTokens), response_format: { type: "json_schema" as const, json_schema: { name: "yes_or_no", schema: { type: "boolean" }, strict: true } } };

    const firstSent = performance.now();
    const first = await viaOpenAi(openai, early);
    expect(first.status).toBe(200);
    expect(first.body.choices[0].finish_reason).toBe("stop");
    const firstUsed = first.body.usage.total_tokens as number;
    expect(firstUsed).toBeLessThan(cost / 10);
    // At admission it took the whole reservation: a second one would not have fitted beside it.
    expect(Number(first.headers.get("x-ratelimit-remaining-tokens"))).toBeGreaterThanOrEqual(limit - cost - 1);
    expect(Number(first.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(limit - cost);
    expect(limit - cost).toBeLessThan(cost);

    const second = await viaOpenAi(openai, early);
    expect(second.status).toBe(200);
    // What is left is the limit less the first request's actual use and the second's reservation (plus a few tokens
    // regained meanwhile at limit/60 per second).
    const regained = Math.ceil(((performance.now() - firstSent) * limit) / 60_000);
    const remaining = Number(second.headers.get("x-ratelimit-remaining-tokens"));
    expect(remaining).toBeGreaterThanOrEqual(limit - firstUsed - cost - 1);
    expect(remaining).toBeLessThanOrEqual(limit - firstUsed - cost + regained);
  });

  it("counts a metered request's prompt by preparing it on the engine's prompt thread, and runs the request with that prompt (prepared once)", async () => {
    const countedHere = vi.spyOn(PromptCounter.prototype, "count");
    try {
      const engine = server.engine;
      const metered = await tenant({ tokensPerMinute: 1_000_000 });
      const [prepares, submits] = [engine.prepared.length, engine.handed.length];
      const outcome = await viaOpenAi(metered.openai, chatBody(server.chatModel, 2));
      expect(outcome.status).toBe(200);
      expect(engine.prepared.length - prepares).toBe(1);
      expect(engine.handed.length - submits).toBe(1);
      const prepared = engine.prepared.at(-1)!;
      expect(engine.handed.at(-1)).toBe(prepared);
      expect(outcome.body.usage.prompt_tokens).toBe(prepared.tokens.length);
      expect(countedHere).not.toHaveBeenCalled();

      // Nothing sized in tokens: the prompt is not counted, and submit prepares it.
      const unmetered = await tenant({ tokensPerMinute: null, tokensPerDay: null });
      const outcome2 = await viaOpenAi(unmetered.openai, chatBody(server.chatModel, 2));
      expect(outcome2.status).toBe(200);
      expect(engine.prepared.length - prepares).toBe(1);
      expect(engine.handed.at(-1)).toBeUndefined();
      expect(outcome2.body.usage.prompt_tokens).toBe(outcome.body.usage.prompt_tokens);
    } finally {
      countedHere.mockRestore();
    }
  });

  it("has no boundary to burst across twice: after a full burst, requests come back at limit/60 per second, not in a second burst", async () => {
    // One request regained every 500 ms: slow enough that a loaded machine admits the whole first burst before the
    // window regains its 60 extra requests (at 600 a minute, 660 requests took over 6 s to admit at load average 10).
    const limit = 120;
    const intervalMs = 60_000 / limit;
    const { key } = await tenant({ requestsPerMinute: limit });
    const burst = (count: number) => Promise.all(Array.from({ length: count }, () => post(server.base, "openai", key, chatBody(server.chatModel, 1))));

    const startedAt = performance.now();
    const first = await burst(limit + 60);
    // The admitted requests take seconds to run, and the window slides meanwhile: empty it again (rounds of 20 until
    // one is refused in part), so that the second below starts from a full window.
    const drains: Outcome[][] = [];
    let drainStartedAt = 0;
    while (drains.length < 5 && !drains.some((round) => refusedOf(round).length > 0)) {
      drainStartedAt = performance.now();
      drains.push(await burst(20));
    }
    await sleep(3000);
    const second = await burst(40);
    const endedAt = performance.now();
    const [admittedFirst, admittedDrains, admittedSecond] = [first, drains.flat(), second].map((outcomes) => admittedOf(outcomes).length);
    console.log(`rpm ${limit}: ${admittedFirst} of ${limit + 60} admitted, ${admittedDrains} in ${drains.length} rounds of 20 after, then 3 s later ${admittedSecond} of 40`);
    for (const outcome of [...refusedOf(first), ...refusedOf(drains.flat()), ...refusedOf(second)]) expect(outcome.status).toBe(429);

    expect(admittedFirst).toBeGreaterThanOrEqual(limit);
    // In any span of time a sliding window admits at most one burst (the limit) plus what the span regains; a fixed
    // window admits a second burst as soon as it rolls over.
    expect(admittedFirst + admittedDrains + admittedSecond).toBeLessThanOrEqual(limit + Math.ceil((endedAt - startedAt) / intervalMs) + 1);
    expect(refusedOf(first).length).toBeGreaterThan(0);
    expect(refusedOf(drains.at(-1)!).length, "the window never filled again after the burst").toBeGreaterThan(0);
    // From a full window, 3 s later about what 3 s regain is admitted (3000 ms / 500 ms), not a burst: at most what
    // the time since the last drain round began regains, plus the one in progress.
    expect(admittedSecond).toBeGreaterThanOrEqual(Math.floor(3000 / intervalMs) - 1);
    expect(admittedSecond).toBeLessThanOrEqual(Math.ceil((endedAt - drainStartedAt) / intervalMs) + 1);
  });

  it("keeps the daily token cap (tokens per day, and a tokens allowance with a hard cap) across a restart, seeded from the usage table", async () => {
    const day = 200;
    const maxTokens = 40;
    const byLimit = await tenant({ tokensPerDay: day });
    const byAllowance = await tenant({ allowanceBasis: "tokens", allowanceAmount: day, allowanceHardCap: true });
    // Each organization spends 2 x (prompt + 40) of its 200 tokens today.
    const spent = 2 * (promptTokens + maxTokens);
    for (const client of [byLimit, byAllowance]) {
      for (let index = 0; index < 2; index++) {
        const outcome = await viaOpenAi(client.openai, chatBody(server.chatModel, maxTokens));
        expect(outcome.status).toBe(200);
        expect(outcome.body.usage.total_tokens).toBe(promptTokens + maxTokens);
      }
    }

    // A new server on the same data dir: its counters start from the usage table, not from zero.
    await server.close();
    server = await startModelServer({ platform: { dataDir }, server: { maxQueue: 2048 } });
    stores = server.platform!.stores;
    const left = day - spent;
    for (const [client, message] of [[byLimit, /organization's tokens per day \(200/], [byAllowance, /plan's daily allowance \(200 tokens/]] as const) {
      const openai = server.openai({ apiKey: client.key });
      // One token more than is left is refused (a whole fresh day would admit it) ...
      const over = await viaOpenAi(openai, chatBody(server.chatModel, left - promptTokens + 1));
      expectRateLimited(over, 24 * 3600, message);
      // ... exactly what is left is admitted ...
      const exact = await viaOpenAi(openai, chatBody(server.chatModel, left - promptTokens));
      expect(exact.status).toBe(200);
      expect(exact.body.usage.total_tokens).toBe(left);
      // ... and then the day is spent.
      expectRateLimited(await viaOpenAi(openai, chatBody(server.chatModel, 1)), 24 * 3600, message);
    }
  });
});

/** A `loom serve` child process, its base URL and its model's slugs (from its start banner). */
interface Child {
  process: ChildProcess;
  base: string;
  chatModel: string;
  messagesModel: string;
}

const children: ChildProcess[] = [];

/** Starts `loom serve` on the tiny model (server/testing/loom-process.ts) and resolves once it listens and its banner names the slugs. */
async function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Child> {
  const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
  const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_REDIS_KEY_PREFIX, LOOM_API_KEYS, ...inherited } = process.env;
  const loom = await startLoomServe(["--model", model, "--port", "0", "--threads", "1", "--context", "512", ...args], { env: { ...inherited, ...env }, children });
  // The banner (stderr) and the port line (stdout) travel on different pipes: wait for the banner too.
  for (let waited = 0; !/POST \/v1\/messages +model /.test(loom.stderr()); waited += 10) {
    if (waited > 10_000) throw new Error(`loom serve printed no banner: ${loom.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const chatModel = /POST \/v1\/chat\/completions +model ([^,\s]+)/.exec(loom.stderr())![1]!;
  const messagesModel = /POST \/v1\/messages +model ([^,\s]+)/.exec(loom.stderr())![1]!;
  return { process: loom.child, base: loom.base, chatModel, messagesModel };
}

const stop = stopChild;

afterAll(async () => {
  await Promise.all(children.map(stop));
});

const sharedReason = cliReason ?? postgresReason ?? redisReason;
describe.skipIf(skipOutsideCi(sharedReason))(titled("two loom serve processes on one PostgreSQL and one Redis", sharedReason), () => {
  const schema = testSchemaName();
  const keyPrefix = testKeyPrefix();
  let database: Database;
  let stores: PlatformStores;
  let a: Child;
  let b: Child;

  beforeAll(async () => {
    failIfMissing(sharedReason);
    const url = TEST_POSTGRES_URL!;
    // The schema, created and migrated here; the processes reach it through the URL's libpq `options` parameter.
    database = await openDatabase({ url, schema });
    stores = createPlatformStores(database);
    const args = ["--database-url", schemaUrl(url, schema), "--redis-url", TEST_REDIS_URL];
    [a, b] = await Promise.all([serve(args, { LOOM_REDIS_KEY_PREFIX: keyPrefix }), serve(args, { LOOM_REDIS_KEY_PREFIX: keyPrefix })]);
  });
  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((child) => stop(child.process)));
    await database?.close();
    if (TEST_POSTGRES_URL) await dropSchema(TEST_POSTGRES_URL, schema);
    await deleteKeys(keyPrefix);
  });

  it("share one requests-per-minute limit: 60 requests spread over both admit 30, not 60", async () => {
    const limit = 30;
    const organization = await stores.organizations.create("shared limit", { requestsPerMinute: limit });
    const { key } = await stores.keys.create(organization.id, "inference", "shared");
    const outcomes = await Promise.all(Array.from({ length: 2 * limit }, (_, index) => post(index % 2 === 0 ? a.base : b.base, "openai", key, chatBody(a.chatModel, 1))));
    const admitted = admittedOf(outcomes);
    expect(admitted.length).toBeGreaterThanOrEqual(limit);
    expect(admitted.length).toBeLessThanOrEqual(limit + 1);
    for (const outcome of refusedOf(outcomes)) expectRateLimited(outcome, 60 / limit, /organization's requests per minute \(30\)/);
    // The counter is Redis's, under the processes' prefix.
    const redis = inspectionClient();
    try {
      expect(await redis.exists(`${keyPrefix}window:org:${organization.id}:rpm`)).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it("refuse a key revoked through the management API on one process on the other within a second", async () => {
    // A high rpm: the polling below must not run into a rate limit.
    const organization = await stores.organizations.create("revocation", { requestsPerMinute: 100_000 });
    const management = await stores.keys.create(organization.id, "management", "admin");
    const created = await fetch(`${a.base}/api/v1/management/api-keys`, {
      method: "POST", headers: { authorization: `Bearer ${management.key}`, "content-type": "application/json" }, body: JSON.stringify({ name: "to revoke" }),
    });
    expect(created.status).toBe(200);
    const { apiKey } = (await created.json()) as { apiKey: { id: string; key: string } };
    const model = a.chatModel;
    // Admitted on B (B now holds the key in its cache) right before the revocation.
    expect((await post(b.base, "openai", apiKey.key, chatBody(model, 1))).status).toBe(200);

    const revoked = await fetch(`${a.base}/api/v1/management/api-keys/${encodeURIComponent(apiKey.id)}`, { method: "DELETE", headers: { authorization: `Bearer ${management.key}` } });
    expect(revoked.status).toBe(200);
    const revokedAt = performance.now();
    expect((await post(a.base, "openai", apiKey.key, chatBody(model, 1))).status).toBe(401);
    let refused: Outcome | undefined;
    while (!refused && performance.now() - revokedAt < 5000) {
      const outcome = await post(b.base, "openai", apiKey.key, chatBody(model, 1));
      if (outcome.status !== 200) refused = outcome;
      else await sleep(20);
    }
    const elapsed = performance.now() - revokedAt;
    console.log(`revoked on A, refused by B after ${elapsed.toFixed(0)} ms`);
    expect(refused?.status, `B still admitted the revoked key ${elapsed.toFixed(0)} ms after the revocation`).toBe(401);
    expect(refused?.body.error).toMatchObject({ type: "authentication_error" });
    expect(elapsed).toBeLessThan(1500);
  });
});

describe.skipIf(skipOutsideCi(cliReason))(titled("loom serve with an unreachable Redis", cliReason), () => {
  const dataDirs: string[] = [];
  let key: string;
  let closed: Child;
  let open: Child;

  beforeAll(async () => {
    failIfMissing(cliReason);
    dataDirs.push(await migratedDataDir(), temporaryDataDir());
    // One organization and key, copied to a second data dir (each process holds its own PGlite).
    const database = await openDatabase({ dataDir: dataDirs[0]! });
    const stores = createPlatformStores(database);
    const organization = await stores.organizations.create("no redis", {});
    key = (await stores.keys.create(organization.id, "inference", "no redis")).key;
    await database.close();
    rmSync(dataDirs[1]!, { recursive: true, force: true });
    cpSync(dataDirs[0]!, dataDirs[1]!, { recursive: true });
    // A port that was just free and is closed now: connections to it are refused.
    const port = await closedLoopbackPort();
    const redisUrl = `redis://127.0.0.1:${port}`;
    [closed, open] = await Promise.all([
      serve(["--data-dir", dataDirs[0]!, "--redis-url", redisUrl]),
      serve(["--data-dir", dataDirs[1]!, "--redis-url", redisUrl, "--limits-fail-open"]),
    ]);
  });
  afterAll(async () => {
    await Promise.all([closed, open].filter(Boolean).map((child) => stop(child.process)));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses inference at once with 503 (chat completions) and 529 (messages) by default, and serves with --limits-fail-open", async () => {
    const chat = chatBody(closed.chatModel, 1);
    const message = { model: closed.messagesModel, max_tokens: 1, messages: [{ role: "user", content: "hi" }] };
    for (let attempt = 0; attempt < 2; attempt++) {
      const started = performance.now();
      const [chatOutcome, messageOutcome] = await Promise.all([post(closed.base, "openai", key, chat), post(closed.base, "anthropic", key, message)]);
      const elapsed = performance.now() - started;
      console.log(`Redis unreachable, fail closed: answered in ${elapsed.toFixed(0)} ms`);
      expect(chatOutcome.status).toBe(503);
      expect(chatOutcome.body.error).toMatchObject({ type: "server_error", code: "server_overloaded" });
      expect(chatOutcome.body.error.message).toMatch(/rate-limit store cannot be reached/);
      expect(chatOutcome.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(messageOutcome.status).toBe(529);
      expect(messageOutcome.body).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
      // No hang: a refused connection answers within about a second (the store's 500 ms timeout bounds a silent one).
      expect(elapsed).toBeLessThan(3000);
    }
    const started = performance.now();
    const [chatOutcome, messageOutcome] = await Promise.all([post(open.base, "openai", key, chat), post(open.base, "anthropic", key, message)]);
    console.log(`Redis unreachable, --limits-fail-open: served in ${(performance.now() - started).toFixed(0)} ms`);
    expect(chatOutcome.status).toBe(200);
    expect(chatOutcome.body.usage.completion_tokens).toBe(1);
    expect(messageOutcome.status).toBe(200);
    expect(messageOutcome.body.usage.output_tokens).toBe(1);
  });
});
