// The `loom` command line as a user runs it: the compiled CLI in a child process (npm test builds it first).
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { gpuUnavailable } from "../../kernels/webgpu/gpu.js";
import { probeGpu } from "../../engine/backends/webgpu/probe.js";
import { openModelSource } from "../../engine/model/source.js";
import { FIXTURES, REPOSITORY_ROOT, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { tokenizerFromGguf } from "../../engine/tokenizer/gguf.js";

const run = promisify(execFile);
/** Why WebGPU cannot run here, or undefined when it can (lavapipe in CI). */
const gpu = await gpuUnavailable();
const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
/** Without a build the tests skip, saying so, except under CI=true, where they fail. */
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;
const stories = FIXTURES.stories260kGguf;
/** The copy shipped in the repository (models/), never missing. */
const BUNDLED_STORIES = join(REPOSITORY_ROOT, "models", "stories260K", "stories260K.gguf");
const storiesReason = missingFixtureReason(stories);
/** A test that needs stories260K: skipped without it (saying so) outside CI. */
const withStories = (title: string, body: () => Promise<void>) =>
  it.skipIf(skipOutsideCi(storiesReason))(titled(title, storiesReason), async () => {
    failIfMissing(storiesReason);
    await body();
  });

async function loom(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd: REPOSITORY_ROOT });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe.skipIf(skipOutsideCi(cliReason))(titled("loom version and help", cliReason), () => {
  it("prints package.json's version with --version, -v and version, and lists it in help", async () => {
    const { version } = JSON.parse(readFileSync(join(REPOSITORY_ROOT, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-v", "version"]) expect(await loom(flag)).toEqual({ stdout: `loom ${version}\n`, stderr: "", code: 0 });
    const help = await loom("help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}version {4}print this loom's version \(also --version, -v\)$/m);
  });

  it("names an unknown command with the list, and a bad option with its command's usage", async () => {
    const unknown = await loom("frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^loom: unknown command 'frobnicate'\n\nUsage: loom <command>/);
    const badOption = await loom("serve", "--frobnicate");
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toMatch(/Unknown option '--frobnicate'[^]*\nUsage: loom serve /);
  });
});

describe.skipIf(skipOutsideCi(cliReason))(titled("loom generate", cliReason), () => {
  withStories("prints only the continuation, greedily", async () => {
    const result = await loom("generate", "--model", stories, "--prompt", "Once upon a time", "--max-tokens", "20", "--temperature", "0");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(", there was a little girl named Lily. She loved to play outsid\n");
  });

  withStories("reports tokens and speeds with --json, reproducibly with a seed", async () => {
    const args = ["generate", "--model", stories, "--prompt", "Once upon a time", "--max-tokens", "16", "--temperature", "1", "--seed", "42", "--json"];
    const started = performance.now();
    const first = JSON.parse((await loom(...args)).stdout);
    const wallSeconds = (performance.now() - started) / 1000;
    const second = JSON.parse((await loom(...args)).stdout);
    expect(first.tokens).toHaveLength(16);
    expect(first.prompt_tokens).toBe(5);
    // Prefill and decode happen inside the process's run: in tokens per second, no slower than over all of it (a
    // speed in tokens per millisecond falls far below). Rounded to 0.01.
    expect(first.prefill_tokens_per_s).toBeGreaterThanOrEqual(5 / wallSeconds - 0.01);
    expect(first.decode_tokens_per_s).toBeGreaterThanOrEqual(15 / wallSeconds - 0.01);
    expect(typeof first.text).toBe("string");
    expect(second.tokens).toEqual(first.tokens);
    expect(second.text).toBe(first.text);
  });

  withStories("stops at a stop sequence and says so", async () => {
    const result = await loom("generate", "--model", stories, "--prompt", "Once upon a time", "--temperature", "0", "--stop", "Lily", "--json");
    const output = JSON.parse(result.stdout);
    expect(output.text).toBe(", there was a little girl named ");
    expect(output.finish_reason).toBe("stop");
    expect(output.stop_sequence).toBe("Lily");
  });

  withStories("without --max-tokens takes what the context leaves; with one the context cannot hold, says so", async () => {
    const prompt = "Once upon a time there was a little girl ".repeat(4);
    const fits = JSON.parse((await loom("generate", "--model", stories, "--prompt", prompt, "--context", "64", "--temperature", "0", "--json")).stdout);
    expect(fits.prompt_tokens + fits.completion_tokens).toBeLessThanOrEqual(64);
    expect(fits.completion_tokens).toBeGreaterThan(0);
    const tooMany = await loom("generate", "--model", stories, "--prompt", prompt, "--context", "64", "--max-tokens", "100");
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toMatch(/the context holds 64: at most \d+ tokens can be generated, not 100/);
  });

  it("prints nothing on stderr but its own output with the default backend: looking for a GPU is quiet", async () => {
    const result = await loom("generate", "--model", BUNDLED_STORIES, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(", there was a little girl\n");
    // Only a hardware GPU in use may print Dawn's adapter warnings; without one there is nothing at all.
    if ((await probeGpu()).hardware) expect(result.stderr).toMatch(/^(Warning: [^\n]*\n)*$/);
    else expect(result.stderr).toBe("");
  });

  it.skipIf(gpu !== undefined && process.env.CI !== "true")("runs on WebGPU when asked, with the same greedy tokens", async () => {
    const result = await loom("generate", "--model", BUNDLED_STORIES, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--backend", "webgpu");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(", there was a little girl\n");
  });

  it("gives the same tokens with either build of the WebAssembly kernels, and names a bad --simd", async () => {
    for (const simd of ["plain", "relaxed"]) {
      const result = await loom("generate", "--model", BUNDLED_STORIES, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--backend", "wasm", "--simd", simd);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(", there was a little girl\n");
    }
    const bad = await loom("generate", "--model", BUNDLED_STORIES, "--prompt", "x", "--simd", "avx2");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--simd must be auto, relaxed or plain, got 'avx2'/);
  });

  it("names the bad flag or file", async () => {
    expect((await loom("generate", "--prompt", "x")).stderr).toMatch(/--model is required/);
    const missing = await loom("generate", "--model", "/nonexistent/model.gguf", "--prompt", "x");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\/nonexistent\/model\.gguf: no such file or directory/);
    const badNumber = await loom("generate", "--model", "m.gguf", "--prompt", "x", "--temperature", "hot");
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toMatch(/--temperature must be a number, got 'hot'/);
    expect((await loom("generate", "--model", "m.gguf", "--prompt", "x", "--frobnicate")).stderr).toMatch(/Unknown option '--frobnicate'/);
  });

  it("renders the model's chat template with --chat, --system and template kwargs", async () => {
    const model = await ensureTestModel("tiny-qwen3", "gguf", "f32");
    const kwargs = '{"enable_thinking":false}';
    const plain = JSON.parse((await loom("generate", "--model", model, "--prompt", "hi", "--max-tokens", "1", "--json")).stdout);
    const chat = JSON.parse((await loom("generate", "--model", model, "--prompt", "hi", "--chat", "--system", "Be brief.", "--chat-template-kwargs", kwargs, "--max-tokens", "1", "--json")).stdout);
    // "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    expect(plain.prompt_tokens).toBe(1);
    expect(chat.prompt_tokens).toBe(21);
    const bad = await loom("generate", "--model", model, "--prompt", "hi", "--chat", "--chat-template-kwargs", "[1]");
    expect(bad.stderr).toMatch(/--chat-template-kwargs must be a JSON object/);
  });

  it("gives --chat the default ChatML template on a model without one, and says so", async () => {
    const result = await loom("generate", "--model", BUNDLED_STORIES, "--prompt", "hi", "--chat", "--max-tokens", "1", "--json", "--backend", "wasm");
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`loom: ${BUNDLED_STORIES} has no chat template; --chat uses the default ChatML template\n`);
    const source = openModelSource(BUNDLED_STORIES);
    const expected = tokenizerFromGguf(source.ggufMetadata!, BUNDLED_STORIES).encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", { addSpecial: true, parseSpecial: true });
    expect(JSON.parse(result.stdout).prompt_tokens).toBe(expected.length);
  });
});
