// `loom serve` stopping on SIGTERM, as a user's process runs it: a stream in flight runs to its end while new
// connections are refused and /health says "draining", then the process exits 0 (a clean stop, which a service manager
// must not count as a failure); with a short --drain-seconds, the streams still running are cut, stderr counts them,
// and the process exits 3 without waiting for them.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { LOOM_CLI, startLoomServe } from "../testing/loom-process.js";

const cliReason = existsSync(LOOM_CLI) ? undefined : `${LOOM_CLI} is missing: run \`npm run build\` first`;
const children: ChildProcess[] = [];
const directories: string[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** A chat-completions stream of up to `maxTokens` tokens, read as it arrives: resolves once its first bytes are in. */
async function openStream(base: string, model: string, maxTokens: number): Promise<{ text(): string; ended: Promise<void> }> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, max_tokens: maxTokens, temperature: 0, messages: [{ role: "user", content: "Tell me everything" }] }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
    }
  })().catch(() => undefined); // cut: the text says how far it got
  return { text: () => text, ended };
}

/** GET `path` on `agent` (false: a new connection): its status, headers, body, and whether a kept-alive socket carried it. */
function get(base: string, path: string, agent: Agent | false) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string; reused: boolean }>((resolve, reject) => {
    const req = request(`${base}${path}`, { agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => { body += chunk; });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, reused: req.reusedSocket }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The exit status of `child` once it exits. */
const exitCode = (child: ChildProcess) => new Promise<number | null>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
  else child.once("exit", (code) => resolve(code));
});

describe.skipIf(skipOutsideCi(cliReason))(titled("loom serve on SIGTERM", cliReason), () => {
  it("lets a stream in flight finish, refusing new connections and answering /health 'draining', then exits 0", async () => {
    const model = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const { child, base } = await startLoomServe(["--model", model, "--port", "0", "--no-auth", "--threads", "1", "--context", "2048"], { children });
    const exited = exitCode(child);
    const slug = (await (await fetch(`${base}/v1/models`)).json()).data[0].id as string;
    // A connection opened before the signal, kept alive: /health on it follows the drain.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(base, "/health", agent)).status).toBe(200);
    const stream = await openStream(base, slug, 1000);

    child.kill("SIGTERM");
    let health = await get(base, "/health", agent);
    while (health.status === 200) health = await get(base, "/health", agent);
    expect(health.reused).toBe(true);
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body)).toMatchObject({ status: "draining", inFlight: 1 });
    await expect(get(base, "/health", false)).rejects.toMatchObject({ code: "ECONNREFUSED" });

    await stream.ended;
    expect(stream.text()).toMatch(/"finish_reason":"(length|stop)"[\s\S]*data: \[DONE\]\s*$/);
    expect(await exited).toBe(0);
    agent.destroy();
  }, 60_000);

  it("with --drain-seconds 1, cuts the streams that outlast it, says how many, and exits 3", async () => {
    const model = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const directory = mkdtempSync(join(tmpdir(), "loom-drain-"));
    directories.push(directory);
    const config = join(directory, "loom.json");
    // One sequence at a time: the second stream waits for the first, 4,000 tokens in all, far more than a second's work.
    writeFileSync(config, JSON.stringify({ models: [{ path: model, contextSize: 2048, maxSequences: 1 }] }));
    const loom = await startLoomServe(["--config", config, "--port", "0", "--no-auth", "--threads", "1", "--drain-seconds", "1"], { children });
    const exited = exitCode(loom.child);
    const slug = (await (await fetch(`${loom.base}/v1/models`)).json()).data[0].id as string;
    const first = await openStream(loom.base, slug, 2000);
    const second = fetch(`${loom.base}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: slug, stream: true, max_tokens: 2000, messages: [{ role: "user", content: "And more" }] }),
    }).then((response) => response.text(), () => "");
    // Both in flight (the second queued behind the first) before the signal.
    while (!/loom_http_requests_in_flight 3$/m.test(await (await fetch(`${loom.base}/metrics`)).text())) await new Promise((resolve) => setTimeout(resolve, 20));

    loom.child.kill("SIGTERM");
    expect(await exited).toBe(3);
    await first.ended;
    expect(first.text()).not.toContain("[DONE]");
    expect(await second).not.toContain("[DONE]");
    expect(loom.stderr()).toMatch(/cut 2 request\(s\) still running \(--drain-seconds 1 passed\): their streams end without a last event; exiting 3/);
  }, 60_000);
});
