// `loom update apply --rolling` on a scaled-out deployment: two workers and a gateway on PostgreSQL and Redis, moved to
// a release of this repository one process at a time while a client (the official openai SDK, with its default
// retries) sends requests through the gateway: none may fail, and every process ends on the new version.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../platform/db/migrations/index.js";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { openDatabase } from "../platform/db/open-database.js";
import { deleteKeys, redisMissingReason, TEST_REDIS_URL, testKeyPrefix } from "../platform/limits/testing/redis.js";
import { createPlatformStores } from "../platform/store/platform-stores.js";
import { dropSchema, schemaUrl, TEST_BACKENDS, TEST_POSTGRES_URL, testSchemaName } from "../platform/testing/test-databases.js";
import { startLoom, stopChild } from "../testing/loom-process.js";
import { writeKeyPair } from "./keys.js";
import { installLayout } from "./install/layout.js";
import { stopProcess } from "./install/process-control.js";
import { runningProcesses } from "./install/running-processes.js";
import { freePort, loom, packageCopy, releaseInto } from "./testing/release-fixtures.js";

/** The schema version a test release's own migration takes: the one after this build's last. */
const NEXT_MIGRATION = LATEST_SCHEMA_VERSION + 1;

const postgresReason = TEST_BACKENDS.find((backend) => backend.name === "PostgreSQL")!.reason;
const reason = postgresReason ?? (await redisMissingReason());
const dir = mkdtempSync(join(tmpdir(), "loom-rolling-"));
const layout = installLayout(join(dir, "install"));
const feed = join(dir, "feed");
const config = join(dir, "loom.json");
const schema = testSchemaName();
const clusterPrefix = `${testKeyPrefix()}cluster:`;
const limitsPrefix = testKeyPrefix();
const children: ChildProcess[] = [];

describe.skipIf(skipOutsideCi(reason))(titled("a rolling update of two workers and a gateway", reason), () => {
  let databaseUrl: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  let key: string;

  beforeAll(async () => {
    failIfMissing(reason);
    databaseUrl = schemaUrl(TEST_POSTGRES_URL!, schema);
    const database = await openDatabase({ url: TEST_POSTGRES_URL!, schema });
    const stores = createPlatformStores(database);
    const organization = await stores.organizations.create("rolling", { requestsPerMinute: 100_000 });
    key = (await stores.keys.create(organization.id, "inference", "rolling")).key;
    await database.close();

    const signer = writeKeyPair(join(dir, "keys"));
    writeFileSync(config, JSON.stringify({ updates: { trustedKeys: [signer.publicKeyPath] } }));
    await releaseInto(feed, packageCopy(dir, "0.2.0"), signer.privateKeyPath, "0.2.0\n");
    const breaking = { version: NEXT_MIGRATION, table: "rolling_breaking_marker", keepsPrevious: false };
    await releaseInto(feed, packageCopy(dir, "0.3.0", { migration: breaking }), signer.privateKeyPath, "0.3.0: a migration the old version cannot run on\n");
    const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_API_KEYS, ...inherited } = process.env;
    env = { ...inherited, LOOM_CLUSTER_TOKEN: randomBytes(24).toString("hex"), LOOM_CLUSTER_KEY_PREFIX: clusterPrefix, LOOM_REDIS_KEY_PREFIX: limitsPrefix };
    const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
    const common = ["--install-dir", layout.root, "--drain-seconds", "20"];
    const workerArgs = ["--model", model, "--register", TEST_REDIS_URL, "--port", "0", "--threads", "1", "--context", "512", "--max-sequences", "4", "--heartbeat-ms", "200", ...common];
    await Promise.all([0, 1].map(() => startLoom("worker", workerArgs, { env, children })));
    port = await freePort();
    await startLoom("gateway", ["--database-url", databaseUrl, "--redis-url", TEST_REDIS_URL, "--port", String(port), ...common], { env, children });
    for (const version of ["0.2.0", "0.3.0"]) {
      const approved = await loom(["update", "approve", version, "--feed", feed, "--config", config, "--database-url", databaseUrl], env);
      expect(approved.code, approved.stderr).toBe(0);
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all(runningProcesses(layout).map((process_) => stopProcess(process_.pid, 0, 5000)));
    await Promise.all(children.map(stopChild));
    await dropSchema(TEST_POSTGRES_URL!, schema).catch(() => undefined);
    await deleteKeys(clusterPrefix).catch(() => undefined);
    await deleteKeys(limitsPrefix).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it("moves every process to 0.2.0, workers first, with no failed request through the gateway", async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1` });
    const { data } = await client.models.list();
    const model = data[0]!.id;
    let running = true;
    const failures: string[] = [];
    let succeeded = 0;
    const lane = async (stream: boolean) => {
      while (running) {
        try {
          if (stream) {
            let text = "";
            for await (const chunk of await client.chat.completions.create({ model, messages: [{ role: "user", content: "Count." }], max_tokens: 24, stream: true })) text += chunk.choices[0]?.delta.content ?? "";
          } else {
            await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 8 });
          }
          succeeded++;
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const lanes = [lane(false), lane(true)];
    const applied = await loom(["update", "apply", "0.2.0", "--rolling", "--json", "--feed", feed, "--config", config, "--database-url", databaseUrl, "--install-dir", layout.root, "--health-timeout-seconds", "90"], env);
    const before = succeeded;
    // Requests after the switch go to the new processes.
    while (succeeded < before + 4 && failures.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    running = false;
    await Promise.all(lanes);
    expect(applied.code, applied.stderr).toBe(0);
    expect(failures).toEqual([]);
    expect(succeeded).toBeGreaterThan(4);
    const processes = runningProcesses(layout);
    expect(processes.map((process_) => `${process_.role} ${process_.version}`).sort()).toEqual(["gateway 0.2.0", "worker 0.2.0", "worker 0.2.0"]);
    // Workers first, then the gateway: the order of the progress lines.
    const stopped = [...applied.stderr.matchAll(/stopping (worker|gateway) /g)].map((match) => match[1]);
    expect(stopped).toEqual(["worker", "worker", "gateway"]);
    expect(((await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { version: string }).version).toBe("0.2.0");
  }, 300_000);

  it("refuses, rolling or not, a release whose migration would not keep the running version working, changing nothing", async () => {
    for (const rolling of [["--rolling"], []]) {
      const refused = await loom(["update", "apply", "0.3.0", ...rolling, "--feed", feed, "--config", config, "--database-url", databaseUrl, "--install-dir", layout.root], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`0.3.0's migration ${NEXT_MIGRATION} (release test: rolling_breaking_marker) does not keep 0.2.0 working: on PostgreSQL loom takes no backup`);
    }
    const database = await openDatabase({ url: TEST_POSTGRES_URL!, schema });
    try {
      const [{ present }] = await database.query<{ present: string | null }>("SELECT to_regclass('rolling_breaking_marker')::text AS present");
      expect(present).toBeNull();
    } finally {
      await database.close();
    }
    expect(runningProcesses(layout).map((process_) => process_.version)).toEqual(["0.2.0", "0.2.0", "0.2.0"]);
  }, 120_000);
});
