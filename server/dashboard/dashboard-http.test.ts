// The dashboard's data endpoints over real HTTP: a real server with a tiny real model, the platform on PGlite, agent
// runs on the same database, and the data surfaces behind the real DashboardAuth, called with bearer credentials
// (management keys for organizations, an operator token); cookie sessions are session-routes.test.ts's. Every endpoint's exact shape, paging, every bounded
// input refused naming its field, isolation between organizations, and revocation taking effect at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { CallbackStore } from "../runs/callbacks/callback-store.js";
import { resolveEngines } from "../runs/engines.js";
import { RunStore } from "../runs/run-store.js";
import { runsSurface } from "../runs/routes.js";
import { type ModelServer, startModelServer } from "../testing/model-server.js";
import { organizationJson } from "../platform/admin/run-admin-command.js";
import type { Organization } from "../platform/contract.js";
import { freshPlatform, TEST_BACKENDS } from "../platform/testing/test-databases.js";
import { DASHBOARD_API_HEADERS } from "./api-headers.js";
import { operatorSurface } from "./operator-routes.js";
import { dashboardOrganizationSurface } from "./organization-routes.js";
import { DashboardSessionStore } from "../platform/store/dashboard-session-store.js";
import { createDashboardAuth } from "./session-auth.js";
import { insertPayment } from "./testing/payment-rows.js";

type Json = any;

const pglite = TEST_BACKENDS.find((backend) => backend.name === "PGlite")!;

describe.skipIf(skipOutsideCi(undefined))(titled("the dashboard's data endpoints over HTTP (PGlite)", undefined), () => {
  let server: ModelServer;
  let remove: () => Promise<void>;
  let runs: RunStore;
  /** A real operator token (the dashboard's bearer for /api/v1/operator/). */
  let operatorToken: string;
  const cancelledHere: string[] = [];
  let acme: Organization;
  let globex: Organization;
  let acmeManagement: string;
  let globexManagement: string;
  /** An inference key of each organization (Acme's is in the closed beta). */
  let acmeKey: string;
  let globexKey: string;

  /** A JSON request; `bearer` goes in Authorization. */
  async function call(method: string, path: string, bearer: string | undefined, body?: unknown): Promise<{ status: number; body: Json; headers: Headers }> {
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }
  const operator = (method: string, path: string, body?: unknown) => call(method, path, operatorToken, body);
  /** Every page of a list endpoint (`field` holds the items), with the page sizes. */
  async function allPages(path: string, field: string, bearer: string): Promise<{ items: Json[]; sizes: number[] }> {
    const items: Json[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const separator = path.includes("?") ? "&" : "?";
      const page = await call("GET", cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`, bearer);
      expect(page.status).toBe(200);
      items.push(...page.body[field]);
      sizes.push(page.body[field].length);
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    return { items, sizes };
  }
  async function chat(key: string, maxTokens = 8): Promise<{ status: number; body: Json }> {
    return call("POST", "/v1/chat/completions", key, { model: server.chatModel, messages: [{ role: "user", content: "Tell me a story." }], max_tokens: maxTokens });
  }
  const expectBadRequest = (response: { status: number; body: Json }, field: string) => {
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.any(String), field });
  };

  beforeAll(async () => {
    const fresh = await freshPlatform(pglite);
    remove = fresh.remove;
    server = await startModelServer({
      platform: fresh.options,
      surfaces: (platform) => {
        const auth = createDashboardAuth({ sessions: new DashboardSessionStore(platform.database), operatorTokens: platform.stores.operatorTokens, managementKeys: platform.managementKeys });
        runs = new RunStore(platform.database);
        const callbacks = new CallbackStore(platform.database);
        // The runs API beside the dashboard, on the same store, so that shapes can be compared; no worker takes runs.
        const runServices = {
          store: runs,
          cancelHere: (runId: string) => { cancelledHere.push(runId); return true; },
          callbackOf: (runId: string) => callbacks.deliveryOf(runId),
        };
        return [
          // Admission of a run's first turn is the runs' tests' (server/runs/); here every run is let in.
          runsSurface({ ...runServices, inferenceKeys: platform.inferenceKeys, engines: resolveEngines(), serves: () => true, admitFirstTurn: async () => undefined, maxActivePerOrganization: 100, notify: () => undefined }),
          dashboardOrganizationSurface({ auth, stores: platform.stores, inferenceKeys: platform.inferenceKeys, runs: runServices }),
          operatorSurface({ auth, stores: platform.stores, keyAuthenticators: [platform.inferenceKeys, platform.managementKeys] }),
        ];
      },
    });
    const stores = server.platform!.stores;
    operatorToken = (await stores.operatorTokens.create("data endpoints' tests")).token;
    acme = await stores.organizations.create("Acme", { closedBeta: true, prices: { "*": { inputPerMillion: 1, outputPerMillion: 2 } } });
    globex = await stores.organizations.create("Globex");
    acmeManagement = (await stores.keys.create(acme.id, "management", "ops")).key;
    globexManagement = (await stores.keys.create(globex.id, "management", "ops")).key;
    acmeKey = (await stores.keys.create(acme.id, "inference", "app")).key;
    globexKey = (await stores.keys.create(globex.id, "inference", "app")).key;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await remove?.();
  });

  it("answers every request, errors included, with the dashboard's headers; the wrong kind of caller is 401", async () => {
    const answers = [
      await call("GET", "/api/v1/dashboard/organization", acmeManagement),
      await call("GET", "/api/v1/dashboard/organization", undefined),
      await call("GET", "/api/v1/dashboard/organization", acmeKey),
      await call("GET", "/api/v1/dashboard/organization", operatorToken),
      await call("GET", "/api/v1/dashboard/keys?limit=0", acmeManagement),
      await call("DELETE", "/api/v1/dashboard/keys/key_missing", acmeManagement),
      await call("POST", "/api/v1/dashboard/keys", acmeManagement, "{not json"),
      await operator("GET", "/api/v1/operator/workers"),
      await call("GET", "/api/v1/operator/workers", acmeManagement),
      await call("GET", "/api/v1/dashboard/nothing-here", acmeManagement),
      await call("PUT", "/api/v1/operator/workers", operatorToken),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 401, 401, 400, 404, 400, 200, 401, 404, 405]);
    expect(answers.at(-2)!.body).toEqual({ error: expect.stringMatching(/no route for GET \/api\/v1\/dashboard\/nothing-here/) });
    expect(answers.at(-1)!.headers.get("allow")).toBe("GET, HEAD");
    for (const answer of answers) {
      for (const [name, value] of Object.entries(DASHBOARD_API_HEADERS)) expect(answer.headers.get(name), name).toBe(value);
      expect(answer.headers.get("content-type")).toBe("application/json");
    }
  });

  it("GET /api/v1/dashboard/organization: the caller's full record", async () => {
    const { status, body } = await call("GET", "/api/v1/dashboard/organization", acmeManagement);
    expect(status).toBe(200);
    expect(body).toEqual({ organization: organizationJson((await server.platform!.stores.organizations.get(acme.id))!) });
    expect(Object.keys(body.organization).sort()).toEqual(
      ["billingMode", "closedBeta", "createdAt", "creditBalanceDollars", "dailyAllowance", "id", "limits", "name", "plan", "pool", "prices"],
    );
    expect(body.organization).toMatchObject({ id: acme.id, name: "Acme", closedBeta: true, prices: { "*": { inputPerMillion: 1, outputPerMillion: 2 } } });
  });

  it("keys: created with the secret once, listed newest first across pages without duplicates or gaps, inference keys only, the organization's only", async () => {
    const created: Json[] = [];
    for (let i = 0; i < 5; i++) {
      const { status, body } = await call("POST", "/api/v1/dashboard/keys", acmeManagement, { name: `page key ${i}` });
      expect(status).toBe(201);
      expect(body).toEqual({ key: { id: expect.stringMatching(/^key_/), name: `page key ${i}`, keyPrefix: expect.any(String), isActive: true, createdAt: expect.any(String), lastUsedAt: null, secret: expect.stringMatching(/^sk-/) } });
      expect(body.key.secret.startsWith(body.key.keyPrefix)).toBe(true);
      created.push(body.key);
    }
    // The new key works for inference at once.
    expect((await chat(created[0].secret, 2)).status).toBe(200);

    const { items, sizes } = await allPages("/api/v1/dashboard/keys?limit=2", "keys", acmeManagement);
    const inference = (await server.platform!.stores.keys.list(acme.id, "inference")).reverse();
    expect(items.map((key) => key.id)).toEqual(inference.map((key) => key.id));
    expect(new Set(items.map((key) => key.id)).size).toBe(items.length);
    expect(sizes.every((size) => size <= 2)).toBe(true);
    expect(items[items.length - 1]!.name).toBe("app");
    const { secret: _secret, ...listed } = created[4];
    expect(items[0]).toEqual(listed);
    const text = JSON.stringify(items);
    expect(text).not.toContain('"secret"');
    for (const key of created) expect(text).not.toContain(key.secret);

    // A key created between two pages is newer than the first page: the next pages neither repeat nor skip.
    const first = await call("GET", "/api/v1/dashboard/keys?limit=3", acmeManagement);
    await call("POST", "/api/v1/dashboard/keys", acmeManagement, { name: "meanwhile" });
    const rest = await allPages(`/api/v1/dashboard/keys?limit=3&cursor=${first.body.nextCursor}`, "keys", acmeManagement);
    expect([...first.body.keys, ...rest.items].map((key: Json) => key.id)).toEqual(inference.map((key) => key.id));

    // Globex sees none of them.
    const globexKeys = await call("GET", "/api/v1/dashboard/keys", globexManagement);
    expect(globexKeys.body).toEqual({ keys: [expect.objectContaining({ name: "app" })], nextCursor: null });
  });

  it("keys: name checked naming the field", async () => {
    expectBadRequest(await call("POST", "/api/v1/dashboard/keys", acmeManagement, {}), "name");
    expectBadRequest(await call("POST", "/api/v1/dashboard/keys", acmeManagement, { name: "  " }), "name");
    expectBadRequest(await call("POST", "/api/v1/dashboard/keys", acmeManagement, { name: "x".repeat(256) }), "name");
    expectBadRequest(await call("POST", "/api/v1/dashboard/keys", acmeManagement, { name: "ok", kind: "management" }), "kind");
    expectBadRequest(await call("POST", "/api/v1/dashboard/keys", acmeManagement, [1]), "body");
  });

  it("a key revoked through the dashboard stops authenticating at once; another organization's key or a management key is 404", async () => {
    const { body } = await call("POST", "/api/v1/dashboard/keys", acmeManagement, { name: "to revoke" });
    expect((await chat(body.key.secret, 2)).status).toBe(200); // now cached as active
    const globexRecord = (await server.platform!.stores.keys.list(globex.id, "inference"))[0]!;
    const acmeManagementRecord = (await server.platform!.stores.keys.list(acme.id, "management"))[0]!;
    for (const id of [globexRecord.id, acmeManagementRecord.id, "key_nonexistent", "x".repeat(300)]) {
      const refused = await call("DELETE", `/api/v1/dashboard/keys/${id}`, acmeManagement);
      expect(refused.status).toBe(404);
      expect(refused.body.field).toBe("id");
    }
    expect((await chat(globexKey, 2)).status).toBe(200);

    const revoked = await call("DELETE", `/api/v1/dashboard/keys/${body.key.id}`, acmeManagement);
    expect(revoked).toMatchObject({ status: 200, body: { key: { id: body.key.id, isActive: false } } });
    expect((await chat(body.key.secret, 2)).status).toBe(401);
    const listed = (await allPages("/api/v1/dashboard/keys", "keys", acmeManagement)).items.find((key) => key.id === body.key.id);
    expect(listed.isActive).toBe(false);
  });

  it("usage: today is GET /api/v1/usage's body; the series sums over keys per day and model", async () => {
    const second = (await server.platform!.stores.keys.create(acme.id, "inference", "second")).key;
    expect((await chat(acmeKey, 4)).status).toBe(200);
    expect((await chat(second, 6)).status).toBe(200);
    const usage = await call("GET", "/api/v1/usage", acmeKey);
    expect(usage.status).toBe(200);
    const dashboard = await call("GET", "/api/v1/dashboard/usage?days=7", acmeManagement);
    expect(dashboard.status).toBe(200);
    expect(dashboard.body.today).toEqual(usage.body);

    const today = new Date().toISOString().slice(0, 10);
    expect(dashboard.body.to).toBe(today);
    expect(dashboard.body.from).toBe(new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10));
    const rows = await server.platform!.stores.usage.rows(acme.id, today);
    const sum = (pick: (row: (typeof rows)[number]) => number) => rows.reduce((total, row) => total + pick(row), 0);
    expect(new Set(rows.map((row) => row.keyId)).size).toBeGreaterThanOrEqual(2);
    expect(dashboard.body.series).toEqual([{
      day: today, model: server.chatModel, requests: sum((row) => row.requests), inputTokens: sum((row) => row.inputTokens),
      cachedInputTokens: sum((row) => row.cachedInputTokens), outputTokens: sum((row) => row.outputTokens),
      spendDollars: expect.closeTo(sum((row) => row.spendDollars), 9),
    }]);
    // Acme has prices: the day cost something.
    expect(dashboard.body.series[0].spendDollars).toBeGreaterThan(0);
    // Per key: each key's own rows, most tokens first, named as its listing names it.
    const keyRecords = await server.platform!.stores.keys.list(acme.id);
    const perKey = [...new Set(rows.map((row) => row.keyId))].map((keyId) => {
      const own = rows.filter((row) => row.keyId === keyId);
      const total = (pick: (row: (typeof rows)[number]) => number) => own.reduce((sum, row) => sum + pick(row), 0);
      const record = keyRecords.find((key) => key.id === keyId)!;
      return { keyId, name: record.name, keyPrefix: record.keyPrefix, requests: total((row) => row.requests), inputTokens: total((row) => row.inputTokens), cachedInputTokens: total((row) => row.cachedInputTokens), outputTokens: total((row) => row.outputTokens), spendDollars: total((row) => row.spendDollars) };
    }).sort((a, b) => b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens) || (a.keyId < b.keyId ? -1 : 1));
    const byKey = await call("GET", "/api/v1/dashboard/usage/keys?days=7", acmeManagement);
    expect(byKey.status).toBe(200);
    expect({ from: byKey.body.from, to: byKey.body.to, keysWithUse: byKey.body.keysWithUse }).toEqual({ from: dashboard.body.from, to: today, keysWithUse: perKey.length });
    expect(byKey.body.keys.map((key: Json) => ({ ...key, spendDollars: Number(key.spendDollars.toFixed(9)) }))).toEqual(perKey.map((key) => ({ ...key, spendDollars: Number(key.spendDollars.toFixed(9)) })));
    // Globex's keys are not Acme's.
    expect((await call("GET", "/api/v1/dashboard/usage/keys", globexManagement)).body.keys.map((key: Json) => key.keyId)).not.toContain(perKey[0]!.keyId);

    // Globex is not in the closed beta: the dashboard shows its usage all the same.
    const globexUsage = await call("GET", "/api/v1/dashboard/usage", globexManagement);
    expect(globexUsage.status).toBe(200);
    expect(globexUsage.body.today).toMatchObject({ billingMode: null, models: [{ slug: server.chatModel, consumedToday: expect.any(Number) }] });
    expect(globexUsage.body.from).toBe(new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10));
    const oneDay = await call("GET", "/api/v1/dashboard/usage?days=1", acmeManagement);
    expect(oneDay.body.from).toBe(oneDay.body.to);
  });

  it("refuses unbounded or malformed inputs with 400 naming the field", async () => {
    for (const limit of ["0", "101", "-1", "1.5", "abc", "", "1e2", "0050000000000"]) expectBadRequest(await call("GET", `/api/v1/dashboard/keys?limit=${limit}`, acmeManagement), "limit");
    const good = (await call("GET", "/api/v1/dashboard/keys?limit=1", acmeManagement)).body.nextCursor as string;
    const runsCursor = Buffer.from(JSON.stringify(["12"])).toString("base64url");
    const badCursors = [
      "", "not a cursor", "%%%", "x".repeat(201), `${good}=`, good.slice(0, -2), runsCursor,
      Buffer.from(JSON.stringify(["2024-01-01T00:00:00.000001Z", "key_a", "extra"])).toString("base64url"),
      Buffer.from(JSON.stringify(["2024-01-01T00:00:00Z", "key_a"])).toString("base64url"),
      Buffer.from(JSON.stringify(["2024-02-30T00:00:00.000001Z", "key_a"])).toString("base64url"),
      Buffer.from(JSON.stringify(["2024-01-01T00:00:00.000001Z", "key'; DROP TABLE api_keys; --"])).toString("base64url"),
      Buffer.from(JSON.stringify({ at: "2024-01-01T00:00:00.000001Z", id: "key_a" })).toString("base64url"),
    ];
    for (const cursor of badCursors) expectBadRequest(await call("GET", `/api/v1/dashboard/keys?cursor=${encodeURIComponent(cursor)}`, acmeManagement), "cursor");
    for (const cursor of [good, Buffer.from(JSON.stringify(["0"])).toString("base64url"), Buffer.from(JSON.stringify(["9223372036854775808"])).toString("base64url"), Buffer.from(JSON.stringify([12])).toString("base64url")]) {
      expectBadRequest(await call("GET", `/api/v1/dashboard/runs?cursor=${encodeURIComponent(cursor)}`, acmeManagement), "cursor");
    }
    expect((await call("GET", `/api/v1/dashboard/runs?cursor=${runsCursor}`, acmeManagement)).status).toBe(200);
    for (const days of ["0", "91", "x", "30.5", "-3"]) {
      expectBadRequest(await call("GET", `/api/v1/dashboard/usage?days=${days}`, acmeManagement), "days");
      expectBadRequest(await call("GET", `/api/v1/dashboard/usage/keys?days=${days}`, acmeManagement), "days");
    }
    for (const status of ["done", "QUEUED", ""]) expectBadRequest(await call("GET", `/api/v1/dashboard/runs?status=${status}`, acmeManagement), "status");
    expectBadRequest(await call("GET", "/api/v1/dashboard/keys?limit=1&limit=2", acmeManagement), "limit");
    expectBadRequest(await call("GET", "/api/v1/dashboard/keys?offset=3", acmeManagement), "offset");
    expectBadRequest(await call("GET", "/api/v1/dashboard/organization?x=1", acmeManagement), "x");
    expectBadRequest(await operator("GET", "/api/v1/operator/payments?status=paid"), "status");
    expectBadRequest(await operator("GET", `/api/v1/operator/organizations/${acme.id}/keys?kind=admin`), "kind");
    expectBadRequest(await operator("GET", "/api/v1/operator/organizations?limit=500"), "limit");
    expectBadRequest(await operator("GET", `/api/v1/operator/organizations?cursor=${good}`), "cursor");
  });

  it("runs: newest first with the question, filtered by status, paged; detail and cancel as the runs API; another organization's run is 404", async () => {
    const create = async (key: string, text: string, instructions?: string) => {
      const { status, body } = await call("POST", "/v1/runs", key, { engine: "tim", input: { ...(instructions ? { instructions } : {}), content: [{ text }, { text: "more" }] } });
      expect(status).toBe(202);
      return body.runId as string;
    };
    // One run ends (a worker takes it and answers), one is taken and runs, one waits; Globex's waits too.
    const finished = await create(acmeKey, `third ${"é".repeat(300)}`, "Answer briefly.");
    await finishRun(finished);
    const processing = await create(acmeKey, "second question");
    expect((await runs.claim("test-worker", 1, 60_000)).map((run) => run.id)).toEqual([processing]);
    const queued = await create(acmeKey, "first question");
    const foreign = await create(globexKey, "globex question");

    const list = await call("GET", "/api/v1/dashboard/runs", acmeManagement);
    expect(list.status).toBe(200);
    expect(list.body.nextCursor).toBeNull();
    expect(list.body.runs.map((run: Json) => run.runId)).toEqual([queued, processing, finished]);
    for (const run of list.body.runs) {
      const poll = await call("GET", `/v1/runs/${run.runId}`, acmeKey);
      const { question, ...rest } = run;
      expect(rest).toEqual({ ...poll.body, usage: { ...poll.body.usage, durationMs: expect.any(Number) } });
    }
    expect(list.body.runs.map((run: Json) => run.question)).toEqual(["first question", "second question", `third ${"é".repeat(194)}`]);

    const paged = await allPages("/api/v1/dashboard/runs?limit=1", "runs", acmeManagement);
    expect(paged.items.map((run) => run.runId)).toEqual([queued, processing, finished]);
    expect(paged.sizes).toEqual([1, 1, 1]);
    const byStatus = async (status: string) => (await call("GET", `/api/v1/dashboard/runs?status=${status}`, acmeManagement)).body.runs.map((run: Json) => run.runId);
    expect(await byStatus("queued")).toEqual([queued]);
    expect(await byStatus("processing")).toEqual([processing]);
    expect(await byStatus("succeeded")).toEqual([finished]);
    expect(await byStatus("failed")).toEqual([]);

    const detail = await call("GET", `/api/v1/dashboard/runs/${finished}`, acmeManagement);
    expect(detail.status).toBe(200);
    const poll = await call("GET", `/v1/runs/${finished}`, acmeKey);
    const steps = await call("GET", `/v1/runs/${finished}/steps`, acmeKey);
    expect(detail.body).toEqual({ run: { ...poll.body, question: `third ${"é".repeat(194)}`, instructions: "Answer briefly." }, steps: steps.body.steps });
    expect(detail.body.steps).toHaveLength(1);

    // Globex's run: absent from Acme's list, 404 to read or cancel, and left as it was.
    for (const [method, path] of [["GET", `/api/v1/dashboard/runs/${foreign}`], ["POST", `/api/v1/dashboard/runs/${foreign}/cancel`], ["GET", "/api/v1/dashboard/runs/run_nonexistent"]] as const) {
      const refused = await call(method, path, acmeManagement);
      expect(refused.status).toBe(404);
      expect(refused.body.field).toBe("id");
    }
    expect((await call("GET", `/v1/runs/${foreign}`, globexKey)).body.status).toBe("queued");
    expect((await call("GET", "/api/v1/dashboard/runs", globexManagement)).body.runs.map((run: Json) => run.runId)).toEqual([foreign]);

    // Cancel: a queued run fails at once; a processing one is flagged and stopped where it runs (here).
    const cancelledQueued = await call("POST", `/api/v1/dashboard/runs/${queued}/cancel`, acmeManagement);
    expect(cancelledQueued.status).toBe(200);
    expect(cancelledQueued.body).toEqual((await call("GET", `/v1/runs/${queued}`, acmeKey)).body);
    expect(cancelledQueued.body).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    expect(cancelledHere).toEqual([]);
    const cancelledProcessing = await call("POST", `/api/v1/dashboard/runs/${processing}/cancel`, acmeManagement);
    expect(cancelledProcessing.body).toMatchObject({ runId: processing, status: "processing" });
    expect(cancelledHere).toEqual([processing]);
    expect((await runs.get(processing))!.cancelRequested).toBe(true);
  });

  /** Ends a queued run as a worker would: taken, one model step, succeeded. */
  async function finishRun(runId: string): Promise<void> {
    const [run] = await runs.claim("finisher", 1, 60_000);
    expect(run!.id).toBe(runId);
    await runs.appendStep(runId, "finisher", { attempt: 1, kind: "model", status: "finished", detail: { text: "done" }, inputTokens: 5, outputTokens: 2, durationMs: 3 });
    expect(await runs.finish(runId, "finisher", { result: { answer: "42", reasoning: "" } })).toBe(true);
  }

  it("models: the slugs served here, which API takes each, and each API's default", async () => {
    const { status, body } = await call("GET", "/api/v1/dashboard/models", acmeManagement);
    expect(status).toBe(200);
    expect(body).toEqual({ models: [{ id: server.chatModel, formats: ["openai"], default: true }, { id: server.messagesModel, formats: ["anthropic"], default: true }] });
    // Each name works in its own API (the quick start's snippets use them so).
    const messages = await fetch(`${server.base}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": acmeKey, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: server.messagesModel, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(messages.status).toBe(200);
    expect((await chat(acmeKey, 2)).status).toBe(200);
  });

  it("operator: organizations paged oldest first, created and patched as loom admin does, each bad field named", async () => {
    const created = await operator("POST", "/api/v1/operator/organizations", { name: "Initech", closedBeta: true, requestsPerMinute: 7, prices: { m: { inputPerMillion: 1, outputPerMillion: 3 } } });
    expect(created.status).toBe(201);
    const stored = (await server.platform!.stores.organizations.get(created.body.organization.id))!;
    expect(created.body).toEqual({ organization: organizationJson(stored) });
    expect(stored).toMatchObject({ name: "Initech", closedBeta: true, limits: { requestsPerMinute: 7 }, prices: { m: { inputPerMillion: 1, outputPerMillion: 3 } } });

    expectBadRequest(await operator("POST", "/api/v1/operator/organizations", { closedBeta: true }), "name");
    expectBadRequest(await operator("POST", "/api/v1/operator/organizations", { name: "x", requestsPerMinute: 0 }), "requestsPerMinute");
    expectBadRequest(await operator("POST", "/api/v1/operator/organizations", { name: "x", bogus: 1 }), "bogus");
    expectBadRequest(await operator("POST", "/api/v1/operator/organizations", "[]"), "body");

    const patched = await operator("PATCH", `/api/v1/operator/organizations/${stored.id}`, { billingMode: "prepaid", addCreditsDollars: 12.5, allowanceBasis: "tokens", allowanceAmount: 1000, pool: "initech" });
    expect(patched.status).toBe(200);
    expect(patched.body.organization).toMatchObject({ billingMode: "prepaid", creditBalanceDollars: 12.5, dailyAllowance: { basis: "tokens", amount: 1000, hardCap: false }, pool: "initech", name: "Initech" });
    expect(patched.body).toEqual({ organization: organizationJson((await server.platform!.stores.organizations.get(stored.id))!) });
    expectBadRequest(await operator("PATCH", `/api/v1/operator/organizations/${stored.id}`, { billingMode: "barter" }), "billingMode");
    expectBadRequest(await operator("PATCH", `/api/v1/operator/organizations/${stored.id}`, { allowanceAmount: 1.5 }), "allowanceAmount");
    expectBadRequest(await operator("PATCH", `/api/v1/operator/organizations/${stored.id}`, { pool: "default" }), "pool");
    expectBadRequest(await operator("PATCH", `/api/v1/operator/organizations/${stored.id}`, { prices: { m: { inputPerMillion: -1, outputPerMillion: 1 } } }), "prices.m.inputPerMillion");
    const missing = await operator("PATCH", "/api/v1/operator/organizations/org_nonexistent", { closedBeta: true });
    expect(missing).toMatchObject({ status: 404, body: { field: "id" } });
    expect((await operator("GET", "/api/v1/operator/organizations/org_nonexistent")).status).toBe(404);
    expect((await operator("GET", `/api/v1/operator/organizations/${acme.id}`)).body).toEqual({ organization: organizationJson((await server.platform!.stores.organizations.get(acme.id))!) });

    const { items, sizes } = await allPages("/api/v1/operator/organizations?limit=2", "organizations", operatorToken);
    const all = await server.platform!.stores.organizations.list();
    expect(items).toEqual(all.map(organizationJson));
    expect(sizes.slice(0, -1).every((size) => size === 2)).toBe(true);

    // Search: by part of the name (any case) or the id, with paging; a bad search is a 400 naming it.
    const found = await allPages("/api/v1/operator/organizations?limit=1&search=INITECH", "organizations", operatorToken);
    expect(found.items).toEqual([organizationJson((await server.platform!.stores.organizations.get(stored.id))!)]);
    expect((await operator("GET", `/api/v1/operator/organizations?search=${acme.id}`)).body.organizations.map((organization: Json) => organization.id)).toEqual([acme.id]);
    expect((await operator("GET", "/api/v1/operator/organizations?search=%25")).body).toEqual({ organizations: [], nextCursor: null });
    for (const search of ["", "x".repeat(256), "a%00b"]) expectBadRequest(await operator("GET", `/api/v1/operator/organizations?search=${search}`), "search");
  });

  it("operator: any organization's keys, listed by kind, created of either kind, revoked at once", async () => {
    const created = await operator("POST", `/api/v1/operator/organizations/${globex.id}/keys`, { kind: "management", name: "second ops" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ key: { id: expect.stringMatching(/^key_/), kind: "management", name: "second ops", keyPrefix: expect.any(String), isActive: true, createdAt: expect.any(String), lastUsedAt: null, secret: expect.any(String) } });
    const secret = created.body.key.secret as string;
    expect((await call("GET", "/api/v1/dashboard/organization", secret)).body.organization.id).toBe(globex.id);

    const all = await allPages(`/api/v1/operator/organizations/${globex.id}/keys?limit=1`, "keys", operatorToken);
    const records = (await server.platform!.stores.keys.list(globex.id)).reverse();
    expect(all.items.map((key) => [key.id, key.kind])).toEqual(records.map((key) => [key.id, key.kind]));
    const management = await call("GET", `/api/v1/operator/organizations/${globex.id}/keys?kind=management`, operatorToken);
    expect(management.body.keys.map((key: Json) => key.id)).toEqual(records.filter((key) => key.kind === "management").map((key) => key.id));
    expect(management.body.keys[0]).toEqual({ ...created.body.key, secret: undefined });

    expectBadRequest(await operator("POST", `/api/v1/operator/organizations/${globex.id}/keys`, { kind: "root", name: "x" }), "kind");
    expectBadRequest(await operator("POST", `/api/v1/operator/organizations/${globex.id}/keys`, { kind: "inference" }), "name");
    expect((await operator("POST", "/api/v1/operator/organizations/org_nonexistent/keys", { kind: "inference", name: "x" })).status).toBe(404);
    expect((await operator("GET", "/api/v1/operator/organizations/org_nonexistent/keys")).status).toBe(404);
    // A key of another organization is not this one's to revoke.
    const acmeRecord = (await server.platform!.stores.keys.list(acme.id))[0]!;
    expect((await operator("DELETE", `/api/v1/operator/organizations/${globex.id}/keys/${acmeRecord.id}`)).status).toBe(404);

    const revoked = await operator("DELETE", `/api/v1/operator/organizations/${globex.id}/keys/${created.body.key.id}`);
    expect(revoked).toMatchObject({ status: 200, body: { key: { id: created.body.key.id, isActive: false } } });
    expect((await call("GET", "/api/v1/dashboard/organization", secret)).status).toBe(401);
  });

  it("operator: workers shows the served model's live load, and tokens per second right after generating", async () => {
    expect((await chat(acmeKey, 16)).status).toBe(200);
    const { status, body } = await operator("GET", "/api/v1/operator/workers");
    expect(status).toBe(200);
    expect(body).toEqual({
      models: [{
        model: server.chatModel, running: expect.any(Number), waiting: expect.any(Number), kvBlocksUsed: expect.any(Number),
        kvBlocksCached: expect.any(Number), kvBlocksFree: expect.any(Number), tokensPerSecond: expect.any(Number), workers: [],
      }],
    });
    const [model] = body.models;
    expect(model.kvBlocksFree).toBeGreaterThan(0);
    expect(model.kvBlocksCached).toBeGreaterThan(0); // the prompts just run are cached
    expect(model.tokensPerSecond).toBeGreaterThan(0);
    // As /metrics exports them.
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    expect(metrics).toContain(`loom_kv_blocks_free{model="${server.chatModel}"} ${model.kvBlocksFree}`);
  });

  it("operator: payments newest first across pages, filtered by status", async () => {
    const made: Array<{ id: string; status: string }> = [];
    const statuses = ["settled", "failed", "settling"] as const;
    for (let i = 0; i < 7; i++) made.push({ id: await insertPayment(server.platform!.database, 100 + i, statuses[i % 3]!, `2030-01-01T00:00:0${i}.5Z`), status: statuses[i % 3]! });
    const newest = [...made].reverse();
    const { items, sizes } = await allPages("/api/v1/operator/payments?limit=3", "payments", operatorToken);
    expect(items.map((payment) => payment.id)).toEqual(newest.map((payment) => payment.id));
    expect(sizes).toEqual([3, 3, 1]);
    expect(items[0]).toEqual((await server.platform!.stores.payments.list({ limit: 1 }))[0]);
    const settled = await allPages("/api/v1/operator/payments?status=settled&limit=1", "payments", operatorToken);
    expect(settled.items.map((payment) => payment.id)).toEqual(newest.filter((payment) => payment.status === "settled").map((payment) => payment.id));
  });
});
