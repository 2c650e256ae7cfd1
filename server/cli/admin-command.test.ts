// `loom admin` as an operator runs it: the compiled CLI in a child process (run `npm run build` first) on a PGlite
// data dir, on PostgreSQL with --database-url, and through a running server that holds the data dir.
import { execFile } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { answerAdminRequest } from "../platform/admin/admin-request.js";
import { removeAdminEndpointFile, writeAdminEndpointFile } from "../platform/admin/admin-endpoint-file.js";
import type { Database } from "../platform/contract.js";
import { openDatabase } from "../platform/db/open-database.js";
import { createPlatformStores } from "../platform/store/platform-stores.js";
import { UsageWriter } from "../platform/store/usage-writer.js";
import { PaymentStore } from "../machines/payment-store.js";
import { TEST_POSTGRES_URL, dropSchema, migratedDataDir, testSchemaName } from "../platform/testing/test-databases.js";

const run = promisify(execFile);
const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
/** Without a build the tests skip, saying so, except under CI=true, where they fail. */
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;
const postgresReason = cliReason ?? (TEST_POSTGRES_URL === undefined ? "no PostgreSQL to test against (see server/platform/testing/test-databases.ts)" : undefined);

/** Runs `loom admin ...`; never throws, returns what the process printed and its exit status. */
async function admin(args: string[], environment: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string; code: number }> {
  const env = { ...process.env, LOOM_DATABASE_URL: "", LOOM_DATA_DIR: "", ...environment };
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, "admin", ...args], { cwd: REPOSITORY_ROOT, env });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** `loom admin ... --json`, expected to succeed: its one JSON object. */
async function adminJson(args: string[], environment?: NodeJS.ProcessEnv): Promise<Record<string, any>> {
  const result = await admin([...args, "--json"], environment);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(result.stdout.trim().split("\n")).toHaveLength(1);
  return JSON.parse(result.stdout);
}

describe.skipIf(skipOutsideCi(cliReason))(titled("loom admin on a PGlite data dir", cliReason), () => {
  let dataDir: string;
  beforeAll(async () => {
    failIfMissing(cliReason);
    dataDir = await migratedDataDir();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const where = () => ["--data-dir", dataDir];

  it("creates an organization and prints one JSON object with its id and the default limits", async () => {
    const organization = await adminJson(["org", "create", "--name", "Acme", ...where()]);
    expect(organization.id).toMatch(/^org_[0-9a-f]{24}$/);
    expect(organization).toMatchObject({ name: "Acme", billingMode: null, closedBeta: false, limits: { requestsPerMinute: 100, tokensPerMinute: 1_000_000, tokensPerDay: 10_000_000 } });
    const text = await admin(["org", "show", organization.id, ...where()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${organization.id}  Acme`);
    expect(text.stdout).toContain("100 requests/min, 1000000 tokens/min, 10000000 tokens/day");
    // The lock went with the process.
    expect(existsSync(join(dataDir, "loom.lock"))).toBe(false);
  });

  it("shows the webhook secret (the same each time, in text and JSON) and rotates it", async () => {
    const { id } = await adminJson(["org", "create", "--name", "Hooks", ...where()]);
    const shown = await adminJson(["org", "show", id, ...where()]);
    expect(shown.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
    const text = await admin(["org", "show", id, ...where()]);
    expect(text.stdout).toContain(`  webhook secret:   ${shown.webhookSecret}\n`);
    const rotated = await adminJson(["org", "rotate-webhook-secret", id, ...where()]);
    expect(rotated).toEqual({ organizationId: id, webhookSecret: expect.stringMatching(/^whsec_/) });
    expect(rotated.webhookSecret).not.toBe(shown.webhookSecret);
    expect((await adminJson(["org", "show", id, ...where()])).webhookSecret).toBe(rotated.webhookSecret);
    const missing = await admin(["org", "rotate-webhook-secret", "org_missing", ...where()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("ORG_ID");
  });

  it("sets every setting from its flag", async () => {
    const { id } = await adminJson(["org", "create", "--name", "Settings", ...where()]);
    const set = await adminJson([
      "org", "set", id, "--plan-label", "Pro", "--plan-status", "active", "--unlimited-comp", "true", "--billing", "prepaid",
      "--allowance-basis", "credit", "--allowance", "2.5", "--allowance-hard-cap", "true", "--rpm", "7", "--tpm", "none", "--tpd", "900",
      "--closed-beta", "true", "--credits", "12.25", "--price", "smollm2-135m=0.1/0.4", "--price", "*=1/2", ...where(),
    ]);
    expect(set).toMatchObject({
      id,
      billingMode: "prepaid",
      plan: { label: "Pro", status: "active", isUnlimitedComp: true },
      dailyAllowance: { basis: "credit", amount: 2.5, hardCap: true },
      creditBalanceDollars: 12.25,
      closedBeta: true,
      limits: { requestsPerMinute: 7, tokensPerDay: 900 },
      prices: { "smollm2-135m": { inputPerMillion: 0.1, outputPerMillion: 0.4 }, "*": { inputPerMillion: 1, outputPerMillion: 2 } },
    });
    expect(set.limits.tokensPerMinute).toBeUndefined();
    const added = await adminJson(["org", "set", id, "--add-credits", "0.75", "--price", "*=none", ...where()]);
    expect(added.creditBalanceDollars).toBe(13);
    expect(Object.keys(added.prices)).toEqual(["smollm2-135m"]);
    const list = await adminJson(["org", "list", ...where()]);
    expect(list.organizations.map((organization: { id: string }) => organization.id)).toContain(id);
  });

  it("mints, lists and revokes keys; the secret is printed once, at creation", async () => {
    const { id: org } = await adminJson(["org", "create", "--name", "Keys", ...where()]);
    const management = await adminJson(["key", "create", "--org", org, "--kind", "management", "--name", "ops", ...where()]);
    expect(management.id).toMatch(/^key_/);
    expect(management.key).toMatch(/^sk-mgmt-[A-Za-z0-9_-]{43}$/);
    expect(management.keyPrefix).toBe(management.key.slice(0, "sk-mgmt-".length + 6));
    const inference = await adminJson(["key", "create", "--org", org, "--kind", "inference", "--tpm", "5000", "--model", "smollm2-135m", ...where()]);
    expect(inference).toMatchObject({ kind: "inference", name: "inference key", limits: { tokensPerMinute: 5000 }, allowedModels: ["smollm2-135m"] });
    const text = await admin(["key", "create", "--org", org, "--kind", "inference", "--name", "shown", ...where()]);
    expect(text.stdout).toMatch(/^key: sk-gw-[A-Za-z0-9_-]{43}$/m);

    const listed = await admin(["key", "list", "--org", org, "--json", ...where()]);
    expect(JSON.parse(listed.stdout).keys).toHaveLength(3);
    expect(listed.stdout).not.toContain(management.key);
    expect(listed.stdout).not.toContain(inference.key);
    const revoked = await adminJson(["key", "revoke", "--org", org, inference.id, ...where()]);
    expect(revoked).toEqual({ id: inference.id, organizationId: org, isActive: false });
    const after = await adminJson(["key", "list", "--org", org, "--kind", "inference", ...where()]);
    expect(after.keys.map((key: { isActive: boolean }) => key.isActive)).toEqual([false, true]);
  });

  it("prints usage rows and totals, of one day or all", async () => {
    const { id: org } = await adminJson(["org", "create", "--name", "Usage", ...where()]);
    const { id: keyId } = await adminJson(["key", "create", "--org", org, "--kind", "inference", ...where()]);
    const database = await openDatabase({ dataDir });
    try {
      const writer = new UsageWriter(database);
      const base = { organizationId: org, keyId, model: "smollm2-135m", requests: 1, inputTokens: 100, cachedInputTokens: 40, outputTokens: 20, spendDollars: 0 };
      await Promise.all([writer.record({ ...base, day: "2031-05-01" }), writer.record({ ...base, day: "2031-05-02" })]);
    } finally {
      await database.close();
    }
    const all = await adminJson(["usage", "--org", org, ...where()]);
    expect(all.totals).toEqual({ requests: 2, inputTokens: 200, cachedInputTokens: 80, outputTokens: 40, spendDollars: 0 });
    const day = await adminJson(["usage", "--org", org, "--day", "2031-05-02", ...where()]);
    expect(day.rows).toEqual([{ organizationId: org, keyId, model: "smollm2-135m", day: "2031-05-02", requests: 1, inputTokens: 100, cachedInputTokens: 40, outputTokens: 20, spendDollars: 0 }]);
    const text = await admin(["usage", "--org", org, "--day", "2031-05-02", ...where()]);
    expect(text.stdout).toContain("total (2031-05-02): 1 requests, 100 input (40 cached), 20 output, $0");
  });

  it("lists the machine endpoints' payments: payer, amount, transaction and run, newest first, of one status", async () => {
    const database = await openDatabase({ dataDir });
    try {
      const store = new PaymentStore(database);
      const payment = (nonce: string) => ({
        kind: "machine_search" as const, x402Version: 2 as const, network: "eip155:8453", asset: `0x${"a".repeat(40)}`, payTo: `0x${"b".repeat(40)}`,
        payer: `0x${"c".repeat(40)}`, nonce: `0x${nonce.repeat(64)}`, amount: 100_000n, validBefore: 2_000_000_000, payloadDigest: "d",
        payload: {}, requirements: {}, runRequest: { engine: "tim", content: [], resources: [], skills: [], tools: [], timeoutSeconds: 600, instructions: "x" },
      });
      const settled = await store.reserve(payment("1"), 60_000);
      if (!("reserved" in settled)) throw new Error("not reserved");
      await store.settle(settled.reserved.id, `0x${"e".repeat(64)}`);
      const failed = await store.reserve(payment("2"), 60_000);
      if (!("reserved" in failed)) throw new Error("not reserved");
      await store.fail(failed.reserved.id, "payer without balance");
    } finally {
      await database.close();
    }
    const all = await adminJson(["payments", ...where()]);
    expect(all.counts).toEqual({ settling: 0, settled: 1, failed: 1 });
    expect(all.payments.map((payment: any) => payment.status).sort()).toEqual(["failed", "settled"]);
    const settledOnly = await adminJson(["payments", "--status", "settled", "--limit", "5", ...where()]);
    expect(settledOnly.payments).toEqual([expect.objectContaining({ status: "settled", amount: "100000", payer: `0x${"c".repeat(40)}`, transaction: `0x${"e".repeat(64)}`, runId: expect.stringMatching(/^run_/) })]);
    const text = await admin(["payments", ...where()]);
    expect(text.stdout).toContain("1 settled, 0 settling, 1 failed");
    expect(text.stdout).toContain("(payer without balance)");
    expect((await admin(["payments", "--status", "paid", ...where()])).stderr).toMatch(/--status must be settling, settled or failed/);
  }, 120_000);

  it("names the flag at fault, exits with status 2, and with --json prints the error as one JSON object", async () => {
    const { id: org } = await adminJson(["org", "create", "--name", "Errors", ...where()]);
    const cases: Array<[string[], RegExp]> = [
      [["org", "create", ...where()], /--name is required/],
      [["org", "create", "--name", "   ", ...where()], /--name: name must not be empty or only whitespace/],
      [["org", "set", org, "--rpm", "0", ...where()], /--rpm must be an integer >= 1 or none, got '0'/],
      [["org", "set", org, "--billing", "monthly", ...where()], /--billing must be subscription, prepaid, none, got 'monthly'/],
      [["org", "set", org, "--credits=-1", ...where()], /--credits: creditBalanceDollars must be a number from 0/],
      [["org", "set", org, "--allowance-basis", "tokens", ...where()], /--allowance: an allowance on the tokens basis needs its size/],
      [["org", "set", org, "--price", "m=1", ...where()], /--price must be MODEL=IN\/OUT/],
      [["org", "set", org, "--unlimited-comp", "yes", ...where()], /--unlimited-comp must be true or false/],
      [["org", "show", "org_missing", ...where()], /ORG_ID: no organization org_missing/],
      [["key", "create", "--org", org, "--kind", "root", ...where()], /--kind must be management or inference/],
      [["key", "create", "--org", org, "--kind", "inference", "--name", "x".repeat(256), ...where()], /--name: name must be at most 255 characters, got 256/],
      [["key", "create", "--org", "org_missing", "--kind", "inference", ...where()], /--org: no organization org_missing/],
      [["key", "revoke", "--org", org, "key_missing", ...where()], /KEY_ID: organization org_[0-9a-f]+ has no key key_missing/],
      [["usage", "--org", org, "--day", "2031-02-30", ...where()], /--day: day must be a day as YYYY-MM-DD/],
      [["org", "list", "--data-dir", dataDir, "--database-url", "postgres://127.0.0.1/test"], /--data-dir and --database-url name two databases/],
      [["org", "frobnicate", ...where()], /unknown admin command 'org frobnicate'/],
    ];
    for (const [args, message] of cases) {
      const result = await admin(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(message);
    }
    const json = await admin(["key", "create", "--org", org, "--kind", "inference", "--name", "", "--json", ...where()]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: "name must not be empty or only whitespace", field: "name", flag: "--name" });
    expect((await adminJson(["key", "list", "--org", org, ...where()])).keys).toEqual([]);
    // About 20 CLI runs, each opening PGlite: a minute on a busy 2-core machine, so more room than the default.
  }, 300_000);

  it("mints an operator token (printed once, with a warning), lists and revokes it", async () => {
    const text = await admin(["operator-token", "create", "--name", "laptop", ...where()]);
    expect(text.code).toBe(0);
    const token = /^token: (lop_[A-Za-z0-9_-]{43})$/m.exec(text.stdout)?.[1];
    expect(token).toBeDefined();
    expect(text.stdout).toContain("shown only now");
    const created = await adminJson(["operator-token", "create", "--name", "ci", ...where()]);
    expect(created).toMatchObject({ id: expect.stringMatching(/^opt_/), name: "ci", revokedAt: null, token: expect.stringMatching(/^lop_/) });
    const listed = await admin(["operator-token", "list", ...where()]);
    expect(listed.stdout).toMatch(new RegExp(`^${created.id}  active  "ci"  created `, "m"));
    expect(listed.stdout).not.toContain(created.token);
    expect(listed.stdout).not.toContain(token);
    expect(await adminJson(["operator-token", "revoke", created.id, ...where()])).toEqual({ id: created.id, revoked: true });
    const after = await adminJson(["operator-token", "list", ...where()]);
    expect(after.operatorTokens.find((entry: { id: string }) => entry.id === created.id).revokedAt).toEqual(expect.any(String));
    const cases: Array<[string[], RegExp]> = [
      [["operator-token", "create", ...where()], /--name is required/],
      [["operator-token", "create", "--name", " ", ...where()], /--name: name must not be empty/],
      [["operator-token", "revoke", created.id, ...where()], /TOKEN_ID: no live operator token opt_[0-9a-f]+ \(unknown, or revoked already\)/],
      [["operator-token", "revoke", ...where()], /takes one TOKEN_ID/],
      [["operator-token", "mint", ...where()], /unknown admin command 'operator-token mint'/],
    ];
    for (const [args, message] of cases) {
      const result = await admin(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(message);
    }
  }, 120_000);

  it("finds the data dir through LOOM_DATA_DIR, and prints its usage for --help", async () => {
    const created = await adminJson(["org", "create", "--name", "From the environment"], { LOOM_DATA_DIR: dataDir });
    expect((await adminJson(["org", "show", created.id, ...where()])).name).toBe("From the environment");
    const help = await admin(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: loom admin <command> [options]");
  });
});

describe.skipIf(skipOutsideCi(postgresReason))(titled("loom admin with --database-url", postgresReason), () => {
  let schema: string;
  let url: string;
  beforeAll(async () => {
    failIfMissing(postgresReason);
    // A schema of this test's own, named in the URL as every PostgreSQL client reads it (options=-c search_path=...).
    schema = testSchemaName();
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.end();
    url = `${TEST_POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  });
  afterAll(async () => {
    if (schema !== undefined && TEST_POSTGRES_URL !== undefined) await dropSchema(TEST_POSTGRES_URL, schema);
  });

  it("runs the same commands on PostgreSQL, from the flag or LOOM_DATABASE_URL", async () => {
    const organization = await adminJson(["org", "create", "--name", "On PostgreSQL", "--closed-beta", "true", "--database-url", url]);
    expect(organization).toMatchObject({ name: "On PostgreSQL", closedBeta: true });
    const key = await adminJson(["key", "create", "--org", organization.id, "--kind", "management"], { LOOM_DATABASE_URL: url });
    expect(key.key).toMatch(/^sk-mgmt-/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const tables = await client.query("SELECT id FROM organizations");
      expect(tables.rows).toEqual([{ id: organization.id }]);
    } finally {
      await client.end();
    }
    const operator = await adminJson(["operator-token", "create", "--name", "on PostgreSQL", "--database-url", url]);
    expect(operator.token).toMatch(/^lop_/);
    expect((await adminJson(["operator-token", "list"], { LOOM_DATABASE_URL: url })).operatorTokens.map((entry: { id: string }) => entry.id)).toEqual([operator.id]);
    expect(await adminJson(["operator-token", "revoke", operator.id, "--database-url", url])).toEqual({ id: operator.id, revoked: true });
    const refused = await admin(["org", "set", organization.id, "--tpd", "1.5", "--database-url", url]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--tpd must be an integer >= 1 or none, got '1.5'");
  });

  it("says which database it could not reach", async () => {
    const result = await admin(["org", "list", "--database-url", "postgres://someone:secret@127.0.0.1:1/test"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the database at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/test is unavailable/);
    expect(result.stderr).not.toContain("secret");
  });
});

describe.skipIf(skipOutsideCi(cliReason))(titled("loom admin through a running server that holds the data dir", cliReason), () => {
  // A stand-in for the loom server's admin route (node:http, in this test process): it holds the data dir open, as
  // `loom serve --data-dir` does, writes admin.json and answers with answerAdminRequest, the function the real route
  // calls. The CLI child process finds the lock held by a live process and sends its command here.
  let dataDir: string;
  let database: Database;
  let server: Server;
  let requests = 0;
  beforeAll(async () => {
    failIfMissing(cliReason);
    dataDir = await migratedDataDir();
    database = await openDatabase({ dataDir });
    const stores = createPlatformStores(database);
    let token = "";
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        requests++;
        const answer = await answerAdminRequest({ stores, token, authorization: request.headers.authorization, body: Buffer.concat(chunks).toString("utf8") });
        response.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    token = writeAdminEndpointFile(dataDir, `http://127.0.0.1:${port}/admin/v1/command`);
  });
  afterAll(async () => {
    removeAdminEndpointFile(dataDir);
    await new Promise((resolve) => server?.close(resolve));
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("sends the command to the server and prints its result", async () => {
    const before = requests;
    const organization = await adminJson(["org", "create", "--name", "Through the server", "--data-dir", dataDir]);
    expect(requests).toBe(before + 1);
    expect(await createPlatformStores(database).organizations.get(organization.id)).toMatchObject({ name: "Through the server" });
    const key = await adminJson(["key", "create", "--org", organization.id, "--kind", "inference", "--data-dir", dataDir]);
    expect(key.key).toMatch(/^sk-gw-/);
    const refused = await admin(["key", "create", "--org", organization.id, "--kind", "inference", "--name", " ", "--data-dir", dataDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--name: name must not be empty or only whitespace");
    const operator = await adminJson(["operator-token", "create", "--name", "through the server", "--data-dir", dataDir]);
    expect(await createPlatformStores(database).operatorTokens.find(operator.token)).toMatchObject({ id: operator.id });
    expect(await adminJson(["operator-token", "revoke", operator.id, "--data-dir", dataDir])).toEqual({ id: operator.id, revoked: true });
    expect(await createPlatformStores(database).operatorTokens.find(operator.token)).toBeUndefined();
  });

  it("refuses a wrong token, and an admin.json left by another process", async () => {
    const file = join(dataDir, "admin.json");
    const original = JSON.parse(await import("node:fs").then((fs) => fs.readFileSync(file, "utf8")));
    try {
      writeFileSync(file, JSON.stringify({ ...original, token: "wrong" }));
      const wrong = await admin(["org", "list", "--data-dir", dataDir]);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/the loom server at http:\/\/127\.0\.0\.1:\d+\/admin\/v1\/command answered 401/);
      writeFileSync(file, JSON.stringify({ ...original, pid: 1 }));
      const stale = await admin(["org", "list", "--data-dir", dataDir]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`the data dir ${dataDir} is in use by process ${process.pid}`);
      expect(stale.stderr).toContain("it offers no admin endpoint");
    } finally {
      writeFileSync(file, JSON.stringify(original), { mode: 0o600 });
    }
  });
});
