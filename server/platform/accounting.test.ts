// Accounting through the real server and engine, on PGlite and on PostgreSQL: usage rows equal, to the token, what the
// responses reported (and, for requests the client aborted, what the engine computed); streamed and whole responses
// bill the same; prepaid balances fall by exactly the requests' costs and never below zero; and a `loom serve` killed
// with SIGKILL under load keeps the usage of every response it completed.
import { type ChildProcess, execFile } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { seededRandom as random } from "../../engine/testing/seeded-random.js";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { startLoomServe } from "../testing/loom-process.js";
import { type ModelServer, startModelServer } from "../testing/model-server.js";
import type { Database, ModelPrice, UsageRow } from "./contract.js";
import { LOCK_FILE_NAME } from "./db/data-dir-lock.js";
import type { PlatformOptions } from "./platform.js";
import { TEST_BACKENDS, TEST_POSTGRES_URL, createTestPostgresDatabase, dropSchema, migratedDataDir, testSchemaName } from "./testing/test-databases.js";

// What is billed does not depend on the model: a test model of a third of tiny-qwen3's vocabulary (the engine samples
// each token from 49,152 logits, not 151,936): the file takes a third less CPU time.
const PRESET = "tiny-llama";
const modelReason = testModelSkipReason(PRESET);
const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;
const postgresReason = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!.reason;

/** A back end the platform runs on in these tests: the options that put a fresh database there, and its removal. */
interface Backend {
  name: "PGlite" | "PostgreSQL";
  reason: string | undefined;
  fresh(): Promise<{ options: PlatformOptions; dispose(): Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    name: "PGlite",
    reason: modelReason,
    fresh: async () => {
      const dataDir = await migratedDataDir();
      return { options: { dataDir }, dispose: async () => rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: "PostgreSQL",
    reason: modelReason ?? postgresReason,
    fresh: async () => {
      const schema = testSchemaName();
      return { options: { databaseUrl: TEST_POSTGRES_URL!, schema }, dispose: () => dropSchema(TEST_POSTGRES_URL!, schema) };
    },
  },
];

/** Limits high enough that nothing in these tests is refused by them (the reservations are still made and settled). */
const HIGH_LIMITS = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000, tokensPerDay: 1_000_000_000 };

/** Token counts as the usage table keeps them. */
interface Counts {
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

const ZERO: Counts = { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

function add(a: Counts, b: Counts): Counts {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  };
}

/** Usage rows summed per "keyId model" (over days: a run may cross UTC midnight). */
function byKeyAndModel(rows: readonly UsageRow[]): Record<string, Counts> {
  const sums: Record<string, Counts> = {};
  for (const row of rows) {
    const name = `${row.keyId} ${row.model}`;
    sums[name] = add(sums[name] ?? ZERO, row);
  }
  return sums;
}

/** Reads `read()` until `done` says so, or `timeoutMs` passes (then returns the last value, for the assertion to show). */
async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `work` while the platform's database begins every transaction `delayMs` late (a slow disk, a busy server): a
 * server that answers before its usage is committed then answers before it is in the rows, for the test to see.
 * NOTE: fault injection on the platform's own Database object, which its usage writer shares.
 */
async function withSlowCommits<T>(database: Database, delayMs: number, work: () => Promise<T>): Promise<T> {
  const original = database.transaction;
  const patched = database as { transaction: Database["transaction"] };
  patched.transaction = async (transactionWork) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return original.call(database, transactionWork);
  };
  try {
    return await work();
  } finally {
    patched.transaction = original;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// One request on the wire, read as a client reads it (raw fetch, so the test sees exactly what the server wrote).

type Format = "openai" | "anthropic";

interface Call {
  format: Format;
  stream: boolean;
  /** Abort (AbortController) once the first content delta arrives. */
  abortAfterFirstDelta?: boolean;
  key: string;
  system: string;
  user: string;
  maxTokens: number;
  temperature?: number;
}

/** What a response said it used: input tokens (cached included), cached input tokens, output tokens. */
interface Reported {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

interface CallResult {
  status: number;
  /** The response's id (the engine request's id); for an error, undefined. */
  id?: string;
  /** The client has the whole answer: the JSON body, or the stream's final event ([DONE], message_stop). */
  completed: boolean;
  /** The client aborted it after its first content delta. */
  aborted: boolean;
  /** What the response reported (completed responses). */
  usage?: Reported;
  /** The error body of a non-200 answer. */
  error?: unknown;
}

function reportedOf(format: Format, usage: Record<string, unknown>): Reported {
  const number = (name: string) => {
    const value = usage[name];
    if (typeof value !== "number") throw new Error(`usage.${name} is ${JSON.stringify(value)} in ${JSON.stringify(usage)}`);
    return value;
  };
  if (format === "openai") {
    const cached = (usage.prompt_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens ?? 0;
    return { inputTokens: number("prompt_tokens"), cachedInputTokens: cached, outputTokens: number("completion_tokens") };
  }
  // Anthropic's input_tokens excludes the cache reads (server/adapters/anthropic/response.ts): the prompt is both.
  const cached = number("cache_read_input_tokens");
  return { inputTokens: number("input_tokens") + cached, cachedInputTokens: cached, outputTokens: number("output_tokens") };
}

/** The `data:` payloads of a server-sent event stream. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    const frames = buffered.split("\n\n");
    buffered = frames.pop()!;
    for (const frame of frames) {
      const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n");
      if (data) yield data;
    }
  }
}

/** Sends one request and reads its answer to the end (or to its first content delta, when it aborts). */
async function send(base: string, model: string, call: Call): Promise<CallResult> {
  const controller = new AbortController();
  const openai = call.format === "openai";
  const body = openai
    ? {
        model, max_tokens: call.maxTokens, messages: [{ role: "system", content: call.system }, { role: "user", content: call.user }],
        ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
        ...(call.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }
    : {
        model, max_tokens: call.maxTokens, system: call.system, messages: [{ role: "user", content: call.user }],
        ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
        ...(call.stream ? { stream: true } : {}),
      };
  const response = await fetch(`${base}${openai ? "/v1/chat/completions" : "/v1/messages"}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(openai ? { authorization: `Bearer ${call.key}` } : { "x-api-key": call.key, "anthropic-version": "2023-06-01" }) },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  if (response.status !== 200) return { status: response.status, completed: false, aborted: false, error: await response.json() };
  if (!call.stream) {
    const json = (await response.json()) as { id: string; usage: Record<string, unknown> };
    return { status: 200, id: json.id, completed: true, aborted: false, usage: reportedOf(call.format, json.usage) };
  }
  const result: CallResult = { status: 200, completed: false, aborted: false };
  let usage: Record<string, unknown> = {};
  try {
    for await (const data of sseData(response.body!)) {
      if (openai) {
        if (data === "[DONE]") {
          result.completed = true;
          break;
        }
        const chunk = JSON.parse(data) as { id: string; choices?: { delta?: { content?: string } }[]; usage?: Record<string, unknown> | null; error?: unknown };
        if (chunk.error) throw new Error(`stream error: ${data}`);
        result.id ??= chunk.id;
        if (chunk.usage) usage = chunk.usage;
        if (call.abortAfterFirstDelta && chunk.choices?.[0]?.delta?.content) {
          result.aborted = true;
          controller.abort();
          break;
        }
      } else {
        const event = JSON.parse(data) as { type: string; message?: { id: string; usage: Record<string, unknown> }; delta?: { type: string }; usage?: Record<string, unknown> };
        if (event.type === "error") throw new Error(`stream error: ${data}`);
        if (event.type === "message_start") {
          result.id = event.message!.id;
          usage = { ...event.message!.usage };
        } else if (event.type === "message_delta") {
          usage = { ...usage, ...event.usage };
        } else if (event.type === "message_stop") {
          result.completed = true;
          break;
        } else if (call.abortAfterFirstDelta && event.type === "content_block_delta" && event.delta?.type === "text_delta") {
          result.aborted = true;
          controller.abort();
          break;
        }
      }
    }
  } catch (error) {
    if (!result.aborted) throw error;
  }
  if (result.completed) result.usage = reportedOf(call.format, usage);
  return result;
}

const SYSTEM = "You are a careful assistant for a small bakery. Answer briefly, in plain words, and never invent prices.";
const USERS = ["What bread do you bake on Sundays?", "Tell me a story about a storm", "hi", "List three pastries.", "Why is rye bread dense?"];

// ---------------------------------------------------------------------------------------------------------------

for (const backend of BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`accounting through the server on ${backend.name}`, backend.reason), () => {
    let server: ModelServer;
    let dispose: () => Promise<void> = async () => {};
    beforeAll(async () => {
      failIfMissing(backend.reason);
      const fresh = await backend.fresh();
      dispose = fresh.dispose;
      server = await startModelServer({ preset: PRESET, platform: fresh.options, server: { maxQueue: 1000 }, threads: 1 });
    }, 60_000);
    afterAll(async () => {
      await server?.close();
      await dispose();
    });
    const stores = () => server.platform!.stores;
    const modelOf = (format: Format) => (format === "openai" ? server.chatModel : server.messagesModel);
    /** What the engine computed for a request (its finish counts), as the usage table counts it. */
    const engineUsage = (id: string): Reported | undefined => {
      const usage = server.engine.outputs.get(id)?.usage;
      return usage && { inputTokens: usage.promptTokens, cachedInputTokens: usage.reusedPrefixTokens + usage.reusedSuffixTokens, outputTokens: usage.completionTokens };
    };

    it("bills 300 concurrent mixed requests of 3 keys of 2 organizations to the token, aborted ones at the engine's counts", async () => {
      const a = await stores().organizations.create("Accounting A", HIGH_LIMITS);
      const b = await stores().organizations.create("Accounting B", HIGH_LIMITS);
      const keys = [
        await stores().keys.create(a.id, "inference", "a-one"),
        await stores().keys.create(a.id, "inference", "a-two"),
        await stores().keys.create(b.id, "inference", "b-one"),
      ];
      const next = random(15);
      const calls = Array.from({ length: 300 }, (_, index): Call & { keyId: string } => {
        const key = keys[index % 3]!;
        const abort = index % 5 === 0;
        return {
          keyId: key.record.id,
          key: key.key,
          format: next() < 0.5 ? "openai" : "anthropic",
          stream: abort || next() < 0.5,
          abortAfterFirstDelta: abort,
          system: SYSTEM,
          user: USERS[Math.floor(next() * USERS.length)]!,
          maxTokens: 4 + Math.floor(next() * 9),
        };
      });
      const results = await Promise.all(calls.map((call) => send(server.base, modelOf(call.format), call)));
      expect(results.filter((result) => result.status !== 200)).toEqual([]);
      // Every request ended one way: whole, or aborted after its first delta (a stream can finish before its first text).
      expect(results.every((result) => result.completed !== result.aborted)).toBe(true);
      const aborted = results.filter((result) => result.aborted).length;
      expect(aborted).toBeGreaterThanOrEqual(30);

      // The aborted requests' usage: the engine's counts at their finish, once the server has drained them.
      const engineCounts = await poll(async () => results.map((result) => engineUsage(result.id!)), (all) => all.every(Boolean), 10_000);
      const unread = results.flatMap((result, index) => (engineCounts[index] ? [] : [`${result.id}${result.aborted ? " (aborted)" : ""}`]));
      expect(unread, "requests whose engine finish the server never read (it reads aborted ones to their end to settle them)").toEqual([]);
      const expected: Record<string, Counts> = {};
      const sent: Record<string, number> = {};
      results.forEach((result, index) => {
        const call = calls[index]!;
        const name = `${call.keyId} ${modelOf(call.format)}`;
        const used = result.completed ? result.usage! : engineCounts[index]!;
        expected[name] = add(expected[name] ?? ZERO, { requests: 1, ...used });
        sent[call.keyId] = (sent[call.keyId] ?? 0) + 1;
      });
      // What completed responses reported is what the engine computed.
      const completed = results.flatMap((result, index) => (result.completed ? [{ reported: result.usage, engine: engineCounts[index] }] : []));
      expect(completed.filter(({ reported, engine }) => JSON.stringify(reported) !== JSON.stringify(engine))).toEqual([]);

      const rows = async () => [...(await stores().usage.rows(a.id)), ...(await stores().usage.rows(b.id))];
      // Aborted requests settle shortly after their streams end: wait until every request is counted, then a little
      // longer, so that a request counted twice would show.
      await poll(rows, (all) => all.reduce((sum, row) => sum + row.requests, 0) >= calls.length, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const final = await rows();
      expect(byKeyAndModel(final)).toEqual(expected);
      const requestsPerKey: Record<string, number> = {};
      for (const row of final) requestsPerKey[row.keyId] = (requestsPerKey[row.keyId] ?? 0) + row.requests;
      expect(requestsPerKey).toEqual(sent);
      // The mix exercised what it means to: both organizations, cached prompt tokens, output of aborted requests.
      expect(final.some((row) => row.cachedInputTokens > 0)).toBe(true);
    }, 120_000);

    it("bills a streamed request as the same request answered whole (both formats, price set): durable before the last byte", async () => {
      const price: ModelPrice = { inputPerMillion: 3.5, outputPerMillion: 17.25 };
      const organization = await stores().organizations.create("Streams cost", { ...HIGH_LIMITS, prices: { "*": price } });
      const warm = await stores().keys.create(organization.id, "inference", "warm");
      const whole = await stores().keys.create(organization.id, "inference", "whole");
      const streamed = await stores().keys.create(organization.id, "inference", "streamed");
      const messages = [{ role: "user" as const, content: "Describe the smell of fresh bread." }];
      const system = "You answer in one sentence.";
      const rowsOf = async (keyId: string, model: string) => (await stores().usage.rows(organization.id)).filter((row) => row.keyId === keyId && row.model === model);
      for (const format of ["openai", "anthropic"] as const) {
        const model = modelOf(format);
        // Official clients; the OpenAI stream without stream_options (no usage on the wire), as most clients send it.
        const run = async (key: string, stream: boolean): Promise<Reported | undefined> => {
          if (format === "openai") {
            const client = server.openai({ apiKey: key });
            const body = { model, messages: [{ role: "system" as const, content: system }, ...messages], max_tokens: 8, temperature: 0 };
            if (!stream) return reportedOf("openai", (await client.chat.completions.create(body)).usage as unknown as Record<string, unknown>);
            for await (const _chunk of await client.chat.completions.create({ ...body, stream: true })) { /* read to the end */ }
            return undefined;
          }
          const client = server.anthropic({ apiKey: key });
          const body = { model, system, messages, max_tokens: 8, temperature: 0 };
          if (!stream) return reportedOf("anthropic", (await client.messages.create(body)).usage as unknown as Record<string, unknown>);
          for await (const _event of await client.messages.create({ ...body, stream: true })) { /* read to the end */ }
          return undefined;
        };
        // A first request puts the prompt in the prefix cache, so both measured requests find it there alike.
        await run(warm.key, false);
        // Read without waiting, while commits are slow: a response's usage is committed before its last byte.
        const { reported, wholeRows, streamedRows } = await withSlowCommits(server.platform!.database, 300, async () => {
          const reported = await run(whole.key, false);
          const wholeRows = await rowsOf(whole.record.id, model);
          await run(streamed.key, true);
          return { reported, wholeRows, streamedRows: await rowsOf(streamed.record.id, model) };
        });
        expect(wholeRows.map((row) => row.requests), "the whole response's usage, read as it arrived").toEqual([1]);
        expect(streamedRows.map((row) => row.requests), "the streamed response's usage, read as it ended").toEqual([1]);

        const bill = (rows: UsageRow[]) => rows.map(({ requests, inputTokens, cachedInputTokens, outputTokens, spendDollars }) => ({ requests, inputTokens, cachedInputTokens, outputTokens, spendDollars }));
        expect(bill(streamedRows), format).toEqual(bill(wholeRows));
        // $3.50/M is 3,500 nano-dollars an input token and $17.25/M 17,250 an output token: whole nano-dollars, exact.
        const spendNano = reported!.inputTokens * 3_500 + reported!.outputTokens * 17_250;
        expect(bill(wholeRows), format).toEqual([{ requests: 1, ...reported!, spendDollars: spendNano / 1e9 }]);
        expect(streamedRows[0]!.spendDollars).toBeGreaterThan(0);
      }
    }, 60_000);

    it("takes exactly each request's cost from a prepaid balance, refuses a spent one in each format's shape, and never goes below zero", async () => {
      // Prices with fractions of a nano-dollar per token, so that every request's cost is rounded.
      const price: ModelPrice = { inputPerMillion: 1234.567891, outputPerMillion: 4321.987654 };
      const organization = await stores().organizations.create("Prepaid", { ...HIGH_LIMITS, billingMode: "prepaid", creditBalanceDollars: 5, prices: { "*": price } });
      const { key } = await stores().keys.create(organization.id, "inference", "prepaid");
      const nano = (dollars: number) => Math.round(dollars * 1e9);
      const balance = async () => nano((await stores().organizations.get(organization.id))!.creditBalanceDollars);
      // The price written out in thousandths of a nano-dollar a token (integers, exact), not taken from pricing.ts:
      // $1,234.567891/M is 1,234,567.891 nano-dollars an input token, $4,321.987654/M 4,321,987.654 an output token;
      // a request's sum is rounded up to the nano-dollar.
      const costNano = (inputTokens: number, outputTokens: number) => Number((BigInt(inputTokens) * 1_234_567_891n + BigInt(outputTokens) * 4_321_987_654n + 999n) / 1000n);
      // 20 input (24,691,357.820) + 8 output (34,575,901.232) = 59,267,259.052 nano-dollars, rounded up.
      expect(costNano(20, 8)).toBe(59_267_260);
      const costOf = (usage: Reported) => costNano(usage.inputTokens, usage.outputTokens);

      // N requests of every kind: the balance falls by the sum of their costs, to the nano-dollar.
      const before = await balance();
      const kinds = [["openai", false], ["openai", true], ["anthropic", false], ["anthropic", true]] as const;
      const calls: Call[] = Array.from({ length: 24 }, (_, index) => ({
        format: kinds[index % 4]![0], stream: kinds[index % 4]![1], key, system: SYSTEM, user: USERS[index % USERS.length]!, maxTokens: 4 + (index % 9),
      }));
      const results = await Promise.all(calls.map((call) => send(server.base, modelOf(call.format), call)));
      expect(results.map((result) => [result.status, result.completed])).toEqual(calls.map(() => [200, true]));
      const spent = results.reduce((sum, result) => sum + costOf(result.usage!), 0);
      expect(before - (await balance())).toBe(spent);
      const rows = await stores().usage.rows(organization.id);
      expect(nano(rows.reduce((sum, row) => sum + row.spendDollars, 0))).toBe(spent);
      // Every hold was dropped with its request's spend.
      expect(nano(await stores().credits.available(organization.id))).toBe(await balance());

      // Nearly spent: less than any request can cost. Refused in each format's own shape, through the official clients.
      await stores().organizations.update(organization.id, { creditBalanceDollars: 0.00001 });
      const openaiRefusal = await server.openai({ apiKey: key }).chat.completions.create({ model: server.chatModel, messages: [{ role: "user", content: "hi" }], max_tokens: 8 }).catch((error: unknown) => error);
      expect(openaiRefusal).toBeInstanceOf(OpenAI.APIError);
      expect(openaiRefusal).toMatchObject({ status: 429, code: "insufficient_quota", type: "insufficient_quota" });
      const anthropicRefusal = await server.anthropic({ apiKey: key }).messages.create({ model: server.messagesModel, messages: [{ role: "user", content: "hi" }], max_tokens: 8 }).catch((error: unknown) => error);
      expect(anthropicRefusal).toBeInstanceOf(Anthropic.BadRequestError);
      expect(anthropicRefusal).toMatchObject({ status: 400, error: { type: "error", error: { type: "invalid_request_error" } } });
      expect((anthropicRefusal as { error: { error: { message: string } } }).error.error.message).toMatch(/credit balance is too low/);
      expect(await balance()).toBe(nano(0.00001));
      expect((await stores().usage.rows(organization.id)).reduce((sum, row) => sum + row.requests, 0)).toBe(calls.length);

      // The last dollars: a balance that holds 10 requests at their most, 30 racing for it. At least 10 are admitted
      // (each admitted request takes at most its hold), the rest are refused, and the balance ends at or above zero,
      // lower by exactly what the admitted ones cost.
      const race = (index: number): Call => ({ format: index % 2 === 0 ? "openai" : "anthropic", stream: index % 4 < 2, key, system: SYSTEM, user: USERS[1]!, maxTokens: 8 });
      const promptTokens = Math.max(...results.filter((_, index) => calls[index]!.user === USERS[1]).map((result) => result.usage!.inputTokens));
      const hold = costNano(promptTokens, 8);
      const last = 10 * hold + Math.floor(hold / 2);
      await stores().organizations.update(organization.id, { creditBalanceDollars: last / 1e9 });
      const racing = await Promise.all(Array.from({ length: 30 }, (_, index) => send(server.base, modelOf(race(index).format), race(index))));
      const left = await balance();
      expect(left, "the balance after 30 requests raced for its last dollars (nano-dollars)").toBeGreaterThanOrEqual(0);
      const admitted = racing.filter((result) => result.status === 200);
      const refused = racing.filter((result) => result.status !== 200);
      expect(admitted.length).toBeGreaterThanOrEqual(10);
      expect(refused.length).toBeGreaterThanOrEqual(1);
      for (const [index, result] of racing.entries()) {
        if (result.status === 200) continue;
        expect(result, `racing request ${index}`).toMatchObject(race(index).format === "openai"
          ? { status: 429, error: { error: { type: "insufficient_quota", code: "insufficient_quota" } } }
          : { status: 400, error: { type: "error", error: { type: "invalid_request_error" } } });
      }
      expect(last - left).toBe(admitted.reduce((sum, result) => sum + costOf(result.usage!), 0));
      expect(nano(await stores().credits.available(organization.id))).toBe(left);
    }, 60_000);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// kill -9 under load: `loom serve` as a user runs it, in a child process.

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Starts `loom serve` without static keys (server/testing/loom-process.ts). */
const serve = (args: string[]) => startLoomServe(args, { env: { ...process.env, LOOM_API_KEYS: "" }, children });

/** Runs `loom admin ... --json` and returns its JSON. */
function admin(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, "admin", ...args, "--json"], { cwd: REPOSITORY_ROOT }, (error, stdout, stderr) => {
      if (error) reject(new Error(`loom admin ${args.join(" ")} failed: ${stderr || error.message} ${stdout}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

/** Where `loom serve` and `loom admin` keep the platform in the crash test: a data dir, or a fresh PostgreSQL database. */
interface CrashBackend {
  name: string;
  reason: string | undefined;
  open(): Promise<{ where: string[]; dispose(): Promise<void> }>;
}

const CRASH_BACKENDS: CrashBackend[] = [
  {
    name: "PGlite",
    reason: modelReason ?? cliReason,
    open: async () => {
      const dataDir = await migratedDataDir();
      return { where: ["--data-dir", dataDir], dispose: async () => rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: "PostgreSQL",
    reason: modelReason ?? cliReason ?? postgresReason,
    open: async () => {
      // A database of its own (loom serve has no schema flag), dropped after.
      const database = await createTestPostgresDatabase(TEST_POSTGRES_URL!);
      return { where: ["--database-url", database.url], dispose: database.drop };
    },
  },
];

for (const backend of CRASH_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`loom serve killed with SIGKILL under load, on ${backend.name}`, backend.reason), () => {
    it("restarts on the same database with the usage of every completed response, and at most what was in flight besides", async () => {
      failIfMissing(backend.reason);
      const { where, dispose } = await backend.open();
      try {
        const organization = await admin(["org", "create", "--name", "Crash", "--rpm", "none", "--tpm", "none", "--tpd", "none", ...where]);
        const { key } = (await admin(["key", "create", "--org", organization.id as string, "--kind", "inference", "--name", "load", ...where])) as { key: string };
        const model = await ensureTestModel(PRESET, "gguf", "q8_0");
        const serveArgs = ["--model", model, ...where, "--port", "0", "--context", "512", "--threads", "1"];
        const first = await serve(serveArgs);
        const base = `http://127.0.0.1:${first.port}`;
        const slugs = (await (await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[] };
        const [chatModel, messagesModel] = [slugs.data[0]!.id, slugs.data[1]!.id];

        // 100 concurrent requests; the server dies once 30 have completed.
        const MAX_TOKENS = 8;
        const completed: Reported[] = [];
        let killed = false;
        const kill = () => {
          if (killed) return;
          killed = true;
          first.child.kill("SIGKILL");
        };
        const outcomes = await Promise.allSettled(Array.from({ length: 100 }, async (_, index) => {
          const call: Call = { format: index % 2 === 0 ? "openai" : "anthropic", stream: index % 4 < 2, key, system: SYSTEM, user: USERS[1]!, maxTokens: MAX_TOKENS };
          const result = await send(base, call.format === "openai" ? chatModel : messagesModel, call);
          if (result.status !== 200 || !result.completed) throw new Error(`request ${index}: ${result.status} ${JSON.stringify(result.error)}`);
          // Recorded before the kill can be decided on, so that a completed response is never missed.
          completed.push(result.usage!);
          if (completed.length >= 30) kill();
          return result;
        }));
        kill();
        await first.exited;
        expect(first.child.signalCode).toBe("SIGKILL");
        const inFlight = outcomes.filter((outcome) => outcome.status === "rejected").length;
        expect(completed.length).toBeGreaterThanOrEqual(30);
        expect(inFlight, "requests were in flight when the server was killed").toBeGreaterThan(0);
        if (where[0] === "--data-dir") expect(existsSync(join(where[1]!, LOCK_FILE_NAME)), "the killed server's lock is left behind").toBe(true);

        // Restarted on the same database: it opens (a stale lock is taken over), serves, and still accounts.
        const second = await serve(serveArgs);
        const restarted = `http://127.0.0.1:${second.port}`;
        const after = await send(restarted, chatModel, { format: "openai", stream: false, key, system: SYSTEM, user: USERS[0]!, maxTokens: MAX_TOKENS });
        expect(after.status).toBe(200);
        // Through the running server (admin.json) on a data dir; straight to the database on PostgreSQL.
        const usage = (await admin(["usage", "--org", organization.id as string, ...where])) as { rows: UsageRow[] };
        const rows = usage.rows.reduce(add, ZERO);
        const sum = (counts: Reported[]) => counts.reduce<Reported & { requests: number }>((total, used) => ({ ...total, inputTokens: total.inputTokens + used.inputTokens, cachedInputTokens: total.cachedInputTokens + used.cachedInputTokens, outputTokens: total.outputTokens + used.outputTokens, requests: total.requests + 1 }), ZERO);
        const lower = sum([...completed, after.usage!]);
        // Each request in flight at the kill may have been committed without its client getting the answer: at most
        // one request, its prompt (the same for all) and max_tokens of output each.
        const prompt = Math.max(...completed.map((used) => used.inputTokens));
        const upper = { requests: lower.requests + inFlight, inputTokens: lower.inputTokens + inFlight * prompt, outputTokens: lower.outputTokens + inFlight * MAX_TOKENS };
        expect(rows.requests).toBeGreaterThanOrEqual(lower.requests);
        expect(rows.inputTokens).toBeGreaterThanOrEqual(lower.inputTokens);
        expect(rows.outputTokens).toBeGreaterThanOrEqual(lower.outputTokens);
        expect(rows.cachedInputTokens).toBeGreaterThanOrEqual(lower.cachedInputTokens);
        expect(rows.requests).toBeLessThanOrEqual(upper.requests);
        expect(rows.inputTokens).toBeLessThanOrEqual(upper.inputTokens);
        expect(rows.outputTokens).toBeLessThanOrEqual(upper.outputTokens);

        second.child.kill("SIGTERM");
        await second.exited;
        expect(second.child.exitCode).toBe(0);
      } finally {
        await dispose();
      }
    }, 90_000);
  });
}
