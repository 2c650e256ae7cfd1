// `loom update` commands run in-process against the platform database (PGlite, and PostgreSQL where one answers),
// with tiny signed releases in a folder feed: approving a release older than the installed one needs
// --allow-downgrade, a check whose newer release fails verification is recorded as failed (not "check ok"), and
// history takes --config like its siblings.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LOOM_VERSION } from "../version.js";
import { MIGRATIONS } from "../platform/db/migrations/index.js";
import { TEST_POSTGRES_URL, createTestPostgresDatabase, migratedDataDir } from "../platform/testing/test-databases.js";
import { buildRelease } from "./build-release.js";
import { writeKeyPair } from "./keys.js";
import { compareSemVer } from "./semver.js";
import { runUpdate } from "./update-command.js";

const dir = mkdtempSync(join(tmpdir(), "loom-update-command-"));
const signer = writeKeyPair(join(dir, "signer"));
const stranger = writeKeyPair(join(dir, "stranger"));
const feed = join(dir, "feed");
const config = join(dir, "loom.json");
const strangerConfig = join(dir, "stranger.json");
// Versions either side of the installed one (this repository's, as no install names another).
const OLDER = "0.0.1";
const NEWER = "99.0.0";
const cleanups: Array<() => Promise<void> | void> = [() => rmSync(dir, { recursive: true, force: true })];

beforeAll(async () => {
  expect(compareSemVer(OLDER, LOOM_VERSION)).toBeLessThan(0);
  writeFileSync(config, JSON.stringify({ updates: { trustedKeys: [signer.publicKeyPath] } }));
  writeFileSync(strangerConfig, JSON.stringify({ updates: { trustedKeys: [stranger.publicKeyPath] } }));
  for (const version of [OLDER, NEWER]) {
    const root = join(dir, `package-${version}`);
    mkdirSync(join(root, "dist"), { recursive: true });
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "loom", version, private: true, files: ["dist/"] }));
    writeFileSync(join(root, "dist", "main.js"), `console.log(${JSON.stringify(version)});\n`);
    await buildRelease({ packageRoot: root, keyPath: signer.privateKeyPath, feed, notes: `${version}\n`, migrations: MIGRATIONS });
  }
  // What the commands print is not what these tests read.
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
}, 120_000);
afterAll(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The audit records, oldest first, as `action outcome toVersion`. */
async function history(database: string[]): Promise<string[]> {
  const writes: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => { writes.push(String(chunk)); return true; });
  try {
    expect(await runUpdate(["history", "--json", "--config", config, ...database])).toBe(0);
  } finally {
    spy.mockImplementation(() => true);
  }
  const { events } = JSON.parse(writes.join("")) as { events: Array<{ action: string; outcome: string; toVersion: string | null; detail: string }> };
  return events.reverse().map(({ action, outcome, toVersion }) => `${action} ${outcome} ${toVersion}`);
}

const backends: Array<[string, () => Promise<string[]>, string | undefined]> = [
  ["PGlite", async () => {
    const dataDir = await migratedDataDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    return ["--data-dir", dataDir];
  }, undefined],
  ["PostgreSQL", async () => {
    const database = await createTestPostgresDatabase(TEST_POSTGRES_URL!);
    cleanups.push(() => database.drop());
    return ["--database-url", database.url];
  }, TEST_POSTGRES_URL === undefined ? "no PostgreSQL to test against" : undefined],
];

for (const [name, open, skip] of backends) {
  describe.skipIf(skip !== undefined)(`loom update on ${name}`, () => {
    let database: string[];
    beforeAll(async () => { database = await open(); }, 120_000);

    it("refuses to approve a release older than the installed one without --allow-downgrade, and approves it with it", async () => {
      await expect(runUpdate(["approve", OLDER, "--feed", feed, "--config", config, "--by", "op", ...database])).rejects.toThrow(`${OLDER} is older than the installed ${LOOM_VERSION}: pass --allow-downgrade to approve an older release`);
      expect(await runUpdate(["approve", OLDER, "--allow-downgrade", "--feed", feed, "--config", config, "--by", "op", ...database])).toBe(0);
      expect(await runUpdate(["approve", NEWER, "--feed", feed, "--config", config, "--by", "op", ...database])).toBe(0);
      expect(await history(database)).toEqual([`approve refused ${OLDER}`, `approve ok ${OLDER}`, `approve ok ${NEWER}`]);
    }, 60_000);

    it("records a check whose newer release fails verification as failed, and a verified one as ok", async () => {
      const before = (await history(database)).length;
      expect(await runUpdate(["check", "--feed", feed, "--config", strangerConfig, ...database])).toBe(1);
      expect(await runUpdate(["check", "--feed", feed, "--config", config, ...database])).toBe(0);
      expect((await history(database)).slice(before)).toEqual([`check failed ${NEWER}`, `check ok ${NEWER}`]);
    }, 60_000);
  });
}

describe("loom update history", () => {
  it("names a bad --config like its siblings do", async () => {
    await expect(runUpdate(["history", "--config", join(dir, "missing.json"), "--data-dir", join(dir, "unused")])).rejects.toThrow(`--config ${join(dir, "missing.json")}:`);
  });
});
