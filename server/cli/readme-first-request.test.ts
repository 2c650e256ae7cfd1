// The README's first screen, run word for word: its curl and its SDK module against `loom serve --no-auth` (what
// `npm start` runs) on a fresh cache with the Hub unreachable, as on a fresh clone offline. Only the address changes:
// the tests take a free port instead of 8080.
import { execFile } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { LOOM_CLI, type LoomProcess, startFirstRun } from "../testing/loom-process.js";

const run = promisify(execFile);
const README = readFileSync(join(REPOSITORY_ROOT, "README.md"), "utf8");
const FIRST_SCREEN = README.split("\n").slice(0, 60).join("\n");
const README_ADDRESS = "http://127.0.0.1:8080";

/** The fenced blocks of `language` in `markdown`, in order. */
function fencedBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((match) => match[1]!);
}

describe("the README", () => {
  it("is under 200 lines, and its first 60 hold a curl to /v1/chat/completions and an SDK module", () => {
    expect(README.split("\n").length).toBeLessThan(200);
    expect(fencedBlocks(FIRST_SCREEN, "sh").some((block) => block.includes(`curl -s ${README_ADDRESS}/v1/chat/completions`))).toBe(true);
    expect(fencedBlocks(FIRST_SCREEN, "ts")).toHaveLength(1);
  });
});

describe.skipIf(!existsSync(LOOM_CLI) && process.env.CI !== "true")("the README's first request, word for word, offline", () => {
  const children: ChildProcess[] = [];
  const folders: string[] = [];
  let loom: LoomProcess;
  beforeAll(async () => {
    const cache = mkdtempSync(join(tmpdir(), "loom-readme-"));
    folders.push(cache);
    loom = await startFirstRun(cache, `http://127.0.0.1:${await closedLoopbackPort()}`, children);
  });
  afterAll(() => {
    for (const child of children) child.kill();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });
  /** The README's text with its address pointing at the test's server. */
  const here = (text: string) => text.replaceAll(README_ADDRESS, loom.base);

  it("the curl answers 200 with a chat completion", async () => {
    const curl = fencedBlocks(FIRST_SCREEN, "sh").flatMap((block) => block.split("\n")).find((line) => line.startsWith("curl "))!;
    // -w appends the status on a line of its own; the command itself is the README's.
    const { stdout } = await run("bash", ["-c", `${here(curl)} -w '\\n%{http_code}'`]);
    const [body, status] = [stdout.slice(0, stdout.lastIndexOf("\n")), stdout.slice(stdout.lastIndexOf("\n") + 1)];
    expect(status).toBe("200");
    const completion = JSON.parse(body) as { object: string; choices: Array<{ message: { role: string; content: string } }> };
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]!.message.role).toBe("assistant");
  });

  it("the SDK module runs as saved, printing both answers", async () => {
    // Saved in the checkout, as the README says, so that the SDKs resolve from its node_modules.
    const path = join(REPOSITORY_ROOT, `.readme-snippet-${process.pid}.mjs`);
    writeFileSync(path, here(fencedBlocks(FIRST_SCREEN, "ts")[0]!));
    try {
      const { stdout } = await run(process.execPath, [path], { timeout: 60_000 });
      expect(stdout.trim().split("\n").length).toBeGreaterThanOrEqual(2);
    } finally {
      rmSync(path, { force: true });
    }
  });
});
