// The dashboard end to end: headless Chromium (Debian's, through playwright-core) against a real `loom
// serve` on PGlite, as a user runs both. The operator signs in with a token `loom admin` printed and creates an
// organization and its management key; the organization signs in with that key, creates an inference key, calls chat
// completions with it through the `openai` SDK, sees the usage, revokes the key (the SDK then gets 401), reads a run's
// steps and answer, and signs out (the session is then dead on the server). Besides: names are shown as text, a
// cross-site change is refused, cookie flags and the CSP are as documented, one organization cannot read another's
// keys or runs, axe-core finds nothing serious on any page, and every page is photographed at desktop and phone
// widths (test-artifacts/dashboard/), where at 390 px nothing lies outside the screen (table cells, buttons, fields).
import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
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
    page.on("console", (message) => { if (message.type() === "error" && !/status of 40[0134]/.test(message.text())) pageErrors.push(message.text()); });
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

  /**
   * axe-core's serious and critical findings on the page now, and a screenshot at both widths; at the phone's, every
   * table cell, button, link and field on show lies inside the screen's width (none needs sideways scrolling).
   */
  async function inspect(page: Page, name: string): Promise<void> {
    for (const viewport of ["desktop", "phone"] as const) {
      await page.setViewportSize(VIEWPORTS[viewport]);
      await page.locator('main[data-ready="true"]').waitFor();
      expect(await seriousAxeViolations(page), `axe on ${name} (${viewport})`).toEqual([]);
      if (viewport === "phone") expect(await offScreen(page), `off the ${VIEWPORTS.phone.width} px screen on ${name}`).toEqual([]);
      await saveScreenshot(page, "dashboard", `${name}-${viewport}`);
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  }

  /** The shown cells, buttons, links and fields whose box is not within the viewport's width, and the page's overflow. */
  function offScreen(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const doc = (globalThis as unknown as { document: any; innerWidth: number }).document;
      const width = (globalThis as unknown as { innerWidth: number }).innerWidth;
      const problems: string[] = [];
      if (doc.documentElement.scrollWidth > width) problems.push(`the page is ${doc.documentElement.scrollWidth} px wide`);
      for (const element of doc.querySelectorAll("td, th, button, a, input, select, textarea, summary")) {
        // Shown ones only: not in a closed <details>, the hidden table heads of phones, code blocks (they scroll) or visually-hidden text.
        if (!element.checkVisibility() || element.closest("thead, pre, .visually-hidden")) continue;
        const box = element.getBoundingClientRect();
        if (box.width === 0 || box.height === 0) continue;
        if (box.left < -0.5 || box.right > width + 0.5) problems.push(`${element.tagName.toLowerCase()}${element.dataset.testid ? `[${element.dataset.testid}]` : ""} "${String(element.textContent).trim().slice(0, 40)}" at ${Math.round(box.left)}..${Math.round(box.right)}`);
      }
      return problems;
    });
  }

  /** At phone width: each cell of `rowTestId`'s rows, scrolled to, is a number inside the screen. */
  async function expectNumbersOnPhone(page: Page, rowTestId: string): Promise<void> {
    await page.setViewportSize(VIEWPORTS.phone);
    const cells = page.getByTestId(rowTestId).locator("td.num");
    expect(await cells.count(), rowTestId).toBeGreaterThan(0);
    for (let i = 0; i < (await cells.count()); i++) {
      const cell = cells.nth(i);
      await cell.scrollIntoViewIfNeeded();
      const box = (await cell.boundingBox())!;
      expect(box.x, `${rowTestId} cell ${i}`).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `${rowTestId} cell ${i}`).toBeLessThanOrEqual(VIEWPORTS.phone.width);
      expect(await cell.textContent(), `${rowTestId} cell ${i}`).toMatch(/^[$\d.,\u00a0\u202f%—-]+$/);
      // The value itself (the cell's text after its phone label) is on screen, not clipped away.
      expect(await cell.evaluate((element: any) => element.getBoundingClientRect().right <= (globalThis as any).innerWidth), `${rowTestId} cell ${i}`).toBe(true);
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
    // Search: part of the name in any case finds it, other text finds nothing, "Show all" lists every one again.
    await page.getByTestId("organizations-search").fill("acme <B>");
    await page.getByTestId("organizations-search-submit").click();
    await expect.poll(() => page.getByTestId("organization-row").count()).toBe(1);
    expect(await page.getByTestId("organization-row").getAttribute("data-organization-id")).toBe(organizationId);
    await page.getByTestId("organizations-search").fill("no such organization");
    await page.getByTestId("organizations-search-submit").click();
    await page.getByTestId("organizations-empty").waitFor();
    await page.getByTestId("organizations-search-clear").click();
    await page.getByTestId("organization-row").first().waitFor();
    await page.getByTestId("organization-row").filter({ hasText: "Acme <b>Labs</b>" }).getByTestId("organization-link").click();
    await page.locator('main[data-ready="true"][data-page="operator-organization"]').waitFor();
    // An error names the field as the form labels it, not as the API does.
    await page.getByTestId("org-requestsPerMinute").fill("0");
    await page.getByTestId("edit-organization-submit").click();
    const fieldError = await page.getByTestId("field-error").textContent();
    expect(fieldError).toContain("Requests per minute");
    expect(fieldError).not.toContain("requestsPerMinute");
    await page.getByTestId("edit-organization-reset").click();
    // Closed beta (GET /api/v1/usage needs it, and the usage page is compared with it below), and a price for every
    // model (the usage page then shows dollars).
    await page.getByTestId("org-closedBeta").check();
    await page.getByTestId("add-price").click();
    await page.locator("#price-0-model").fill("*");
    await page.locator("#price-0-input").fill("1000");
    await page.locator("#price-0-output").fill("2000");
    await page.getByTestId("edit-organization-submit").click();
    await page.getByTestId("edit-saved").waitFor();
    await page.getByTestId("create-key-kind").selectOption("management");
    await page.getByTestId("create-key-name").fill("dashboard");
    await page.getByTestId("create-key-submit").click();
    managementKey = (await page.getByTestId("new-key-secret").textContent())!.trim();
    expect(managementKey).toMatch(/^sk-mgmt-/);
    await inspect(page, "operator-key-created");
    // Escape asks before the secret is lost; the dialog stays open (a second Escape too) until the answer.
    for (let i = 0; i < 2; i++) {
      await page.keyboard.press("Escape");
      await page.getByTestId("secret-close-question").waitFor();
      expect(await page.getByTestId("secret-dialog").evaluate((dialog: any) => dialog.open)).toBe(true);
      expect((await page.getByTestId("new-key-secret").textContent())!.trim()).toBe(managementKey);
    }
    await inspect(page, "operator-key-close-question");
    await page.getByTestId("secret-keep-open").click();
    expect(await page.getByTestId("secret-close-question").count()).toBe(0);
    await page.getByTestId("secret-done").click();
    expect(await page.getByTestId("secret-dialog").count()).toBe(0);
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
    // A refused credential is called what it is: an unknown management key is not "use a management key".
    await page.goto(`${server.base}/dashboard/`);
    await page.getByTestId("signin-kind-organization").check();
    await page.getByTestId("signin-secret").fill(`sk-mgmt-${"x".repeat(43)}`);
    await page.getByTestId("signin-submit").click();
    expect(await page.getByTestId("signin-error").textContent()).toBe("That management key is unknown or revoked.");
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

    // Per key, in dollars at the organization's prices, with the numbers on screen at phone width.
    const usage = await (await fetch(`${server.base}/api/v1/dashboard/usage/keys?days=7`, { headers: { authorization: `Bearer ${managementKey}` } })).json() as { keys: Array<{ keyId: string; name: string; inputTokens: number; outputTokens: number; spendDollars: number }> };
    expect(usage.keys.map((key) => [key.name, key.inputTokens + key.outputTokens])).toEqual([[hostileName, used]]);
    expect(usage.keys[0]!.spendDollars).toBeGreaterThan(0);
    const keyRow = page.getByTestId("usage-key-row");
    await keyRow.first().waitFor();
    expect(await keyRow.count()).toBe(1);
    expect(await keyRow.locator("th").textContent()).toBe(hostileName);
    expect((await keyRow.textContent())!.replace(/[,\s\u00a0\u202f]/g, "")).toContain(String(used));
    expect(await page.getByTestId("usage-cost").textContent()).toMatch(/^\$\d/);
    for (const rowTestId of ["usage-today-row", "usage-total-row", "usage-key-row"]) await expectNumbersOnPhone(page, rowTestId);
    await page.locator("details.details summary").click();
    await expectNumbersOnPhone(page, "usage-day-row");
    // The span: 7 days (the API's days=7 answer), and back.
    await page.getByTestId("usage-range").selectOption("7");
    await expect.poll(() => page.locator("#history-heading").textContent()).toBe("Last 7 days");
    await inspect(page, "usage-7-days");
    // CSV: the numbers of the page, per day and model and per key.
    const [byDay] = await Promise.all([page.waitForEvent("download"), page.getByTestId("usage-csv-days").click()]);
    const dayLines = readFileSync((await byDay.path())!, "utf8").trimEnd().split("\r\n");
    expect(dayLines[0]).toBe("day,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_dollars");
    expect(dayLines.slice(1).map((line) => line.split(",").slice(0, 2))).toEqual([[new Date().toISOString().slice(0, 10), model!.id]]);
    const [byKey] = await Promise.all([page.waitForEvent("download"), page.getByTestId("usage-csv-keys").click()]);
    const keyLines = readFileSync((await byKey.path())!, "utf8").trimEnd().split("\r\n");
    expect(keyLines[0]).toBe("key_id,key_name,key_prefix,requests,input_tokens,cached_input_tokens,output_tokens,cost_dollars");
    const keyFields = keyLines[1]!.split(",");
    expect(keyFields[0]).toBe(usage.keys[0]!.keyId);
    // A name starting with < is no formula: written as it is.
    expect(keyFields[1]).toBe(hostileName);
    expect(Number(keyFields[4]) + Number(keyFields[6])).toBe(used);

    await open(page, "keys");
    // At phone width the Revoke button is on screen.
    await page.setViewportSize(VIEWPORTS.phone);
    const revoke = row.getByTestId("revoke-key");
    await revoke.scrollIntoViewIfNeeded();
    const revokeBox = (await revoke.boundingBox())!;
    expect(revokeBox.x).toBeGreaterThanOrEqual(0);
    expect(revokeBox.x + revokeBox.width).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await page.setViewportSize(VIEWPORTS.desktop);
    await row.getByTestId("revoke-key").click();
    await page.getByTestId("confirm").click();
    await expect.poll(() => row.getByTestId("key-status").textContent()).toBe("revoked");
    await expect(client.chat.completions.create({ model: model!.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 8 })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await inspect(page, "keys");

    for (const route of ["plan", "quickstart"]) {
      await open(page, route);
      await inspect(page, route);
    }
    // The quick start's Anthropic snippets use a name /v1/messages serves, and the list says which API takes which.
    const messagesName = (await page.getByTestId("quickstart-model").and(page.locator('[data-format="anthropic"]')).first().textContent())!.replace("default", "").trim();
    const chatName = (await page.getByTestId("quickstart-model").and(page.locator('[data-format="openai"]')).first().textContent())!.replace("default", "").trim();
    expect(messagesName).not.toBe(chatName);
    expect(await page.getByTestId("quickstart-anthropic").textContent()).toContain(`model: ${JSON.stringify(messagesName)}`);
    expect(await page.getByTestId("quickstart-openai").textContent()).toContain(`model: ${JSON.stringify(chatName)}`);
    const curl = (await page.getByTestId("quickstart-curl").textContent())!;
    const messagesBody = /\/v1\/messages[\s\S]*-d '(.+)'/.exec(curl)![1]!;
    expect(JSON.parse(messagesBody).model).toBe(messagesName);
    const live = (await (await fetch(`${server.base}/api/v1/dashboard/keys`, { method: "POST", headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" }, body: JSON.stringify({ name: "messages" }) })).json() as { key: { secret: string } }).key.secret;
    const messages = await fetch(`${server.base}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": live, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ ...JSON.parse(messagesBody), max_tokens: 4 }),
    });
    expect(messages.status).toBe(200);
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
    // A run given as instructions alone: the list shows them as its question.
    const instructionsOnly = await fetch(`${server.base}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ engine: "tim", input: { instructions: "Name three kinds of loom." } }),
    });
    expect(instructionsOnly.status).toBe(202);

    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, "organization", managementKey);
    await open(page, "runs");
    expect(await page.getByTestId("run-row").filter({ hasText: "Name three kinds of loom." }).count()).toBe(1);
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
    // HEAD answers as GET, without the body.
    const head = await fetch(`${server.base}/dashboard/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(html.headers.get("content-length"));
    expect(head.headers.get("etag")).toBe(html.headers.get("etag"));
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
