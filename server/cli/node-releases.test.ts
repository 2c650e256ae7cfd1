// loom on Node.js 22 and 24, as a user runs it: the compiled CLI under official Node.js binaries fetched from the npm
// registry (scripts/node-binaries.ts). Node 22: `loom serve` answers a chat request. Node 24: `loom generate` works,
// and `loom serve` either serves (glibc 2.38 or newer) or stops at once saying what to change (older glibc).
// Without a reachable registry the tests skip with the reason, except under CI=true where they fail.
import { type ChildProcess, execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_CI, REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { NODE_RELEASES, NodeBinaryUnavailableError, type NodeRelease, ensureNodeBinary } from "../../scripts/node-binaries.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { chooseUwsBuild, currentRuntime } from "../http/uws-builds.js";
import { startLoomServe } from "../testing/loom-process.js";

const run = promisify(execFile);
const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
/** The copy of stories260K shipped in the repository (models/), never missing. */
const stories = join(REPOSITORY_ROOT, "models", "stories260K", "stories260K.gguf");
const children: ChildProcess[] = [];
afterAll(() => { for (const child of children) child.kill(); });

/** The binary, or the reason it is missing (outside CI only; under CI a missing binary fails). */
async function nodeBinary(release: NodeRelease): Promise<{ path?: string; skip?: string }> {
  try {
    return { path: await ensureNodeBinary(release) };
  } catch (error) {
    if (error instanceof NodeBinaryUnavailableError && !IN_CI) return { skip: error.message };
    throw error;
  }
}

/** Starts `loom serve` under `node` (server/testing/loom-process.ts). */
const serve = (node: string, args: string[]) => startLoomServe(args, { node, children });

/** Serves a tiny random-weight Llama under `node` and sends one chat completion; returns the server's banner. */
async function chatOnce(node: string): Promise<string> {
  const model = await ensureTestModel("tiny-llama", "gguf", "q8_0");
  const { port, stderr } = await serve(node, ["--model", model, "--no-auth", "--port", "0", "--context", "256", "--threads", "1"]);
  const base = `http://127.0.0.1:${port}`;
  const ids: string[] = (await (await fetch(`${base}/v1/models`)).json()).data.map((entry: { id: string }) => entry.id);
  const slug = ids.find((id) => id.startsWith("service/tim-"))!;
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: slug, messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0 }),
  });
  expect(response.status).toBe(200);
  const completion = await response.json();
  expect(completion.model).toBe(slug);
  expect(typeof completion.choices[0].message.content).toBe("string");
  expect(completion.usage.completion_tokens).toBeGreaterThan(0);
  return stderr();
}

describe.skipIf(!existsSync(CLI) && !IN_CI)("loom on other Node.js releases", () => {
  const binaries: Record<number, { path?: string; skip?: string }> = {};
  beforeAll(async () => {
    binaries[22] = await nodeBinary(NODE_RELEASES[22]);
    binaries[24] = await nodeBinary(NODE_RELEASES[24]);
  }, 900_000);

  /** The binary for a release, skipping the test with the reason where there is none. */
  function binaryFor(release: 22 | 24, skip: (note: string) => never): string {
    const { path, skip: reason } = binaries[release]!;
    if (!path) skip(reason!);
    return path!;
  }

  it("runs the pinned releases", async ({ skip }) => {
    for (const release of [22, 24] as const) {
      const { stdout } = await run(binaryFor(release, skip), ["--version"]);
      expect(stdout.trim()).toBe(`v${NODE_RELEASES[release].version}`);
    }
  });

  it("Node 22: loom serve answers a chat request on uws-pack's binary for its ABI", async ({ skip }) => {
    const banner = await chatOnce(binaryFor(22, skip));
    expect(banner).toContain("(no auth; uWebSockets.js v20.49 (uws-pack 20.0.8))");
  });

  it("Node 24: loom serve serves where its build loads (glibc 2.38+), else stops before loading a model, saying what to change", async ({ skip }) => {
    const node = binaryFor(24, skip);
    const runtime = { ...currentRuntime(), nodeVersion: `v${NODE_RELEASES[24].version}`, abi: 137 };
    const choice = chooseUwsBuild(runtime);
    if ("build" in choice) {
      expect(await chatOnce(node)).toContain(`uWebSockets.js ${choice.build.release} (${choice.build.package})`);
      return;
    }
    // A model path that does not exist: the refusal must come first, before the model is looked for.
    const refused = await serve(node, ["--model", "/nonexistent/model.gguf", "--no-auth", "--port", "0"]).then(
      () => { throw new Error("loom serve started on Node 24 where no uWebSockets.js build loads"); },
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`loom: ${choice.refusal}\n`);
    expect(refused.stderr).toContain(`Node.js v${NODE_RELEASES[24].version} (ABI 137) loads on linux-x64 with glibc ${runtime.glibc}`);
    expect(refused.stderr).not.toContain("nonexistent");
  });

  it("Node 24: loom generate continues a prompt as on Node 20", async ({ skip }) => {
    const { stdout } = await run(binaryFor(24, skip), [CLI, "generate", "--model", stories, "--prompt", "Once upon a time", "--max-tokens", "20", "--temperature", "0"], { cwd: REPOSITORY_ROOT });
    expect(stdout).toBe(", there was a little girl named Lily. She loved to play outsid\n");
  });
});
