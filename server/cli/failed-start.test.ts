// A loom command that fails ends: `loom serve` that cannot open its data dir (another process holds it) says why and
// exits 1, instead of hanging on what it had already started (the model's threads).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { LOCK_FILE_NAME } from "../platform/db/data-dir-lock.js";
import { LOOM_CLI } from "../testing/loom-process.js";

const dataDir = mkdtempSync(join(tmpdir(), "loom-failed-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it("exits 1 naming the holder when the data dir is in use, instead of hanging", async () => {
  const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
  writeFileSync(join(dataDir, LOCK_FILE_NAME), `${process.pid}\n`); // this test process holds it
  const failure = await promisify(execFile)(process.execPath, [LOOM_CLI, "serve", "--model", model, "--data-dir", dataDir, "--port", "0", "--threads", "1", "--context", "512"], { timeout: 60_000, killSignal: "SIGKILL" })
    .then(() => undefined, (error: { code?: number; signal?: string; stderr?: string }) => error);
  expect(failure?.signal ?? null).toBeNull(); // not killed by the timeout
  expect(failure?.code).toBe(1);
  expect(failure?.stderr).toContain(`the data dir ${dataDir} is in use by process ${process.pid}`);
}, 90_000);
