// The platform's answers when its stores fail, with credentials in their URLs: a Redis limit store with a password on
// a closed port (inference refused with 503 / 529) and a database with a password that goes away (the key check, the
// organization read, the credit hold, the usage record and the platform's own reads all answer 502). No body or
// header shows the password, the store's or database's host:port, schema or data dir; the log has the details, the
// password redacted.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { createEndpoints } from "../adapters/endpoints.js";
import { ModelRegistry } from "../models.js";
import { type LoomServer, startServer } from "../server.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { SCRIPTED_MODEL, ScriptedEngine } from "../testing/scripted-engine.js";
import { type ReadResponse, readResponse, secretsShown } from "../testing/secrets.js";
import { type Platform, type PlatformOptions, openPlatform } from "./platform.js";
import { TEST_BACKENDS, freshPlatform } from "./testing/test-databases.js";

const CHAT_MODEL = "test/chat";
const MESSAGES_MODEL = "test/messages";
const HIGH_LIMITS = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000, tokensPerDay: 1_000_000_000 };

/** Everything written to stderr by the file's tests (the log). */
const logged: string[] = [];
beforeAll(() => {
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

/** A server with the platform, on a scripted engine (admission and accounting do not depend on the model). */
async function startPlatformServer(options: PlatformOptions): Promise<{ platform: Platform; base: string; close(): Promise<void> }> {
  const platform = await openPlatform(options);
  const engine = new ScriptedEngine();
  engine.script = { deltas: ["Hello", "."] };
  const registry = new ModelRegistry([{ model: SCRIPTED_MODEL, engine, slugs: { openai: [CHAT_MODEL], anthropic: [MESSAGES_MODEL] }, created: 0 }]);
  let server: LoomServer;
  try {
    server = await startServer({ registry, auth: platform.authenticator, accountant: platform.accountant, endpoints: createEndpoints(registry) }, "127.0.0.1", 0, [platform.surface]);
  } catch (error) {
    await platform.close();
    throw error;
  }
  return {
    platform,
    base: `http://127.0.0.1:${server.port}`,
    async close() {
      server.close();
      await platform.close();
    },
  };
}

/** The requests a key makes: chat completions (whole or streamed), messages, and the usage endpoint. */
function client(base: string) {
  const post = (path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  return {
    chat: (key: string, stream = false) => post("/v1/chat/completions", key, { model: CHAT_MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 3, stream }),
    messages: (key: string) => post("/v1/messages", key, { model: MESSAGES_MODEL, max_tokens: 3, messages: [{ role: "user", content: "hi" }] }, { "anthropic-version": "2023-06-01" }),
    get: (path: string, key: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) }),
  };
}

/** Reads a response whole and fails if its body or a header shows one of `secrets`. */
async function checked(response: Response, secrets: readonly string[]): Promise<ReadResponse> {
  const read = await readResponse(response);
  expect(secretsShown(read, secrets), `${response.status} ${read.text}`).toEqual([]);
  return read;
}

/** The error message of a 5xx in any of the shapes: OpenAI's, Anthropic's, the platform's `{error}`, or a stream's text. */
function messageOf(read: ReadResponse): string {
  const error = read.body?.error;
  return typeof error === "string" ? error : typeof error?.message === "string" ? error.message : read.text;
}

describe("a Redis limit store with a password that cannot be reached", () => {
  const password = "SECRET-REDIS";
  let server: Awaited<ReturnType<typeof startPlatformServer>>;
  let secrets: string[];
  let key: string;
  let fresh: Awaited<ReturnType<typeof freshPlatform>>;
  beforeAll(async () => {
    const port = await closedLoopbackPort();
    secrets = [password, `127.0.0.1:${port}`];
    fresh = await freshPlatform(TEST_BACKENDS[0]!, { redisUrl: `redis://:${password}@127.0.0.1:${port}` });
    server = await startPlatformServer(fresh.options);
    const organization = await server.platform.stores.organizations.create("Acme", HIGH_LIMITS);
    ({ key } = await server.platform.stores.keys.create(organization.id, "inference", "app"));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await fresh?.remove();
  });

  it("refuses inference with 503 (chat completions, whole and streamed) and 529 (messages) without its password or address", async () => {
    const { chat, messages } = client(server.base);
    const answers = [await checked(await chat(key), secrets), await checked(await chat(key, true), secrets), await checked(await messages(key), secrets)];
    expect(answers.map((answer) => answer.status)).toEqual([503, 503, 529]);
    for (const answer of answers) expect(messageOf(answer)).toMatch(/rate-limit store cannot be reached/);
    const log = logged.join("");
    expect(log).toMatch(/loom: the rate-limit store cannot be reached \(requests refused\): Redis limit store at 127\.0\.0\.1:\d+ unavailable/);
    expect(log).not.toContain(password);
  });
});

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`the platform's database (${backend.name}) going away`, backend.reason), () => {
    const password = "SECRET-PG";
    let server: Awaited<ReturnType<typeof startPlatformServer>>;
    let fresh: Awaited<ReturnType<typeof freshPlatform>>;
    let secrets: string[];
    beforeAll(async () => {
      failIfMissing(backend.reason);
      // Keys and organizations stay cached for a minute, so that each read below is reached with the database gone.
      fresh = await freshPlatform(backend, { cacheMs: 60_000 });
      if (fresh.options.databaseUrl !== undefined) {
        // Trust authentication: the password is sent only if asked for, and the server never asks.
        const url = new URL(fresh.options.databaseUrl);
        url.password = password;
        fresh.options.databaseUrl = url.toString();
        secrets = [password, url.host, fresh.options.schema!];
      } else {
        secrets = [fresh.options.dataDir!];
      }
      server = await startPlatformServer(fresh.options);
    }, 60_000);
    afterAll(async () => {
      await server?.close();
      await fresh?.remove();
    });

    it("answers 502 for the key check, the organization, the credit hold, the usage record and the platform's reads, without the database's address", async () => {
      const stores = server.platform.stores;
      const { chat, get } = client(server.base);
      const inferenceKey = async (name: string, fields = {}) => (await stores.keys.create((await stores.organizations.create(name, { ...HIGH_LIMITS, closedBeta: true, ...fields })).id, "inference", "app")).key;
      // Served while the database answers, so that the key and the organization are cached.
      const served = await inferenceKey("Served");
      const prepaid = await inferenceKey("Prepaid", { billingMode: "prepaid", creditBalanceDollars: 5, prices: { "*": { inputPerMillion: 1, outputPerMillion: 2 } } });
      for (const key of [served, prepaid]) expect((await chat(key)).status).toBe(200);
      // Its key cached (by the usage endpoint) but not its organization (which only admission reads).
      const keyOnly = await inferenceKey("Key only");
      expect((await get("/api/v1/usage", keyOnly)).status).toBe(200);
      const unseen = await inferenceKey("Unseen");
      const organization = await stores.organizations.create("Managed", HIGH_LIMITS);
      const management = (await stores.keys.create(organization.id, "management", "ops")).key;
      expect((await get("/api/v1/management/api-keys", management)).status).toBe(200);

      await server.platform.database.close();
      const cases: Array<[string, Promise<Response>, RegExp]> = [
        ["an unseen key", chat(unseen), /the key could not be checked: the platform database did not answer$/],
        ["an organization not cached", chat(keyOnly), /the organization could not be read: the platform database did not answer$/],
        ["a prepaid organization's credit hold", chat(prepaid), /the credit balance could not be read: the platform database did not answer$/],
        ["a served request's usage", chat(served), /the request's usage could not be recorded: the platform database did not answer$/],
        ["the usage endpoint", get("/api/v1/usage", served), /usage could not be read: the platform database did not answer$/],
        ["the management API", get("/api/v1/management/api-keys", management), /the keys could not be read: the platform database did not answer$/],
      ];
      for (const [name, pending, message] of cases) {
        const answer = await checked(await pending, secrets);
        expect({ name, status: answer.status, message: messageOf(answer) }).toEqual({ name, status: 502, message: expect.stringMatching(message) });
      }
      // Streamed: the usage cannot be recorded after the text went out; the error event says so in loom's words.
      const streamed = await checked(await chat(served, true), secrets);
      expect(streamed.text).toMatch(/usage could not be recorded: the platform database did not answer/);

      const log = logged.join("");
      expect(log).toMatch(/loom: the key could not be checked: .*unavailable/);
      expect(log).not.toContain(password);
    }, 60_000);
  });
}
