// The first run as a user meets it: `loom serve --no-auth` (the compiled CLI, as `npm start` runs it) with an empty
// cache and no model named. Offline (the Hub unreachable) it serves the bundled stories260K and both chat endpoints
// answer through the official SDKs; online (a loopback stand-in for the Hub) it downloads the default model once.
import Anthropic from "@anthropic-ai/sdk";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { openModelSource } from "../../engine/model/source.js";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { tokenizerFromGguf } from "../../engine/tokenizer/gguf.js";
import { ensureTestModel, testModelSkipReason } from "../../scripts/test-models.js";
import { BUNDLED_MODEL, DEFAULT_MODEL } from "./default-model.js";
import { startFirstRun } from "../testing/loom-process.js";
import { closedLoopbackPort } from "../testing/closed-port.js";

const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
const children: ChildProcess[] = [];
const servers: Server[] = [];
const folders: string[] = [];
afterAll(async () => {
  for (const child of children) child.kill();
  await Promise.all(servers.map((server) => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  })));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** An empty cache folder, removed after the tests. */
function emptyCache(): string {
  const folder = mkdtempSync(join(tmpdir(), "loom-first-run-"));
  folders.push(folder);
  return folder;
}

/** `text` matched literally in a RegExp. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}


/** A file's SHA-256 (comparing 27 MB buffers with toEqual would make a failure's diff exhaust the heap). */
function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** The served slugs: one for chat completions, one for messages. */
async function slugs(openai: OpenAI): Promise<{ chat: string; messages: string }> {
  const ids = (await openai.models.list()).data.map((model) => model.id);
  return { chat: ids.find((id) => id.startsWith("service/tim-"))!, messages: ids.find((id) => id.endsWith("-marathon"))! };
}

describe.skipIf(!existsSync(CLI) && process.env.CI !== "true")("the first run", () => {
  it("offline, serves the bundled stories260K, says so, and answers both chat formats through the official SDKs", async () => {
    const cache = emptyCache();
    const endpoint = `http://127.0.0.1:${await closedLoopbackPort()}`;
    const { base, stderr, child } = await startFirstRun(cache, endpoint, children);
    expect(stderr()).toMatch(new RegExp(`could not download ${DEFAULT_MODEL.repository}: GET ${endpoint}/\\S+: fetch failed: connect ECONNREFUSED`));
    expect(stderr()).toContain(`loom: serving the bundled model instead: stories260K (${BUNDLED_MODEL.path})`);
    expect(stderr()).toContain("or pass a model: --model <file.gguf or Hugging Face directory>, or LOOM_MODEL");
    // The device is WebAssembly here, a GPU's name where auto finds one.
    expect(stderr()).toMatch(new RegExp(`loom: serving ${escape(BUNDLED_MODEL.path)} \\([^;)]+; no chat template of its own: chat uses the default, ChatML\\)`));

    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: base, apiKey: "unused", maxRetries: 0 });
    const { chat, messages } = await slugs(openai);
    expect(chat).toBe("service/tim-stories260k-27b");
    // The conversation both formats send, as the default template renders it (with the vocabulary's BOS).
    const source = openModelSource(BUNDLED_MODEL.path);
    const promptTokens = tokenizerFromGguf(source.ggufMetadata!, BUNDLED_MODEL.path).encode(
      "<|im_start|>system\nYou tell stories.<|im_end|>\n<|im_start|>user\nTell me a story about a cat.<|im_end|>\n<|im_start|>assistant\n",
      { addSpecial: true, parseSpecial: true },
    ).length;

    const completion = await openai.chat.completions.create({
      model: chat, max_tokens: 24, temperature: 0,
      messages: [{ role: "system", content: "You tell stories." }, { role: "user", content: "Tell me a story about a cat." }],
    });
    expect(completion.choices[0].message.content!.trim()).not.toBe("");
    expect(completion.choices[0].message.content).not.toContain("<|im_");
    expect(["length", "stop"]).toContain(completion.choices[0].finish_reason);
    expect(completion.usage).toMatchObject({ prompt_tokens: promptTokens });

    let streamed = "";
    const stream = await openai.chat.completions.create({ model: chat, max_tokens: 24, temperature: 0, stream: true, messages: [{ role: "system", content: "You tell stories." }, { role: "user", content: "Tell me a story about a cat." }] });
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
    expect(streamed).toBe(completion.choices[0].message.content);

    const message = await anthropic.messages.create({
      model: messages, max_tokens: 24, temperature: 0, system: "You tell stories.",
      messages: [{ role: "user", content: "Tell me a story about a cat." }],
    });
    expect(message.content[0]).toMatchObject({ type: "text", text: completion.choices[0].message.content });
    expect(["max_tokens", "end_turn"]).toContain(message.stop_reason);
    // The same conversation again: its prompt comes from the prefix cache but its last token.
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(promptTokens);
    child.kill();
  });

  it.skipIf(testModelSkipReason("tiny-llama") !== undefined)("online, downloads the default model once and serves it; the next start downloads nothing", async () => {
    // A small random-weight Hugging Face directory stands in for SmolLM2-135M-Instruct (same files, same tokenizer).
    const stand_in = await ensureTestModel("tiny-llama", "hf", "f32");
    const requests: string[] = [];
    const hub = createServer((request, response) => {
      requests.push(request.url!);
      const file = request.url!.slice(`/${DEFAULT_MODEL.repository}/resolve/main/`.length);
      if (!DEFAULT_MODEL.files.includes(file)) {
        response.writeHead(404);
        response.end();
        return;
      }
      const body = readFileSync(join(stand_in, file));
      response.writeHead(200, { "content-length": body.length });
      response.end(body);
    });
    servers.push(hub);
    await new Promise<void>((resolve) => hub.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
    const cache = emptyCache();
    const directory = join(cache, "models", DEFAULT_MODEL.repository);

    const first = await startFirstRun(cache, endpoint, children);
    expect(first.stderr()).toContain(`downloading ${DEFAULT_MODEL.repository} from ${endpoint} into ${directory}`);
    expect(first.stderr()).toContain(`loom: serving ${directory} (`);
    expect(requests).toHaveLength(DEFAULT_MODEL.files.length);
    for (const file of DEFAULT_MODEL.files) expect(sha256(join(directory, file)), file).toBe(sha256(join(stand_in, file)));
    const openai = new OpenAI({ baseURL: `${first.base}/v1`, apiKey: "unused", maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: (await slugs(openai)).chat, max_tokens: 3, messages: [{ role: "user", content: "Hi" }] });
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    first.child.kill();

    const second = await startFirstRun(cache, endpoint, children);
    expect(requests).toHaveLength(DEFAULT_MODEL.files.length);
    expect(second.stderr()).not.toContain("downloading");
    expect(second.stderr()).toContain(`loom: serving ${directory} (`);
    second.child.kill();
  });
});
