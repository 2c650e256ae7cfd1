// The dashboard end to end: headless Chromium (Debian's, through playwright-core) against a real `loom
// serve` on PGlite, as a user runs both. The operator signs in with a token `loom admin` printed and creates an
// organization and its management key; the organization signs in with that key, creates an inference key, calls chat
// completions with it through the `openai` SDK, sees the usage, revokes the key (the SDK then gets 401), reads a run's
// steps and answer, and signs out (the session is then dead on the server). Besides: names are shown as text, a
// cross-site change is refused, cookie flags and the CSP are as documented, one organization cannot read another's
// keys or runs, axe-core finds nothing serious on any page, and every page is photographed at desktop and phone
// widths (test-artifacts/dashboard/).
import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import OpenAI from "openai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { ARTIFACTS_DIR, VIEWPORTS, chromiumMissing, launchChromium, saveScreenshot, seriousAxeViolations } from "../testing/browser.js";
import { LOOM_CLI, type LoomProcess, startLoomServe, stopChild } from "../testing/loom-process.js";
import { migratedDataDir } from "../platform/testing/test-databases.js";

const reason = chromiumMissing ?? testModelSkipReason("tiny-qwen3");
const children: ChildProcess[] = [];
const run = promisify(execFile);

/** `loom admin <args> --data-dir <dir> --json`, through the running server's admin endpoint. */
async function admin(dataDir: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [LOOM_CLI, "admin", ...args, "--data-dir", dataDir, "--json"]);
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe.skipIf(skipOutsideCi(reason))(titled("the dashboard in headless Chromium against loom serve on PGlite", reason), () => {
  let dataDir: string;
  let server: LoomProcess;
  let browser: Browser;
  let operatorToken: string;
  const dialogs: string[] = [];
  /** The page's console errors and CSP reports: any is a failure. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    failIfMissing(reason);
    rmSync(join(ARTIFACTS_DIR, "dashboard"), { recursive: true, force: true }); // this run's pictures only
    dataDir = await migratedDataDir();
    const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
    const config = join(dataDir, "..", `dashboard-${process.pid}.json`);
    writeFileSync(config, JSON.stringify({ runs: { concurrency: 1, engines: { tim: { maxSteps: 2, maxStepTokens: 24, temperature: 0 } } } }));
    server = await startLoomServe(["--model", model, "--data-dir", dataDir, "--config", config, "--port", "0", "--threads", "1", "--context", "1024"], { children, env: { ...process.env, LOOM_API_KEYS: "" } });
    operatorToken = (await admin(dataDir, ["operator-token", "create", "--name", "e2e"])).token as string;
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    for (const child of children) await stopChild(child);
    if (dataDir) {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(join(dataDir, "..", `dashboard-${process.pid}.json`), { force: true });
    }
  });

  /** The pages of the running test, photographed if it fails (test-artifacts/dashboard/failed-*.png). */
  let openPages: Page[] = [];
  afterEach(async (test) => {
    if (test.task.result?.state === "fail") {
      for (const [i, page] of openPages.entries()) if (!page.isClosed()) await saveScreenshot(page, "dashboard", `failed-${test.task.name.slice(0, 40).replace(/\W+/g, "-")}-${i}`).catch(() => undefined);
    }
    openPages = [];
  });

  /** A fresh browser profile at `viewport`, failing on any alert (a script run from data) or page error. */
  async function newContext(viewport: keyof typeof VIEWPORTS = "desktop"): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: VIEWPORTS[viewport] });
    context.on("page", watch);
    return context;
  }
  function watch(page: Page): void {
    openPages.push(page);
    page.on("dialog", (dialog) => { dialogs.push(dialog.message()); void dialog.dismiss(); });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("console", (message) => { if (message.type() === "error" && !/status of 40[134]/.test(message.text())) pageErrors.push(message.text()); });
  }

  /** Opens `#/<route>` and waits until the page says its data is on screen. */
  async function open(page: Page, route: string): Promise<void> {
    await page.goto(`${server.base}/dashboard/#/${route}`);
    await page.locator('main[data-ready="true"]').waitFor({ timeout: 20_000 });
  }

  /** Signs in through the sign-in page. */
  async function signIn(page: Page, kind: "organization" | "operator", secret: string): Promise<void> {
    await page.goto(`${server.base}/dashboard/`);
    await page.getByTestId(`signin-kind-${kind}`).check();
    await page.getByTestId("signin-secret").fill(secret);
    await page.getByTestId("signin-submit").click();
    await page.getByTestId("sign-out").waitFor();
    await page.locator('main[data-ready="true"]').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId("signin-secret").count()).toBe(0);
  }

  /** axe-core's serious and critical findings on the page now, and a screenshot at both widths. */
  async function inspect(page: Page, name: string): Promise<void> {
    for (const viewport of ["desktop", "phone"] as const) {
      await page.setViewportSize(VIEWPORTS[viewport]);
      await page.locator('main[data-ready="true"]').waitFor();
      expect(await seriousAxeViolations(page), `axe on ${name} (${viewport})`).toEqual([]);
      await saveScreenshot(page, "dashboard", `${name}-${viewport}`);
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  }

  let organizationId: string;
  let managementKey: string;

  it("lets the operator sign in with an admin token, create an organization and give it a management key", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, "operator", operatorToken);
    await inspect(page, "operator-organizations");

    await page.getByTestId("create-organization-name").fill("Acme <b>Labs</b>");
    await page.getByTestId("create-organization-submit").click();
    // A new organization opens on its own page.
    await page.locator('main[data-ready="true"][data-page="operator-organization"]').waitFor();
    expect(await page.locator("h1").textContent()).toBe("Acme <b>Labs</b>");
    organizationId = /organizations\/(org_[0-9a-f]+)/.exec(page.url())![1]!;
    await open(page, "operator/organizations");
    expect(await page.getByTestId("organization-row").filter({ hasText: "Acme <b>Labs</b>" }).getAttribute("data-organization-id")).toBe(organizationId);
    await page.getByTestId("organization-row").filter({ hasText: "Acme <b>Labs</b>" }).getByTestId("organization-link").click();
    await page.locator('main[data-ready="true"][data-page="operator-organization"]').waitFor();
    // Closed beta (GET /api/v1/usage needs it, and the usage page is compared with it below).
    await page.getByTestId("org-closedBeta").check();
    await page.getByTestId("edit-organization-submit").click();
    await page.getByTestId("edit-saved").waitFor();
    await page.getByTestId("create-key-kind").selectOption("management");
    await page.getByTestId("create-key-name").fill("dashboard");
    await page.getByTestId("create-key-submit").click();
    managementKey = (await page.getByTestId("new-key-secret").textContent())!.trim();
    expect(managementKey).toMatch(/^sk-mgmt-/);
    await inspect(page, "operator-key-created");
    await page.getByTestId("secret-done").click();
    await inspect(page, "operator-organization");

    await open(page, "operator/workers");
    expect(await page.getByTestId("model-load-row").count()).toBe(1);
    await inspect(page, "operator-workers");
    await open(page, "operator/payments");
    await inspect(page, "operator-payments");
    await context.close();
  }, 120_000);

  it("lets the organization create a key, use it through the openai SDK, see the usage and revoke it", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, "organization", managementKey);
    await inspect(page, "usage-empty");

    await open(page, "keys");
    const hostileName = "<img src=x onerror=alert(1)>";
    await page.getByTestId("create-key-name").fill(hostileName);
    await page.getByTestId("create-key-submit").click();
    const secret = (await page.getByTestId("new-key-secret").textContent())!.trim();
    expect(secret).toMatch(/^sk-gw-/);
    await inspect(page, "key-created");
    await page.getByTestId("secret-done").click();
    const row = page.getByTestId("key-row").filter({ hasText: hostileName });
    expect(await row.getByTestId("key-name").textContent()).toBe(hostileName);
    expect(await page.locator("img[src=x]").count()).toBe(0);

    const client = new OpenAI({ apiKey: secret, baseURL: `${server.base}/v1`, maxRetries: 0 });
    const [model] = (await client.models.list()).data;
    const completion = await client.chat.completions.create({ model: model!.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 8 });
    const used = completion.usage!.prompt_tokens + completion.usage!.completion_tokens;

    // The usage page shows the call once it is recorded (batched), with GET /api/v1/usage's numbers.
    let shown = "";
    for (const until = Date.now() + 20_000; Date.now() < until;) {
      await open(page, "usage");
      shown = (await page.getByTestId("usage-today").textContent()) ?? "";
      if (shown.includes(model!.id)) break;
      await page.waitForTimeout(300);
    }
    expect(shown).toContain(model!.id);
    expect(shown.replace(/[,\s\u00a0\u202f]/g, "")).toContain(String(used));
    const snapshot = await (await fetch(`${server.base}/api/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })).json() as { models: Array<{ slug: string; consumedToday: number }> };
    expect(snapshot.models).toEqual([{ slug: model!.id, consumedToday: used }]);
    await inspect(page, "usage");

    await open(page, "keys");
    await row.getByTestId("revoke-key").click();
    await page.getByTestId("confirm").click();
    await expect.poll(() => row.getByTestId("key-status").textContent()).toBe("revoked");
    await expect(client.chat.completions.create({ model: model!.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 8 })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await inspect(page, "keys");

    for (const route of ["plan", "quickstart"]) {
      await open(page, route);
      await inspect(page, route);
    }
    await context.close();
  }, 180_000);

  it("shows a run's steps and answer, and signing out ends the session on the server", async () => {
    const api = (path: string, init: RequestInit = {}) => fetch(`${server.base}${path}`, { ...init, headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json", ...init.headers } });
    const { key } = (await (await api("/api/v1/dashboard/keys", { method: "POST", body: JSON.stringify({ name: "runs" }) })).json() as { key: { secret: string } });
    const created = await fetch(`${server.base}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ engine: "tim", input: { instructions: "Answer briefly.", content: [{ text: "What is a loom?" }] } }),
    });
    expect(created.status).toBe(202);
    const { runId } = await created.json() as { runId: string };

    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, "organization", managementKey);
    await open(page, "runs");
    await page.getByTestId("run-row").filter({ hasText: "What is a loom?" }).getByTestId("run-link").click();
    // Live: the page polls until the run ends.
    await page.getByTestId("run-status").filter({ hasText: /succeeded|failed/ }).waitFor({ timeout: 120_000 });
    const poll = await (await api(`/api/v1/dashboard/runs/${runId}`)).json() as { run: { status: string; result?: { answer: string } }; steps: unknown[] };
    expect(poll.run.status).toBe("succeeded");
    await expect.poll(() => page.getByTestId("run-step").count()).toBe(poll.steps.length);
    expect(poll.steps.length).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId("run-answer").textContent()).toContain(String(poll.run.result!.answer).trim().slice(0, 20));
    await inspect(page, "run");
    await open(page, "runs");
    await inspect(page, "runs");

    const [session] = (await context.cookies()).filter((cookie) => cookie.name === "loom_session");
    await page.getByTestId("sign-out").click();
    await page.getByTestId("signin-form").waitFor();
    await inspect(page, "sign-in");
    const after = await fetch(`${server.base}/api/v1/dashboard/session`, { headers: { cookie: `loom_session=${session!.value}` } });
    expect(after.status).toBe(401);
    expect((await context.cookies()).filter((cookie) => cookie.name === "loom_session")).toEqual([]);
    await context.close();
  }, 240_000);

  it("sets the cookie's flags and the CSP, refuses cross-site changes, and keeps organizations apart", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, "organization", managementKey);
    const [cookie] = (await context.cookies()).filter((entry) => entry.name === "loom_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/", secure: false });
    const html = await fetch(`${server.base}/dashboard/`);
    expect(html.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
    expect(html.headers.get("content-security-policy")).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(html.headers.get("x-content-type-options")).toBe("nosniff");

    const session = await (await fetch(`${server.base}/api/v1/dashboard/session`, { headers: { cookie: `loom_session=${cookie!.value}` } })).json() as { csrfToken: string };
    const asBrowser = (origin: string, site: string) => fetch(`${server.base}/api/v1/dashboard/keys`, {
      method: "POST",
      headers: { cookie: `loom_session=${cookie!.value}`, "x-csrf-token": session.csrfToken, "content-type": "application/json", origin, "sec-fetch-site": site },
      body: JSON.stringify({ name: "forged" }),
    });
    expect((await asBrowser("http://evil.example", "cross-site")).status).toBe(403);
    expect((await asBrowser(server.base, "same-site")).status).toBe(403);
    const keys = await (await fetch(`${server.base}/api/v1/dashboard/keys`, { headers: { authorization: `Bearer ${managementKey}` } })).json() as { keys: Array<{ name: string }> };
    expect(keys.keys.map((key) => key.name)).not.toContain("forged");

    // Another organization, with a key and a run of its own: 404 to this one's session, and absent from its lists.
    const operator = (path: string, body: unknown) => fetch(`${server.base}${path}`, { method: "POST", headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<Record<string, any>>);
    const other = (await operator("/api/v1/operator/organizations", { name: "Other" })).organization as { id: string };
    const otherKey = (await operator(`/api/v1/operator/organizations/${other.id}/keys`, { kind: "inference", name: "theirs" })).key as { id: string; secret: string };
    const otherRun = await (await fetch(`${server.base}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${otherKey.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ engine: "tim", input: { content: [{ text: "theirs" }] } }),
    })).json() as { runId: string };
    const inPage = (path: string, method = "GET") => page.evaluate(async ([path, method, csrf]) => {
      const response = await fetch(path!, { method, headers: method === "GET" ? {} : { "x-csrf-token": csrf! } });
      return { status: response.status, body: await response.text() };
    }, [path, method, session.csrfToken] as const);
    expect((await inPage(`/api/v1/dashboard/keys/${otherKey.id}`, "DELETE")).status).toBe(404);
    expect((await inPage(`/api/v1/dashboard/runs/${otherRun.runId}`)).status).toBe(404);
    expect((await inPage(`/api/v1/dashboard/runs/${otherRun.runId}/cancel`, "POST")).status).toBe(404);
    expect((await inPage("/api/v1/dashboard/keys?limit=100")).body).not.toContain(otherKey.id);
    expect((await inPage("/api/v1/dashboard/runs?limit=100")).body).not.toContain(otherRun.runId);
    expect((await inPage("/api/v1/dashboard/usage")).body).not.toContain(other.id);
    // The organization's session is no operator's.
    expect((await inPage("/api/v1/operator/organizations")).status).toBe(401);
    await context.close();

    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
