// `loom serve` as a user runs it: the compiled CLI in a child process with a config file serving two models.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { ownName } from "../models.js";
import { startLoomServe, stopChild } from "../testing/loom-process.js";

const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
/** Without a build the tests skip, saying so, except under CI=true, where they fail. */
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;
const children: ChildProcess[] = [];
const directories: string[] = [];
afterAll(() => {
  for (const child of children) child.kill();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** A fresh directory for a config file, removed after the tests. */
function configDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), "loom-serve-"));
  directories.push(directory);
  return directory;
}

/** Starts `loom serve` with `env` over this process's (server/testing/loom-process.ts). */
const serve = (args: string[], env: NodeJS.ProcessEnv = {}) => startLoomServe(args, { env: { ...process.env, ...env }, children });

describe.skipIf(skipOutsideCi(cliReason))(titled("loom serve", cliReason), () => {
  it("serves every model of a config file under its slugs and own names, behind API keys", async () => {
    const dir = configDirectory();
    const config = join(dir, "loom.json");
    const [llama, qwen] = [await ensureTestModel("tiny-llama", "gguf", "q8_0"), await ensureTestModel("tiny-qwen3", "gguf", "q8_0")];
    writeFileSync(config, JSON.stringify({
      apiKeys: ["sk-one"],
      models: [
        { path: llama, slugs: { openai: ["service/tim-llama-27b"], anthropic: ["service/llama-marathon"] }, contextSize: 256, kvCache: { bytes: 8388608 } },
        { path: qwen, slugs: { openai: ["service/tim-qwen-27b"], anthropic: ["service/qwen-marathon"] }, contextSize: 256, kvCache: { bytes: 8388608 } },
      ],
    }));
    const { port, child } = await serve(["--config", config, "--port", "0", "--threads", "1"], { LOOM_API_KEYS: "sk-two" });
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/v1/models`)).status).toBe(401);
    const ids = (await (await fetch(`${base}/v1/models`, { headers: { authorization: "Bearer sk-one" } })).json()).data.map((m: { id: string }) => m.id);
    // The slugs, then the aliases: each model's own name (its file's), and `default` for the first.
    expect(ids).toEqual(["service/tim-llama-27b", "service/llama-marathon", "service/tim-qwen-27b", "service/qwen-marathon", ownName({ path: llama }), "default", ownName({ path: qwen })]);
    const served = [["service/tim-llama-27b", "service/tim-llama-27b", "sk-one"], ["service/tim-qwen-27b", "service/tim-qwen-27b", "sk-two"], [ownName({ path: qwen })!, "service/tim-qwen-27b", "sk-one"], ["default", "service/tim-llama-27b", "sk-two"]];
    for (const [model, slug, key] of served) {
      const response = await fetch(`${base}/v1/chat/completions`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
      });
      expect(response.status).toBe(200);
      expect((await response.json()).model).toBe(slug);
    }
    const anonymous = await fetch(`${base}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    child.kill();
  });

  it("serves --model with the config's settings when it is one of the config's models, and refuses any other", async () => {
    const dir = configDirectory();
    const config = join(dir, "loom.json");
    const llama = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const qwen = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
    writeFileSync(config, JSON.stringify({ models: [{ path: llama, slugs: { openai: ["service/tim-configured-27b"], anthropic: ["service/configured-marathon"] }, contextSize: 256, kvCache: { bytes: 8388608 } }] }));
    const refused = await serve(["--config", config, "--model", qwen, "--port", "0", "--no-auth"]).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2 });
    expect((refused as { stderr: string }).stderr).toMatch(/--model .*tiny-qwen3.* is not one of the config's models/);
    const { port, child } = await serve(["--config", config, "--model", llama, "--port", "0", "--no-auth", "--threads", "1"]);
    const ids = (await (await fetch(`http://127.0.0.1:${port}/v1/models`)).json()).data.map((m: { id: string }) => m.id);
    expect(ids).toEqual(["service/tim-configured-27b", "service/configured-marathon", ownName({ path: llama }), "default"]);
    child.kill();
  });

  it("refuses to start on an invalid config, naming the field", async () => {
    const dir = configDirectory();
    const config = join(dir, "loom.json");
    writeFileSync(config, JSON.stringify({ maxQueue: -1 }));
    const refused = await serve(["--config", config, "--port", "0", "--no-auth"]).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2 });
    expect((refused as { stderr: string }).stderr).toMatch(/maxQueue must be an integer >= 1, got -1/);
  });

  it("refuses to start without API keys unless --no-auth, and says so", async () => {
    const model = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const failure = await serve(["--model", model, "--port", "0"], { LOOM_API_KEYS: "" }).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/--no-auth/);
  });

  it("refuses --no-auth on an address other than loopback unless --allow-no-auth-on-network says so, and then warns", async () => {
    const model = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const refused = await serve(["--model", model, "--port", "0", "--no-auth", "--host", "0.0.0.0"]).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2 });
    expect((refused as { stderr: string }).stderr).toMatch(/--no-auth on --host 0\.0\.0\.0, which is not a loopback address.*--allow-no-auth-on-network/);
    const meaningless = await serve(["--model", model, "--port", "0", "--allow-no-auth-on-network"], { LOOM_API_KEYS: "k" }).catch((error: { code: number; stderr: string }) => error);
    expect(meaningless).toMatchObject({ code: 2 });
    expect((meaningless as { stderr: string }).stderr).toMatch(/--allow-no-auth-on-network goes with --no-auth/);

    const { base, stderr, child } = await serve(["--model", model, "--port", "0", "--no-auth", "--host", "0.0.0.0", "--allow-no-auth-on-network", "--threads", "1"]);
    expect(stderr()).toContain("loom: WARNING: no authentication on 0.0.0.0 (--allow-no-auth-on-network)");
    expect((await fetch(`${base}/health`)).status).toBe(200);
    await stopChild(child);
  });

  it("keeps stored responses without the platform in the data dir's embedded database, across restarts", async () => {
    // What is stored does not depend on the model: tiny-llama loads in less time than tiny-qwen3 (a third of its vocabulary).
    const model = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const dataDir = configDirectory();
    const args = ["--model", model, "--port", "0", "--no-auth", "--threads", "1", "--context", "512"];
    const post = (base: string, body: object) => fetch(`${base}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const first = await serve(args, { LOOM_DATA_DIR: dataDir });
    const base = `http://127.0.0.1:${first.port}`;
    const slug = (await (await fetch(`${base}/v1/models`)).json()).data[0].id as string;
    // Nothing is opened until a response is stored: the data dir is still empty.
    expect(existsSync(join(dataDir, "pglite"))).toBe(false);
    const created = await post(base, { model: slug, input: "hi", max_output_tokens: 3 });
    expect(created.status).toBe(200);
    const { id } = await created.json();
    expect(existsSync(join(dataDir, "pglite"))).toBe(true);

    // A second server on the same data dir cannot take it: storing is refused with a message saying what to do, and
    // a request that stores nothing is served.
    const second = await serve(args, { LOOM_DATA_DIR: dataDir });
    const secondBase = `http://127.0.0.1:${second.port}`;
    const refused = await post(secondBase, { model: slug, input: "hi", max_output_tokens: 3 });
    expect(refused.status).toBe(502);
    expect((await refused.json()).error.message).toMatch(/LOOM_DATA_DIR.*store: false/);
    expect((await post(secondBase, { model: slug, input: "hi", max_output_tokens: 3, store: false })).status).toBe(200);
    await stopChild(second.child);

    await stopChild(first.child);
    const restarted = await serve(args, { LOOM_DATA_DIR: dataDir });
    const restartedBase = `http://127.0.0.1:${restarted.port}`;
    const retrieved = await fetch(`${restartedBase}/v1/responses/${id}`);
    expect(retrieved.status).toBe(200);
    expect((await retrieved.json()).id).toBe(id);
    const continued = await post(restartedBase, { model: slug, input: "and then?", previous_response_id: id, max_output_tokens: 3 });
    expect(continued.status).toBe(200);
    await stopChild(restarted.child);
  });
});
