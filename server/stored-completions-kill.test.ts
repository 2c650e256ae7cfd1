// Stored chat completions across `kill -9`: `loom serve` (no platform: the embedded PGlite of its data dir) is killed
// with SIGKILL the moment the official openai client has an answer (a whole response; a stream's finish chunk), and
// once in the middle of a stream; restarted on the same data dir, it returns every answered completion as the client
// received it, and lists no completion whose stream was cut before its finish.
import type { ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { migratedDataDir } from "./platform/testing/test-databases.js";
import { type LoomProcess, startLoomServe } from "./testing/loom-process.js";

// What is stored does not depend on the model: tiny-llama loads fastest.
const PRESET = "tiny-llama";
const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
const reason = testModelSkipReason(PRESET) ?? (existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`);

const children: ChildProcess[] = [];
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups) cleanup();
});

/** Kills `loom serve` with SIGKILL now (no drain, no database close) and waits for it to be gone. */
async function killNow(server: LoomProcess): Promise<void> {
  server.child.kill("SIGKILL");
  await server.exited;
  expect(server.child.signalCode).toBe("SIGKILL");
}

describe.skipIf(skipOutsideCi(reason))(titled("stored chat completions across kill -9 of loom serve", reason), () => {
  it("keeps every answered completion, whole or streamed, and nothing of a stream cut before its finish", async () => {
    failIfMissing(reason);
    // A migrated copy of the test template in a data dir of its own: what the first store: true would have created.
    const dataDir = await migratedDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const model = await ensureTestModel(PRESET, "gguf", "q8_0");
    const env = { ...process.env, LOOM_DATA_DIR: dataDir, LOOM_API_KEYS: "" };
    const serve = () => startLoomServe(["--model", model, "--port", "0", "--no-auth", "--threads", "1", "--context", "512"], { env, children });
    const clientOf = (server: LoomProcess) => new OpenAI({ apiKey: "unused", baseURL: `${server.base}/v1`, maxRetries: 0 });

    // 1. A whole response: killed as soon as the client has it.
    const first = await serve();
    const slug = ((await (await fetch(`${first.base}/v1/models`)).json()) as { data: { id: string }[] }).data[0]!.id;
    const whole = await clientOf(first).chat.completions.create({ model: slug, messages: [{ role: "user", content: "Tell me about the storm." }], max_tokens: 8, temperature: 0, store: true, metadata: { case: "whole" } });
    await killNow(first);
    expect(whole.choices[0]!.finish_reason).not.toBeNull();

    // 2. A stream: killed the moment its finish chunk arrives (the [DONE] after it may not have been read yet).
    const second = await serve();
    const stream = await clientOf(second).chat.completions.create({ model: slug, messages: [{ role: "user", content: "Count to three." }], max_tokens: 8, temperature: 0, stream: true, store: true, metadata: { case: "streamed" } });
    let streamedId = "";
    let streamedContent = "";
    let streamedFinish: string | null = null;
    let killing: Promise<void> | undefined;
    try {
      for await (const chunk of stream) {
        streamedId = chunk.id;
        streamedContent += chunk.choices[0]?.delta.content ?? "";
        if (chunk.choices[0]?.finish_reason) {
          streamedFinish = chunk.choices[0].finish_reason;
          killing = killNow(second);
          break;
        }
      }
    } catch {
      // The connection may break under the kill before the loop leaves the stream: what arrived is recorded above.
    }
    await (killing ?? killNow(second));
    expect(streamedFinish, "the stream's finish chunk arrived before the kill").not.toBeNull();
    expect(streamedId).toMatch(/^chatcmpl-/);

    // 3. A stream cut in the middle: killed at its first content, while it has hundreds of tokens to go.
    const third = await serve();
    const cutParams = { model: slug, messages: [{ role: "user" as const, content: "Write a long story." }], max_tokens: 400, ignore_eos: true, temperature: 0, stream: true as const, store: true, metadata: { case: "cut" } };
    const cut = await clientOf(third).chat.completions.create(cutParams as OpenAI.ChatCompletionCreateParamsStreaming);
    let cutId = "";
    let cutFinish: string | null = null;
    let cutKilling: Promise<void> | undefined;
    try {
      for await (const chunk of cut) {
        cutId = chunk.id;
        cutFinish = chunk.choices[0]?.finish_reason ?? cutFinish;
        if (chunk.choices[0]?.delta.content) {
          cutKilling = killNow(third);
          break;
        }
      }
    } catch {
      // The connection broke under the kill.
    }
    await (cutKilling ?? killNow(third));
    expect(cutId).toMatch(/^chatcmpl-/);
    expect(cutFinish, "the cut stream had not finished when it was killed").toBeNull();

    // 4. Restarted on the same data dir: both answered completions, as the client received them; nothing of the cut one.
    const restarted = await serve();
    const client = clientOf(restarted);
    try {
      expect(await client.chat.completions.retrieve(whole.id)).toStrictEqual({ ...whole, metadata: { case: "whole" } });
      const streamed = await client.chat.completions.retrieve(streamedId);
      expect(streamed).toMatchObject({ id: streamedId, object: "chat.completion", model: slug, metadata: { case: "streamed" } });
      expect(streamed.choices).toStrictEqual([{ index: 0, message: { role: "assistant", content: streamedContent, refusal: null }, finish_reason: streamedFinish, logprobs: null }]);
      await expect(client.chat.completions.retrieve(cutId)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const listed = [];
      for await (const stored of client.chat.completions.list()) listed.push(stored);
      expect(listed.map((stored) => stored.id)).toStrictEqual([whole.id, streamedId]);
      expect(listed.map((stored) => stored.choices[0]!.finish_reason)).toStrictEqual([whole.choices[0]!.finish_reason, streamedFinish]);
    } finally {
      await killNow(restarted);
    }
  }, 120_000);
});
