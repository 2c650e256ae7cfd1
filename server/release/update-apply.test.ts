// `loom update` end to end on the embedded database: releases of this repository built into a feed (0.3.0 with a
// migration of its own, 0.4.0 that never becomes healthy), checked, approved, applied and rolled back while a real
// `loom serve` runs and a client streams across the switch; the refusals (unapproved, tampered, unknown key,
// downgrade); the automatic rollback; kill -9 of the apply at its riskiest steps, after which one version starts; and
// an apply killed after stopping the server, re-run from another folder: the stopped server starts again, then the
// apply completes.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../platform/db/migrations/index.js";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { LOOM_CLI, startLoom, stopChild } from "../testing/loom-process.js";
import { writeKeyPair } from "./keys.js";
import { installLayout } from "./install/layout.js";
import { stopProcess } from "./install/process-control.js";
import { runningProcesses } from "./install/running-processes.js";
import { freePort, loom, packageCopy, releaseInto } from "./testing/release-fixtures.js";
import { copyMigratedDatabase } from "../platform/testing/pglite-template.js";

/** The schema version a test release's own migration takes: the one after this build's last. */
const NEXT_MIGRATION = LATEST_SCHEMA_VERSION + 1;

const dir = mkdtempSync(join(tmpdir(), "loom-update-"));
const dataDir = join(dir, "data");
const layout = installLayout(join(dataDir, "install"));
const feed = join(dir, "feed");
const config = join(dir, "loom.json");
const children: ChildProcess[] = [];
let port: number;
let serveArgs: string[];
let apiKey: string;
let model: string;
let signer: ReturnType<typeof writeKeyPair>;
const env = (() => {
  const { LOOM_DATABASE_URL, LOOM_API_KEYS, ...inherited } = process.env;
  return { ...inherited, LOOM_DATA_DIR: dataDir };
})();
const update = (...args: string[]) => loom(["update", ...args, "--feed", feed, "--config", config, "--data-dir", dataDir, "--by", "test-operator"], env);
const updateNoFeed = (...args: string[]) => loom(["update", ...args, "--config", config, "--data-dir", dataDir, "--by", "test-operator"], env);
const updateRead = (...args: string[]) => loom(["update", ...args, "--data-dir", dataDir], env);
const health = async () => (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { status: string; version: string };

beforeAll(async () => {
  await copyMigratedDatabase(dataDir);
  signer = writeKeyPair(join(dir, "keys"));
  writeFileSync(config, JSON.stringify({ updates: { trustedKeys: [signer.publicKeyPath] } }));
  const migration = { version: NEXT_MIGRATION, table: "release_test_marker", keepsPrevious: false };
  await releaseInto(feed, packageCopy(dir, "0.2.0"), signer.privateKeyPath, "0.2.0: nothing new.\n");
  await releaseInto(feed, packageCopy(dir, "0.3.0", { migration }), signer.privateKeyPath, "0.3.0: a table of its own.\n");
  await releaseInto(feed, packageCopy(dir, "0.4.0", { migration, brokenServe: true }), signer.privateKeyPath, "0.4.0: never starts.\n");
  const gguf = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
  port = await freePort();
  serveArgs = ["--model", gguf, "--data-dir", dataDir, "--port", String(port), "--threads", "1", "--context", "512"];
  await startLoom("serve", serveArgs, { env, children });
  const organization = JSON.parse((await loom(["admin", "org", "create", "--name", "updates", "--json", "--data-dir", dataDir], env)).stdout) as { id: string };
  apiKey = (JSON.parse((await loom(["admin", "key", "create", "--org", organization.id, "--kind", "inference", "--json", "--data-dir", dataDir], env)).stdout) as { key: string }).key;
  const listing = (await (await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { data: Array<{ id: string }> };
  model = listing.data[0]!.id;
}, 240_000);

afterAll(async () => {
  // The processes apply started are detached: stop them through the install's records.
  await Promise.all(runningProcesses(layout).map((process_) => stopProcess(process_.pid, 0, 5000)));
  await Promise.all(children.map(stopChild));
  rmSync(dir, { recursive: true, force: true });
});

/** A chat completion with the platform key: its status. */
async function complete(): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 8 }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("loom update on the embedded database", () => {
  it("lists the newer releases as verified, and refuses an unapproved, a tampered and an unknown-key release, leaving 0.1.0 serving", async () => {
    const check = await update("check", "--json");
    expect(check.code, check.stderr).toBe(0);
    const listed = JSON.parse(check.stdout) as { currentVersion: string; releases: Array<{ version: string; verified: boolean }> };
    expect(listed.currentVersion).toBe("0.1.0");
    expect(listed.releases.map(({ version, verified }) => [version, verified])).toEqual([["0.4.0", true], ["0.3.0", true], ["0.2.0", true]]);

    const pinnedConfig = join(dir, "pinned.json");
    writeFileSync(pinnedConfig, JSON.stringify({ updates: { trustedKeys: [signer.publicKeyPath], policy: "pinned" } }));
    const pinned = await loom(["update", "apply", "0.3.0", "--feed", feed, "--config", pinnedConfig, "--data-dir", dataDir], env);
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toContain('the update policy is "pinned"');

    const unapproved = await update("apply", "0.3.0");
    expect(unapproved.code).toBe(1);
    expect(unapproved.stderr).toContain("release 0.3.0 (package SHA-256 ");
    expect(unapproved.stderr).toContain("is not approved: run loom update approve 0.3.0");

    const tampered = join(dir, "tampered-feed");
    cpSync(feed, tampered, { recursive: true });
    const tgz = join(tampered, "releases", "0.3.0", "loom-0.3.0.tgz");
    const bytes = readFileSync(tgz);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(tgz, bytes);
    const approveTampered = await loom(["update", "approve", "0.3.0", "--feed", tampered, "--config", config, "--data-dir", dataDir], env);
    expect(approveTampered.code).toBe(1);
    expect(approveTampered.stderr).toContain(`${tgz}: SHA-256`);
    expect(approveTampered.stderr).toContain("the package was changed");

    const stranger = writeKeyPair(join(dir, "stranger"));
    const strangerConfig = join(dir, "stranger.json");
    writeFileSync(strangerConfig, JSON.stringify({ updates: { trustedKeys: [stranger.publicKeyPath] } }));
    const unknownKey = await loom(["update", "approve", "0.3.0", "--feed", feed, "--config", strangerConfig, "--data-dir", dataDir], env);
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stderr).toContain(`signed by unknown key ${signer.keyId}`);

    // Approved, but offered from the tampered feed: refused at apply too.
    expect((await update("approve", "0.3.0")).code).toBe(0);
    // An install folder that does not record the server holding the data: apply could neither stop it nor copy its data.
    const elsewhere = await update("apply", "0.3.0", "--install-dir", join(dir, "other-install"));
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(new RegExp(`the embedded database in ${dataDir} is open in process \\d+, which this install \\(${join(dir, "other-install")}\\) does not record`));
    const applyTampered = await loom(["update", "apply", "0.3.0", "--feed", tampered, "--config", config, "--data-dir", dataDir], env);
    expect(applyTampered.code).toBe(1);
    expect(applyTampered.stderr).toContain("the package was changed");
    expect(await health()).toMatchObject({ status: "ok", version: "0.1.0" });
    expect(await complete()).toBe(200);
  }, 120_000);

  it("applies 0.3.0 with its migration while a stream in flight completes, and serves the same keys after the switch", async () => {
    const stream = fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "Tell a long story." }], max_tokens: 400, stream: true, stream_options: { include_usage: true } }),
    }).then(async (response) => ({ status: response.status, body: await response.text() }));
    const applied = await update("apply", "0.3.0", "--json", "--health-timeout-seconds", "90");
    expect(applied.code, applied.stderr).toBe(0);
    const result = JSON.parse(applied.stdout) as { from: { version: string }; to: { version: string }; migrations: number[]; backup: string; restarted: number[] };
    expect(result).toMatchObject({ from: { version: "0.1.0" }, to: { version: "0.3.0", root: join(layout.releases, "0.3.0") }, migrations: [NEXT_MIGRATION] });
    expect(result.restarted).toHaveLength(1);
    // The stream either finished (the old server drained it) or ended with a clean error event: never cut mid-line.
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.body.endsWith("data: [DONE]\n\n") || /data: \{"error"/.test(streamed.body), streamed.body.slice(-300)).toBe(true);
    expect(await health()).toMatchObject({ status: "ok", version: "0.3.0" });
    expect(await complete()).toBe(200);
    const status = JSON.parse((await updateRead("status", "--json")).stdout) as { current: { version: string }; previous: { version: string }; processes: Array<{ version: string }> };
    expect(status).toMatchObject({ current: { version: "0.3.0" }, previous: { version: "0.1.0" }, processes: [{ version: "0.3.0" }] });
  }, 180_000);

  it("refuses a downgrade without --allow-downgrade, and a rollback the data would not support without --restore-data", async () => {
    const downgrade = await update("apply", "0.2.0");
    expect(downgrade.code).toBe(1);
    expect(downgrade.stderr).toContain("0.2.0 is older than the installed 0.3.0: pass --allow-downgrade");
    const rollback = await updateNoFeed("rollback");
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain(`0.1.0 cannot run on the data as 0.3.0 migrated it (migration ${NEXT_MIGRATION}, release test: release_test_marker`);
    const unconfirmed = await updateNoFeed("rollback", "--restore-data");
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("add --yes to confirm");
    expect(await health()).toMatchObject({ version: "0.3.0" });
  }, 60_000);

  it("rolls a release that never becomes healthy back by itself, data and all", async () => {
    expect((await update("approve", "0.4.0")).code).toBe(0);
    const broken = await update("apply", "0.4.0", "--health-timeout-seconds", "60");
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("the update to 0.4.0 was rolled back: the new process");
    expect(broken.stderr).toContain("this release test build never starts");
    expect(await health()).toMatchObject({ status: "ok", version: "0.3.0" });
    expect(await complete()).toBe(200);
  }, 180_000);

  it("rolls back to 0.1.0 with its data restored, and records every step in the history", async () => {
    const rollback = await updateNoFeed("rollback", "--restore-data", "--yes", "--json");
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(JSON.parse(rollback.stdout)).toMatchObject({ from: { version: "0.3.0" }, to: { version: "0.1.0", root: REPOSITORY_ROOT } });
    expect(await health()).toMatchObject({ status: "ok", version: "0.1.0" });
    expect(await complete()).toBe(200);
    const history = JSON.parse((await updateRead("history", "--json")).stdout) as { events: Array<{ action: string; outcome: string; toVersion: string | null; actor: string }> };
    const steps = history.events.map(({ action, outcome, toVersion }) => `${action} ${outcome} ${toVersion}`).reverse();
    expect(steps).toEqual(expect.arrayContaining(["check ok 0.4.0", "apply refused 0.3.0", "approve refused 0.3.0", "approve ok 0.3.0", "apply ok 0.3.0", "apply refused 0.2.0", "apply rolled-back 0.4.0", "rollback ok 0.1.0"]));
    expect(steps.indexOf("apply ok 0.3.0")).toBeGreaterThan(steps.indexOf("approve ok 0.3.0"));
  }, 180_000);

  // Each step: apply 0.3.0 from 0.1.0, kill -9 the apply when it reports the step, start whatever `current` names.
  for (const step of ["backed up the embedded database", "migrations applied by 0.3.0", "current -> "]) {
    it(`kill -9 of the apply after "${step}" leaves a version that starts`, async () => {
      const before = (await health()).version;
      const apply = spawn(process.execPath, [LOOM_CLI, "update", "apply", "0.3.0", "--feed", feed, "--config", config, "--data-dir", dataDir], { env });
      children.push(apply);
      let log = "";
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: apply.stderr! }).on("line", (line) => {
          log += `${line}\n`;
          if (line.includes(step)) {
            apply.kill("SIGKILL");
            resolve();
          }
        });
        apply.once("exit", () => reject(new Error(`the apply ended before "${step}":\n${log}`)));
      });
      // What the operator's service runs: the install's current version, same arguments.
      const started = spawnCurrent();
      const version = await started.listening.catch((error: Error) => {
        // The apply had started the new version before it was killed: that process holds the data and serves.
        const holder = /the data dir .* is in use by process (\d+)/.exec(error.message);
        if (holder === null) throw error;
        return healthyVersion();
      });
      expect(["0.1.0", "0.3.0"]).toContain(version);
      expect(await health()).toMatchObject({ status: "ok", version });
      expect(await complete()).toBe(200);
      // Back to 0.1.0 for the next step.
      if (version === "0.3.0") {
        // The rollback stops it, as it would the operator's.
        const back = await updateNoFeed("rollback", "--restore-data", "--yes");
        expect(back.code, back.stderr).toBe(0);
      } else {
        expect(version).toBe(before);
        await stopChild(started.child);
        await startLoom("serve", serveArgs, { env, children });
      }
    }, 180_000);
  }
});

describe("an apply killed between stopping and started, re-run from another folder", () => {
  it("the journal names the data dir absolutely though it was typed relative; the re-run starts the stopped serve from 0.1.0, healthy, then applies 0.3.0", async () => {
    expect((await health()).version).toBe("0.1.0");
    // Typed relative to `dir`, as an operator in that folder would.
    const apply = spawn(process.execPath, [LOOM_CLI, "update", "apply", "0.3.0", "--feed", feed, "--config", config, "--data-dir", "data"], { env, cwd: dir });
    children.push(apply);
    let log = "";
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: apply.stderr! }).on("line", (line) => {
        log += `${line}\n`;
        if (line.includes("backed up the embedded database")) {
          apply.kill("SIGKILL");
          resolve();
        }
      });
      apply.once("exit", () => reject(new Error(`the apply ended before its backup:\n${log}`)));
    });
    // Reaped before the re-run: until then the killed apply is a zombie, alive to kill(pid, 0), its update lock held.
    if (apply.exitCode === null && apply.signalCode === null) await new Promise((resolve) => apply.once("exit", resolve));
    const journal = JSON.parse(readFileSync(layout.journal, "utf8")) as { dataDir: string; processes: Array<{ role: string; version: string }> };
    expect(journal.dataDir).toBe(dataDir);
    expect(journal.processes.map(({ role, version }) => `${role} ${version}`)).toEqual(["serve 0.1.0"]);
    await expect(health()).rejects.toThrow(); // stopped by the apply, started by nobody yet

    // Re-run from the filesystem's root, holding no data/ of its own, as a service manager's command would.
    const again = await loom(["update", "apply", "0.3.0", "--feed", feed, "--config", config, "--data-dir", dataDir, "--health-timeout-seconds", "90"], env, "/");
    expect(again.code, again.stderr).toBe(0);
    // Killed as it printed the backup's line: the journal says "migrating" if it got that far, else "stopping".
    expect(again.stderr).toMatch(/an interrupted apply from 0\.1\.0 to 0\.3\.0 \(cut off while (stopping|migrating)\) was recovered: .*; current names 0\.1\.0/);
    expect(again.stderr).toMatch(/serve \d+ runs 0\.1\.0 and is healthy/);
    expect(again.stdout).toMatch(/^updated 0\.1\.0 -> 0\.3\.0; running: \d+/);
    expect(await health()).toMatchObject({ status: "ok", version: "0.3.0" });
    expect(await complete()).toBe(200);
  }, 240_000);
});

/** The version /health reports once it answers 200 (within 60 s). */
async function healthyVersion(): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const body = await health().catch(() => undefined);
    if (body?.status === "ok") return body.version;
    if (Date.now() > deadline) throw new Error(`no healthy server on port ${port} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts `<install>/current/dist/server/cli/main.js serve` with the test's arguments. @returns its /health version. */
function spawnCurrent(): { child: ChildProcess; listening: Promise<string> } {
  const child = spawn(process.execPath, [join(layout.current, "dist", "server", "cli", "main.js"), "serve", ...serveArgs], { env, cwd: REPOSITORY_ROOT });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => { stderr += chunk; });
  const listening = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.includes('"listening"')) health().then((body) => resolve(body.version), reject);
    });
    child.once("exit", (code) => reject(new Error(`the current version did not start (${code}): ${stderr}`)));
  });
  return { child, listening };
}
