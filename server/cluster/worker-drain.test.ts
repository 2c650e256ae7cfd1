// A worker stopping gracefully behind a gateway, as operators run it (a rolling update): 2 `loom worker` processes and
// a `loom gateway` on this machine's PostgreSQL and Redis, clients sending streamed and whole requests without
// retries, and SIGTERM to one worker while it runs some: no request fails, the worker exits 0 once it is done, and
// the requests that follow run on the other worker.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import type { Database } from "../platform/contract.js";
import { openDatabase } from "../platform/db/open-database.js";
import { deleteKeys, redisMissingReason, TEST_REDIS_URL, testKeyPrefix } from "../platform/limits/testing/redis.js";
import { createPlatformStores } from "../platform/store/platform-stores.js";
import { dropSchema, schemaUrl, TEST_BACKENDS, TEST_POSTGRES_URL, testSchemaName } from "../platform/testing/test-databases.js";
import { LOOM_CLI, type LoomProcess, startLoom, stopChild } from "../testing/loom-process.js";

const cliReason = existsSync(LOOM_CLI) ? undefined : `${LOOM_CLI} is missing: run \`npm run build\` first`;
const postgresReason = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!.reason;
const reason = cliReason ?? postgresReason ?? (await redisMissingReason());

const HEARTBEAT_MS = 200;
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a worker's /health says: its requests in flight and submitted since start. */
const healthOf = async (worker: LoomProcess) => (await (await fetch(`${worker.base}/health`)).json()) as { status: string; inFlight: number; submitted: number };

describe.skipIf(skipOutsideCi(reason))(titled("a worker stopping on SIGTERM behind a gateway", reason), () => {
  const schema = testSchemaName();
  const clusterPrefix = `${testKeyPrefix()}cluster:`;
  const limitsPrefix = testKeyPrefix();
  let database: Database;
  let workers: LoomProcess[] = [];
  let gateway: LoomProcess;
  let key: string;
  let model: string;

  beforeAll(async () => {
    failIfMissing(reason);
    const url = TEST_POSTGRES_URL!;
    database = await openDatabase({ url, schema });
    const stores = createPlatformStores(database);
    const organization = await stores.organizations.create("drain", { requestsPerMinute: 100_000 });
    key = (await stores.keys.create(organization.id, "inference", "drain")).key;

    const path = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
    const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_API_KEYS, ...inherited } = process.env;
    const env = { ...inherited, LOOM_CLUSTER_TOKEN: randomBytes(24).toString("hex"), LOOM_CLUSTER_KEY_PREFIX: clusterPrefix, LOOM_REDIS_KEY_PREFIX: limitsPrefix };
    const workerArgs = ["--model", path, "--register", TEST_REDIS_URL, "--port", "0", "--threads", "1", "--context", "512", "--heartbeat-ms", String(HEARTBEAT_MS)];
    workers = await Promise.all([0, 1].map(() => startLoom("worker", workerArgs, { env, children })));
    gateway = await startLoom("gateway", ["--database-url", schemaUrl(url, schema), "--redis-url", TEST_REDIS_URL, "--port", "0"], { env, children });
    const listing = (await (await fetch(`${gateway.base}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string }> };
    model = listing.data.map((entry) => entry.id).find((id) => id.startsWith("service/tim-"))!;
    expect(model).toBeDefined();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map(stopChild));
    await database?.close();
    if (TEST_POSTGRES_URL) await dropSchema(TEST_POSTGRES_URL, schema);
    await deleteKeys(clusterPrefix);
    await deleteKeys(limitsPrefix);
  });

  it("fails no request of a client load while a worker drains and exits, and serves the rest on the other worker", async () => {
    const [leaving, staying] = workers as [LoomProcess, LoomProcess];
    const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.base}/v1`, maxRetries: 0, timeout: 60_000 });
    /** One request, streamed or whole by turns; resolves with its finish reason, rejects on any failure. */
    const ask = async (turn: number): Promise<string> => {
      const messages = [{ role: "user" as const, content: `Tell a story ${turn}` }];
      if (turn % 2 === 0) return (await openai.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 })).choices[0]!.finish_reason;
      let finish: string | null | undefined;
      for await (const chunk of await openai.chat.completions.create({ model, messages, max_tokens: 200, temperature: 0, stream: true })) finish = chunk.choices[0]?.finish_reason ?? finish;
      if (!finish) throw new Error("the stream ended without a finish reason");
      return finish;
    };
    const failures: string[] = [];
    let completed = 0;
    let afterExit = 0;
    let exited = false;
    let stopping = false;
    const lane = async (first: number) => {
      for (let turn = first; !stopping; turn += 3) {
        const late = exited;
        try {
          expect(await ask(turn)).toMatch(/^(stop|length)$/);
          completed++;
          if (late) afterExit++;
        } catch (error) {
          failures.push(`request ${turn}: ${(error as Error).message}`);
        }
      }
    };
    const lanes = [0, 1, 2].map(lane);
    try {
      // SIGTERM while the leaving worker runs some of the load.
      while (completed < 6 || (await healthOf(leaving)).inFlight === 0) await sleep(5);
      const exitCode = new Promise<number | null>((resolve) => leaving.child.once("exit", (code) => resolve(code)));
      leaving.child.kill("SIGTERM");
      expect(await exitCode).toBe(0);
      const stayingBefore = (await healthOf(staying)).submitted;
      exited = true;
      // Requests sent from now on all run on the worker left.
      while (afterExit < 3 && failures.length === 0) await sleep(10);
      expect((await healthOf(staying)).submitted - stayingBefore).toBeGreaterThanOrEqual(afterExit);
    } finally {
      stopping = true;
      await Promise.all(lanes);
    }
    expect(failures).toEqual([]);
    expect(gateway.stderr()).toMatch(/worker \S+ is stopping: routing no new requests to it/);
  }, 60_000);
});
