// `loom admin corpus ...`: the batching of `corpus add` (in this process, with a recording stand-in for the target),
// and the compiled CLI (run `npm run build` first) on a PGlite data dir and through a running server holding it.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { AdminCommand } from "../platform/admin/admin-command.js";
import { removeAdminEndpointFile, writeAdminEndpointFile } from "../platform/admin/admin-endpoint-file.js";
import { answerAdminRequest } from "../platform/admin/admin-request.js";
import type { Database } from "../platform/contract.js";
import { openDatabase } from "../platform/db/open-database.js";
import { createPlatformStores } from "../platform/store/platform-stores.js";
import { migratedDataDir } from "../platform/testing/test-databases.js";
import { CorpusSearch } from "../runs/tools/corpus-search.js";
import { addCorpusFiles } from "./admin-corpus.js";

const run = promisify(execFile);
const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;

async function admin(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const env = { ...process.env, LOOM_DATABASE_URL: "", LOOM_DATA_DIR: "" };
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, "admin", ...args], { cwd: REPOSITORY_ROOT, env });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/** A folder of files for the corpus: two documents, one file skipped (binary), one passed over (an image). */
function corpusFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "loom-admin-corpus-"));
  mkdirSync(join(folder, "guides"));
  writeFileSync(join(folder, "guides", "batching.md"), "# Continuous batching\n\nRequests join the running batch at every step.\n");
  writeFileSync(join(folder, "limits.html"), "<title>Rate limits</title><p>Each key has requests per minute and tokens per day.</p>");
  writeFileSync(join(folder, "blob.txt"), Buffer.from([1, 0, 2]));
  writeFileSync(join(folder, "logo.png"), "png");
  return folder;
}

describe("corpus add's batches", () => {
  it("sends documents in batches of at most 4 MiB of JSON, reporting skips and progress", async () => {
    const folder = mkdtempSync(join(tmpdir(), "loom-admin-corpus-"));
    try {
      // Nine files of 480,000 characters: two batches (eight fit in 4 MiB of JSON, the ninth goes alone).
      for (let index = 0; index < 9; index++) writeFileSync(join(folder, `${index}.txt`), `${"word ".repeat(96_000)}`);
      writeFileSync(join(folder, "9.txt"), "");
      const commands: AdminCommand[] = [];
      const lines: string[] = [];
      const result = await addCorpusFiles({ paths: [folder] }, async (command) => {
        commands.push(command);
        const documents = command.command === "corpus.add" ? command.documents.length : 0;
        return { added: documents, replaced: 0, count: 100 + commands.length };
      }, (line) => lines.push(line));
      expect(commands.map((command) => command.command === "corpus.add" ? command.documents.length : -1)).toEqual([8, 1]);
      for (const command of commands) expect(Buffer.byteLength(JSON.stringify(command))).toBeLessThan(4 * 1024 * 1024 + 1000);
      expect(result).toEqual({ added: 9, replaced: 0, count: 102, files: 10, skipped: [{ path: join(folder, "9.txt"), reason: "it has no text" }] });
      expect(lines).toEqual(["sent 8 of 10 files", `skipped ${join(folder, "9.txt")}: it has no text`]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe.skipIf(skipOutsideCi(cliReason))(titled("loom admin corpus on a PGlite data dir", cliReason), () => {
  let dataDir: string;
  let folder: string;
  beforeAll(async () => {
    failIfMissing(cliReason);
    dataDir = await migratedDataDir();
    folder = corpusFolder();
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(folder, { recursive: true, force: true });
  });
  const where = () => ["--data-dir", dataDir];

  it("adds a folder's files, lists, counts, removes and clears them", async () => {
    const added = await admin(["corpus", "add", folder, ...where()]);
    expect([added.code, added.stdout]).toEqual([0, "added 2, replaced 0; the corpus holds 2 documents\n"]);
    expect(added.stderr).toBe(`loom: skipped ${join(folder, "blob.txt")}: it holds NUL bytes: not a text file\n`);
    const again = await admin(["corpus", "add", join(folder, "limits.html"), "--json", ...where()]);
    expect(JSON.parse(again.stdout)).toEqual({ added: 0, replaced: 1, count: 2, files: 1, skipped: [] });
    const batching = pathToFileURL(join(folder, "guides", "batching.md")).href;
    const listed = await admin(["corpus", "list", ...where()]);
    expect(listed.stdout).toContain(`${batching}  "Continuous batching"  `);
    expect(listed.stdout.endsWith("the corpus holds 2 documents\n")).toBe(true);
    expect((await admin(["corpus", "count", ...where()])).stdout).toBe("the corpus holds 2 documents\n");

    // What the tool will find, in the database the CLI wrote.
    const database = await openDatabase({ dataDir });
    try {
      expect((await new CorpusSearch(database).search("batches", 5)).map((result) => result.url)).toEqual([batching]);
    } finally {
      await database.close();
    }

    expect((await admin(["corpus", "remove", batching, ...where()])).stdout).toBe(`removed ${batching}\n`);
    const missing = await admin(["corpus", "remove", batching, ...where()]);
    expect([missing.code, missing.stderr]).toEqual([2, `loom: URL: the corpus has no document ${batching}\n`]);
    expect((await admin(["corpus", "clear", "--json", ...where()])).stdout).toBe('{"removed":1}\n');
    const wrong = await admin(["corpus", "add", folder, "--url", "https://example.org/x", ...where()]);
    expect([wrong.code, wrong.stderr]).toEqual([2, "loom: --url names one document: give one file with it\n"]);
  }, 120_000);
});

describe.skipIf(skipOutsideCi(cliReason))(titled("loom admin corpus through a running server that holds the data dir", cliReason), () => {
  // A stand-in for the loom server's admin route, as in admin-command.test.ts: it holds the data dir and answers with
  // answerAdminRequest, the function the real route calls.
  let dataDir: string;
  let folder: string;
  let database: Database;
  let server: Server;
  const bodies: string[] = [];
  beforeAll(async () => {
    failIfMissing(cliReason);
    dataDir = await migratedDataDir();
    folder = corpusFolder();
    database = await openDatabase({ dataDir });
    const stores = createPlatformStores(database);
    let token = "";
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", async () => {
        bodies.push(Buffer.concat(chunks).toString("utf8"));
        const answer = await answerAdminRequest({ stores, token, authorization: request.headers.authorization, body: bodies.at(-1)! });
        response.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    token = writeAdminEndpointFile(dataDir, `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/v1/command`);
  });
  afterAll(async () => {
    removeAdminEndpointFile(dataDir);
    await new Promise((resolve) => server?.close(resolve));
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(folder, { recursive: true, force: true });
  });

  it("reads the files in the CLI and sends their documents to the server", async () => {
    const result = await admin(["corpus", "add", folder, "--json", "--data-dir", dataDir]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ added: 2, replaced: 0, count: 2, files: 3 });
    // One command carried the documents themselves: the server never read a file.
    expect(bodies).toHaveLength(1);
    expect(JSON.parse(bodies[0]!).documents.map((document: { title: string }) => document.title).sort()).toEqual(["Continuous batching", "Rate limits"]);
    const [found] = await new CorpusSearch(database).search("tokens per day", 5);
    expect(found).toMatchObject({ title: "Rate limits", url: pathToFileURL(join(folder, "limits.html")).href });
  });
});
