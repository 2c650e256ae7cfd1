// The dashboard's speed at a large organization's size: with 10,000 keys and 1,000,000 usage rows in PostgreSQL
// (bench/dashboard-seed.ts; every key and row belongs to the one organization measured, the heaviest case), each
// page's data endpoint is timed over loopback (target: p95 under 50 ms), then each page in headless Chromium from
// navigation to usable (its <main> marked data-ready once its data is on screen; target: under 1 s).
// Run: npm run build && node dist/bench/dashboard-load.js [options] (USAGE below; --help prints it).
//
// Setup: a fresh PostgreSQL database (127.0.0.1:5432, or --database-url's server), migrated and seeded in bulk, then
// `loom serve --database-url` as a user runs it (the compiled CLI in a child process) on the 260K-parameter stories
// model (the model is irrelevant here; nothing generates). Endpoints are called with bearer credentials (a management
// key, an operator token), which the dashboard's pages get through their session cookie instead: the same handlers
// and queries. Requests: sequential, keep-alive, `--requests` per endpoint after 20 warm-up ones. Pages: Debian's
// Chromium through playwright-core, signed in through the sign-in API in the browser's context; each load is a new tab
// (the first of each page is a cold cache, the rest warm), `--loads` per page.
import { execFileSync } from "node:child_process";
import { Agent, request } from "node:http";
import { openDatabase } from "../server/platform/db/open-database.js";
import { TEST_POSTGRES_URL, createTestPostgresDatabase } from "../server/platform/testing/test-databases.js";
import { LOOM_CLI, startLoomServe, stopChild } from "../server/testing/loom-process.js";
import { chromiumMissing, launchChromium, saveScreenshot } from "../server/testing/browser.js";
import { FIXTURES } from "../engine/testing/fixtures.js";
import { BenchCli } from "./bench-args.js";
import { median, percentile, printHeader } from "./bench-models.js";
import { ISSUE_SIZES, seedDashboardData } from "./dashboard-seed.js";

/** The command line; --help prints it. */
const USAGE = `node dist/bench/dashboard-load.js [--requests 200] [--loads 10] [--database-url URL]`;
const cli: BenchCli = new BenchCli("dashboard-load", USAGE);
const values = cli.parse({ requests: { type: "string", default: "200" }, loads: { type: "string", default: "10" }, "database-url": { type: "string" } });
const REQUESTS = cli.integer("requests", values.requests);
const LOADS = cli.integer("loads", values.loads);
const serverUrl = values["database-url"] ?? TEST_POSTGRES_URL;
if (!serverUrl) cli.fail("no PostgreSQL at 127.0.0.1:5432 answered: pass --database-url");

printHeader(`node dist/bench/dashboard-load.js --requests ${REQUESTS} --loads ${LOADS}`, 1);

const { url: databaseUrl, drop } = await createTestPostgresDatabase(serverUrl);
let stop = async () => {};
try {
  const database = await openDatabase({ url: databaseUrl });
  const seeded = await seedDashboardData(database, ISSUE_SIZES, (line) => console.log(`  ${line}`));
  const [counts] = await database.query<{ keys: number; usage: number }>("SELECT (SELECT count(*) FROM api_keys)::int AS keys, (SELECT count(*) FROM usage_daily)::int AS usage");
  console.log(`  database: ${counts!.keys} keys, ${counts!.usage} usage rows`);
  await database.close();
  const operatorToken = (JSON.parse(execFileSync(process.execPath, [LOOM_CLI, "admin", "operator-token", "create", "--name", "bench", "--database-url", databaseUrl, "--json"], { encoding: "utf8" })) as { token: string }).token;

  const server = await startLoomServe(["--model", FIXTURES.stories260kGguf, "--database-url", databaseUrl, "--port", "0", "--threads", "1"], { env: { ...process.env, LOOM_API_KEYS: "" } });
  stop = () => stopChild(server.child);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string, bearer: string) => new Promise<{ status: number; bytes: number }>((resolve, reject) => {
    const req = request(`${server.base}${path}`, { agent, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => { bytes += chunk.length; });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on("error", reject);
    req.end();
  });

  // One deep page of keys: the cursor of the 50th page (keyset paging reads the same few rows however deep).
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const body = await fetch(`${server.base}/api/v1/dashboard/keys?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: { authorization: `Bearer ${seeded.managementKey}` } }).then((r) => r.json()) as { nextCursor: string | null };
    cursor = body.nextCursor;
  }
  const endpoints: Array<{ page: string; path: string; bearer: string }> = [
    // The floor: the same connection's round trip to a route with no credential check and no database.
    { page: "(floor: no auth, no database)", path: "/health", bearer: "" },
    { page: "Keys", path: "/api/v1/dashboard/keys?limit=50", bearer: seeded.managementKey },
    { page: "Keys (page 51, limit 100)", path: `/api/v1/dashboard/keys?limit=100&cursor=${cursor}`, bearer: seeded.managementKey },
    { page: "Usage (30 days)", path: "/api/v1/dashboard/usage?days=30", bearer: seeded.managementKey },
    { page: "Usage (90 days)", path: "/api/v1/dashboard/usage?days=90", bearer: seeded.managementKey },
    { page: "Usage by key (30 days)", path: "/api/v1/dashboard/usage/keys?days=30", bearer: seeded.managementKey },
    { page: "Usage by key (90 days)", path: "/api/v1/dashboard/usage/keys?days=90", bearer: seeded.managementKey },
    { page: "Operator: search", path: "/api/v1/operator/organizations?limit=50&search=org%2099", bearer: operatorToken },
    { page: "Plan and limits", path: "/api/v1/dashboard/organization", bearer: seeded.managementKey },
    { page: "Runs", path: "/api/v1/dashboard/runs?limit=50", bearer: seeded.managementKey },
    { page: "Runs (succeeded)", path: "/api/v1/dashboard/runs?limit=50&status=succeeded", bearer: seeded.managementKey },
    { page: "A run", path: `/api/v1/dashboard/runs/${seeded.runId}`, bearer: seeded.managementKey },
    { page: "Quick start", path: "/api/v1/dashboard/models", bearer: seeded.managementKey },
    { page: "Operator: organizations", path: "/api/v1/operator/organizations?limit=50", bearer: operatorToken },
    { page: "Operator: an organization", path: `/api/v1/operator/organizations/${seeded.organizationId}`, bearer: operatorToken },
    { page: "Operator: its keys", path: `/api/v1/operator/organizations/${seeded.organizationId}/keys?limit=50`, bearer: operatorToken },
    { page: "Operator: workers", path: "/api/v1/operator/workers", bearer: operatorToken },
    { page: "Operator: payments", path: "/api/v1/operator/payments?limit=50", bearer: operatorToken },
  ].filter((endpoint, i, all) => all.findIndex((other) => other.path === endpoint.path && other.bearer === endpoint.bearer) === i);

  console.log(`\n| page | endpoint | bytes | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) | p50 / floor p50 |`);
  console.log(`|---|---|---|---|---|---|---|---|`);
  let floor = Number.NaN;
  for (const endpoint of endpoints) {
    for (let i = 0; i < 20; i++) await get(endpoint.path, endpoint.bearer);
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const start = performance.now();
      const answer = await get(endpoint.path, endpoint.bearer);
      times.push(performance.now() - start);
      if (answer.status !== 200) throw new Error(`${endpoint.path} answered ${answer.status}`);
      bytes = answer.bytes;
    }
    const path = endpoint.path.replace(/cursor=[^&]+/, "cursor=...").replace(/org_[0-9a-f]+/, "{id}");
    if (Number.isNaN(floor)) floor = median(times);
    console.log(`| ${endpoint.page} | \`GET ${path}\` | ${bytes} | ${median(times).toFixed(2)} | ${percentile(times, 0.95).toFixed(2)} | ${percentile(times, 0.99).toFixed(2)} | ${Math.max(...times).toFixed(2)} | ${(median(times) / floor).toFixed(1)}x |`);
  }
  agent.destroy();

  if (chromiumMissing) {
    console.log(`\npages: skipped (${chromiumMissing})`);
  } else {
    const browser = await launchChromium();
    const pages = [
      { kind: "organization", credential: { managementKey: seeded.managementKey }, routes: ["keys", "usage", "plan", "runs", `runs/${seeded.runId}`, "quickstart"] },
      { kind: "operator", credential: { operatorToken }, routes: ["operator/organizations", `operator/organizations/${seeded.organizationId}`, "operator/workers", "operator/payments"] },
    ];
    console.log(`\n| page | first load (ms) | warm p50 (ms) | warm p95 (ms) | warm max (ms) |`);
    console.log(`|---|---|---|---|---|`);
    {
      // The floor: a new tab loading a 26-byte document from the same server (no script, no data).
      const context = await browser.newContext();
      const times: number[] = [];
      for (let i = 0; i < LOADS + 1; i++) {
        const tab = await context.newPage();
        const start = performance.now();
        await tab.goto(`${server.base}/health`);
        times.push(performance.now() - start);
        await tab.close();
      }
      const [first, ...warm] = times;
      console.log(`| (floor: a new tab, GET /health) | ${first!.toFixed(0)} | ${median(warm).toFixed(0)} | ${percentile(warm, 0.95).toFixed(0)} | ${Math.max(...warm).toFixed(0)} |`);
      await context.close();
    }
    for (const { credential, routes } of pages) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const signIn = await context.request.post(`${server.base}/api/v1/dashboard/session`, { data: credential, headers: { origin: server.base } });
      if (!signIn.ok()) throw new Error(`sign-in answered ${signIn.status()}: ${await signIn.text()}`);
      for (const route of routes) {
        const times: number[] = [];
        for (let i = 0; i < LOADS + 1; i++) {
          const tab = await context.newPage();
          const start = performance.now();
          await tab.goto(`${server.base}/dashboard/#/${route}`);
          await tab.waitForSelector('main[data-ready="true"]', { timeout: 10_000 });
          times.push(performance.now() - start);
          await tab.close();
        }
        if (route === "usage") {
          // The README's picture of the usage page, with the seeded organization's 30 days.
          const tab = await context.newPage();
          await tab.goto(`${server.base}/dashboard/#/${route}`);
          await tab.waitForSelector('main[data-ready="true"]');
          await saveScreenshot(tab, "dashboard-bench", "usage-desktop");
          await tab.close();
        }
        const [first, ...warm] = times;
        console.log(`| #/${route.replace(/run_[A-Za-z0-9_]+|org_[A-Za-z0-9_]+/, "<id>")} | ${first!.toFixed(0)} | ${median(warm).toFixed(0)} | ${percentile(warm, 0.95).toFixed(0)} | ${Math.max(...warm).toFixed(0)} |`);
      }
      await context.close();
    }
    await browser.close();
  }
} finally {
  await stop();
  await drop();
}
