// `loom serve --model hf:<org>/<repo>:<quant>` as a user runs it (the compiled CLI), against a stand-in Hub on loopback:
// a split model (3 parts, gated) is downloaded with HF_TOKEN and served as one model; a later start whose config names
// the same model serves it from the cache while the Hub is down, and says so. `loom generate` takes the name too.
import { type ChildProcess, execFile } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { splitGguf } from "../../scripts/split-gguf.js";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { LOOM_CLI, startLoomServe } from "../testing/loom-process.js";
import { type StandInHub, startStandInHub } from "../testing/stand-in-hub.js";

const children: ChildProcess[] = [];
const folders: string[] = [];
const hubs: StandInHub[] = [];
afterAll(async () => {
  for (const child of children) child.kill();
  await Promise.all(hubs.map((hub) => hub.close()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "loom-hub-serve-"));
  folders.push(path);
  return path;
}

describe.skipIf((!existsSync(LOOM_CLI) && process.env.CI !== "true") || testModelSkipReason("tiny-llama") !== undefined)("loom serve --model hf:...", () => {
  it("downloads a gated split model with HF_TOKEN and serves it as one; a later start serves the cache while the Hub is down", async () => {
    const work = folder();
    const parts = splitGguf(await ensureTestModel("tiny-llama", "gguf", "q8_0"), join(work, "tiny-llama-Q8_0"), 3);
    const files = Object.fromEntries(parts.map((path) => [path.slice(work.length + 1), readFileSync(path)]));
    const hub = await startStandInHub({ "loom-test/tiny-llama-GGUF": { files, gatedToken: "hf_test_token" } });
    hubs.push(hub);
    const cache = folder();
    const env: NodeJS.ProcessEnv = { ...process.env, LOOM_CACHE_DIR: cache, HF_ENDPOINT: hub.endpoint, HF_TOKEN: "hf_test_token" };
    delete env.LOOM_MODEL;
    const directory = join(cache, "models", "loom-test", "tiny-llama-GGUF");
    const first = join(directory, "tiny-llama-Q8_0-00001-of-00003.gguf");

    const online = await startLoomServe(["--no-auth", "--port", "0", "--threads", "1", "--model", "hf:loom-test/tiny-llama-GGUF:Q8_0"], { env, children });
    expect(online.stderr()).toContain(`loom: downloading hf:loom-test/tiny-llama-GGUF:Q8_0 (${Object.keys(files).join(", ")}, `);
    expect(online.stderr()).toContain(`loom: serving ${first} (`);
    expect(hub.requests.filter((request) => request.url.includes("/resolve/")).map((request) => request.authorization)).toEqual(["Bearer hf_test_token", "Bearer hf_test_token", "Bearer hf_test_token"]);
    expect(hub.downloads()).toHaveLength(3);
    const openai = new OpenAI({ baseURL: `${online.base}/v1`, apiKey: "unused", maxRetries: 0 });
    expect((await openai.models.list()).data.map((model) => model.id)).toContain("tiny-llama-q8_0");
    const completion = await openai.chat.completions.create({ model: "tiny-llama-q8_0", max_tokens: 4, temperature: 0, messages: [{ role: "user", content: "Hi" }] });
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    online.child.kill();
    await online.exited;

    await hub.close();
    const config = join(work, "loom.json");
    writeFileSync(config, JSON.stringify({ models: [{ path: "hf:loom-test/tiny-llama-GGUF:q8_0", slugs: { openai: ["tiny"], anthropic: ["tiny"] } }] }));
    const offline = await startLoomServe(["--no-auth", "--port", "0", "--threads", "1", "--config", config], { env, children });
    expect(offline.stderr()).toContain("loom: could not list loom-test/tiny-llama-GGUF on the Hub (could not reach the Hub at");
    expect(offline.stderr()).toContain(`serving the cached ${Object.keys(files).join(", ")} from ${directory}`);
    const again = new OpenAI({ baseURL: `${offline.base}/v1`, apiKey: "unused", maxRetries: 0 });
    const cached = await again.chat.completions.create({ model: "tiny", max_tokens: 4, temperature: 0, messages: [{ role: "user", content: "Hi" }] });
    expect(cached.choices[0].message.content).toBe(completion.choices[0].message.content);
    offline.child.kill();
  }, 120_000);

  it("loom generate --model hf:... downloads the model and continues the prompt with it", async () => {
    const work = folder();
    const whole = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const hub = await startStandInHub({ "loom-test/tiny-GGUF": { files: { "tiny-llama-Q8_0.gguf": readFileSync(whole) } } });
    hubs.push(hub);
    const env: NodeJS.ProcessEnv = { ...process.env, LOOM_CACHE_DIR: work, HF_ENDPOINT: hub.endpoint };
    const args = ["--prompt", "Once upon a time", "--max-tokens", "5", "--temperature", "0", "--threads", "1", "--json"];
    const viaHub = await promisify(execFile)(process.execPath, [LOOM_CLI, "generate", "--model", "hf:loom-test/tiny-GGUF:Q8_0", ...args], { env });
    const local = await promisify(execFile)(process.execPath, [LOOM_CLI, "generate", "--model", whole, ...args], { env });
    expect(viaHub.stderr).toContain(`loom: downloading hf:loom-test/tiny-GGUF:Q8_0 (tiny-llama-Q8_0.gguf, `);
    expect(JSON.parse(viaHub.stdout).tokens).toHaveLength(5);
    expect(JSON.parse(viaHub.stdout).tokens).toEqual(JSON.parse(local.stdout).tokens);
  }, 120_000);
});
