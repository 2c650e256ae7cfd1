// The dashboard as `loom serve` runs it (the compiled CLI in a child process; run `npm run build` first): with the
// platform, the banner names the dashboard's URL, an operator token minted by `loom admin` through the running server
// signs in, and /dashboard/ serves the built front end or says to build it; without the platform, /dashboard/ says
// that it needs the platform.
import { execFile } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { LOOM_CLI, type LoomProcess, startLoomServe, stopChild } from "../testing/loom-process.js";
import { migratedDataDir } from "../platform/testing/test-databases.js";
import { DEFAULT_DASHBOARD_FOLDER } from "./static-files.js";

const cliReason = existsSync(LOOM_CLI) ? undefined : `${LOOM_CLI} is missing: run \`npm run build\` first`;
const run = promisify(execFile);
const started: LoomProcess[] = [];

afterAll(async () => {
  await Promise.all(started.map((loom) => stopChild(loom.child)));
});

/** `loom serve` on the tiny model, once its banner is out. */
async function serve(args: string[]): Promise<LoomProcess> {
  const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
  const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_API_KEYS, ...env } = process.env;
  const loom = await startLoomServe(["--model", model, "--port", "0", "--threads", "1", "--context", "256", ...args], { env });
  started.push(loom);
  for (let waited = 0; !/POST \/v1\/messages +model /.test(loom.stderr()); waited += 10) {
    if (waited > 10_000) throw new Error(`loom serve printed no banner: ${loom.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return loom;
}

/** A response's JSON body, for assertions. */
async function json(response: Response): Promise<any> {
  return response.json();
}

describe.skipIf(skipOutsideCi(cliReason))(titled("the dashboard on loom serve", cliReason), () => {
  it("with the platform: names its URL, signs in with an operator token minted through the running server, serves /dashboard/", async () => {
    failIfMissing(cliReason);
    const dataDir = await migratedDataDir();
    try {
      const loom = await serve(["--data-dir", dataDir]);
      expect(loom.stderr()).toContain(`GET  /dashboard/  the web dashboard: http://127.0.0.1:${loom.port}/dashboard/`);
      // The data dir is the server's: loom admin reaches it through its admin endpoint.
      const { stdout } = await run(process.execPath, [LOOM_CLI, "admin", "operator-token", "create", "--name", "test", "--data-dir", dataDir, "--json"], { cwd: REPOSITORY_ROOT });
      const { token } = JSON.parse(stdout) as { token: string };
      const signIn = await fetch(`${loom.base}/api/v1/dashboard/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ operatorToken: token }) });
      expect(signIn.status).toBe(200);
      expect((await json(signIn)).session.kind).toBe("operator");
      const page = await fetch(`${loom.base}/dashboard/`);
      if (existsSync(join(DEFAULT_DASHBOARD_FOLDER, "index.html"))) {
        expect(page.status).toBe(200);
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      } else {
        expect(page.status).toBe(503);
        expect(await page.text()).toContain("run `npm run build`");
        expect(loom.stderr()).toContain("answers 503");
      }
    } finally {
      for (const loom of started.splice(0)) await stopChild(loom.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it("without the platform: /dashboard/ says it needs the platform", async () => {
    failIfMissing(cliReason);
    const loom = await serve(["--no-auth"]);
    expect(loom.stderr()).not.toContain("/dashboard/");
    const page = await fetch(`${loom.base}/dashboard/`);
    expect(page.status).toBe(404);
    expect(await page.text()).toMatch(/the web dashboard needs the platform: start loom serve with --data-dir or --database-url/);
    const api = await fetch(`${loom.base}/api/v1/dashboard/session`);
    expect(api.status).toBe(404);
  }, 120_000);
});
