// `loom release` and `loom update` as an operator runs them: the compiled CLI in a child process (skipped, saying
// so, without a build of dist/).
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";

const CLI = join(PACKAGE_ROOT, "dist", "server", "cli", "main.js");
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "loom-release-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loom(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args]);
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe.skipIf(!existsSync(CLI))(`loom release and loom update (${CLI})`, () => {
  it("makes keys, builds a release and checks it, in text and JSON", async () => {
    const keygen = await loom("release", "keygen", "--out", join(dir, "keys"), "--json");
    expect(keygen.code, keygen.stderr).toBe(0);
    const keys = JSON.parse(keygen.stdout);
    expect(keys).toEqual({ keyId: expect.stringMatching(/^[0-9a-f]{16}$/), privateKeyPath: join(dir, "keys", "release-key.pem"), publicKeyPath: join(dir, "keys", "release-key.pub.pem") });
    if (process.platform !== "win32") expect(statSync(keys.privateKeyPath).mode & 0o777).toBe(0o600);

    const root = join(dir, "package");
    mkdirSync(join(root, "dist"), { recursive: true });
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "loom", version: "99.0.0", files: ["dist/"] }));
    writeFileSync(join(root, "dist", "main.js"), "\n");
    // The release's migrations are read from its own build.
    mkdirSync(join(root, "dist", "server", "platform", "db", "migrations"), { recursive: true });
    writeFileSync(join(root, "dist", "server", "platform", "db", "migrations", "index.js"), 'export const MIGRATIONS = [{ version: 1, description: "one", statements: [] }];\n');
    writeFileSync(join(dir, "notes.md"), "Faster.\n");
    const feed = join(dir, "feed");
    const built = await loom("release", "build", "--key", keys.privateKeyPath, "--out", feed, "--notes", join(dir, "notes.md"), "--package-root", root);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toMatch(new RegExp(`^built loom 99\\.0\\.0 into .*releases/99\\.0\\.0\\n  package    loom-99\\.0\\.0\\.tgz \\(\\d+ bytes, sha256 [0-9a-f]{64}\\)\\n  files      3\\n  schema     version 1 \\(1 migrations\\)\\n  git        not a git checkout\\n  signed by  key ${keys.keyId}\\n$`));
    const again = await loom("release", "build", "--key", keys.privateKeyPath, "--out", feed, "--package-root", root);
    expect(again).toMatchObject({ code: 1, stderr: "loom: the feed already has version 99.0.0: give --replace to build it again\n" });

    const config = join(dir, "loom.json");
    writeFileSync(config, JSON.stringify({ updates: { feed, trustedKeys: ["keys/release-key.pub.pem"] } }));
    const text = await loom("update", "check", "--config", config);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^loom \\d+\\.\\d+\\.\\d+; feed ${feed.replace(/[.]/g, "\\.")}: 1 newer release\\n\\n99\\.0\\.0  \\S+  verified: signed by key ${keys.keyId}, package SHA-256 matches, needs schema version \\d+\\n  \\| Faster\\.\\n$`));

    // Without the trusted key, the same release is listed unverified and the status is 1.
    const untrusted = await loom("update", "check", "--feed", feed, "--json");
    expect(untrusted.code).toBe(1);
    expect(JSON.parse(untrusted.stdout).releases).toMatchObject([{ version: "99.0.0", verified: false, signedBy: null, problems: [expect.stringContaining(`signed by unknown key ${keys.keyId} (trusted: none configured)`)] }]);
  }, 60_000);

  it("releases a model file, refusing it again without --replace and a model directory", async () => {
    const keygen = await loom("release", "keygen", "--out", join(dir, "model-keys"), "--json");
    const keys = JSON.parse(keygen.stdout);
    const model = join(PACKAGE_ROOT, "models", "stories260K", "stories260K.gguf");
    const feed = join(dir, "model-feed");
    const args = ["release", "model", "--key", keys.privateKeyPath, "--out", feed, "--slug", "stories260k", "--file", model];
    const released = await loom(...args);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toMatch(new RegExp(`^released model stories260k into ${feed.replace(/[.]/g, "\\.")}/models/stories260k/([0-9a-f]{16})\\n  file       stories260K\\.gguf \\(${statSync(model).size} bytes, sha256 \\1[0-9a-f]{48}\\)\\n  signed by  key ${keys.keyId}\\n$`));
    const again = await loom(...args);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/^loom: the feed already has model stories260k with SHA-256 [0-9a-f]{64}: give --replace to release it again\n$/) });
    const replaced = await loom(...args, "--replace", "--json");
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ slug: "stories260k", keyId: keys.keyId, file: { name: "stories260K.gguf", size: statSync(model).size }, files: { model: expect.stringMatching(/^models\/stories260k\/[0-9a-f]{16}\/stories260K\.gguf$/) } });
    const folder = join(PACKAGE_ROOT, "models", "stories260K");
    const directory = await loom("release", "model", "--key", keys.privateKeyPath, "--out", feed, "--slug", "stories260k", "--file", folder);
    expect(directory).toMatchObject({ code: 1, stderr: `loom: --file ${folder}: a directory; a model release is one GGUF file (Hugging Face model directories are not released)\n` });
    const noSlug = await loom("release", "model", "--key", keys.privateKeyPath, "--out", feed, "--file", model);
    expect(noSlug).toMatchObject({ code: 2, stderr: expect.stringContaining("--slug is required") });
  }, 60_000);

  it("names a bad updates field in the config and a missing feed", async () => {
    const config = join(dir, "bad.json");
    writeFileSync(config, JSON.stringify({ updates: { trustedKeys: "key.pem" } }));
    const bad = await loom("update", "check", "--feed", dir, "--config", config, "--json");
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error).toMatch(/bad\.json: updates\.trustedKeys must be an array of non-empty strings/);
    const missing = await loom("update", "check");
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining("--feed is required") });
    const unknown = await loom("update", "install");
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown update command 'install' (check, approve, apply, rollback, status, history, migrate, fetch-model)") });
    const stray = await loom("update", "history", "--feed", dir);
    expect(stray).toMatchObject({ code: 2, stderr: expect.stringContaining("'loom update history' takes no --feed") });
  });
});
