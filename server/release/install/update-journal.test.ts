// The install's crash safety without a real release: the update lock (one change at a time, a stale lock taken over, a
// journal left to the live update that owns it), what recovery does with a journal cut off at each rollback step,
// and a rolling update whose new worker never becomes healthy starting the old worker again. Package roots here are
// small folders with a `dist/server/cli/main.js` that records itself in the install and answers /health.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { builtModule, raceProcesses } from "../../platform/db/testing/race-processes.js";
import { readInstallState, writeInstallState } from "./install-state.js";
import { type InstallLayout, currentRoot, installLayout, pointCurrentAt } from "./layout.js";
import { stopProcess } from "./process-control.js";
import { runningProcesses } from "./running-processes.js";
import { rollProcesses } from "./switch-processes.js";
import { recoverInstall } from "./this-process.js";
import { type UpdateJournal, readJournal, recoverInterruptedUpdate, writeJournal } from "./update-journal.js";
import { UpdateInProgressError, acquireUpdateLock, updateLockPath } from "./update-lock.js";
import { fakePackageRoot } from "../testing/fake-package-root.js";

const dir = mkdtempSync(join(tmpdir(), "loom-journal-"));
const children: ChildProcess[] = [];
let count = 0;

afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopProcess(child.pid!, 0, 2000)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh install, a data dir holding `pglite/marker` = "migrated", and a backup holding "backed up". */
function fixture() {
  const root = join(dir, `case-${count++}`);
  const layout = installLayout(join(root, "install"));
  const dataDir = join(root, "data");
  const backup = join(root, "install", "backups", "b1");
  mkdirSync(join(dataDir, "pglite"), { recursive: true });
  writeFileSync(join(dataDir, "pglite", "marker"), "migrated");
  mkdirSync(join(backup, "pglite"), { recursive: true });
  writeFileSync(join(backup, "pglite", "marker"), "backed up");
  const from = { version: "0.1.0", root: fakePackageRoot(root, "0.1.0") };
  const to = { version: "0.3.0", root: fakePackageRoot(root, "0.3.0") };
  const marker = () => readFileSync(join(dataDir, "pglite", "marker"), "utf8");
  return { layout, dataDir, backup, from, to, marker };
}

function journalOf(f: ReturnType<typeof fixture>, operation: UpdateJournal["operation"], phase: UpdateJournal["phase"]): UpdateJournal {
  // state.json before the operation: it named `from` current (after an earlier update, for apply).
  const priorState = operation === "apply" ? { previous: { version: "0.0.9", root: f.from.root }, current: f.from, backup: null } : { previous: f.to, current: f.from, backup: f.backup };
  return { operation, from: f.from, to: f.to, phase, dataDir: f.dataDir, backup: f.backup, priorState, startedAt: new Date().toISOString() };
}

/** A live process that is not this one. */
function otherProcess(): ChildProcess {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  children.push(child);
  return child;
}

/** Takes the lock over for "rollback": it then names this process and refuses another taker, until released. */
function expectTakenOver(layout: InstallLayout): void {
  const release = acquireUpdateLock(layout, "rollback");
  expect(JSON.parse(readFileSync(updateLockPath(layout), "utf8"))).toMatchObject({ pid: process.pid, operation: "rollback" });
  expect(() => acquireUpdateLock(layout, "apply")).toThrow(`another loom update (process ${process.pid}, rollback since`);
  release();
  expect(existsSync(updateLockPath(layout))).toBe(false);
}

describe("the update lock", () => {
  it("admits one change at a time, naming the holder, and is free again once released", () => {
    const { layout } = fixture();
    const release = acquireUpdateLock(layout, "apply");
    expect(() => acquireUpdateLock(layout, "rollback")).toThrow(UpdateInProgressError);
    expect(() => acquireUpdateLock(layout, "rollback")).toThrow(`process ${process.pid}, apply since`);
    release();
    acquireUpdateLock(layout, "rollback")();
  });

  it("takes over a lock whose process is gone", async () => {
    const { layout } = fixture();
    const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => gone.once("exit", resolve));
    mkdirSync(layout.root, { recursive: true });
    writeFileSync(updateLockPath(layout), JSON.stringify({ pid: gone.pid, operation: "apply", since: "then" }));
    expectTakenOver(layout);
  });

  it("refuses while a live process holds it, and a loom starting meanwhile leaves that process's journal alone", async () => {
    const f = fixture();
    const holder = otherProcess();
    mkdirSync(f.layout.root, { recursive: true });
    writeFileSync(updateLockPath(f.layout), JSON.stringify({ pid: holder.pid, operation: "apply", since: "now" }));
    expect(() => acquireUpdateLock(f.layout, "apply")).toThrow(`another loom update (process ${holder.pid}, apply since now)`);
    pointCurrentAt(f.layout, f.to.root);
    writeJournal(f.layout, journalOf(f, "apply", "switched"));
    expect(await recoverInstall(f.layout.root)).toContain(`under way in process ${holder.pid}: its journal is left to it`);
    expect(readJournal(f.layout)?.phase).toBe("switched");
    // Once that process is gone, the next start recovers, holding the lock meanwhile, and leaves no lock behind.
    await stopProcess(holder.pid!, 0, 2000);
    expect(await recoverInstall(f.layout.root)).toContain("was recovered");
    expect(readJournal(f.layout)).toBeUndefined();
    expect(existsSync(updateLockPath(f.layout))).toBe(false);
  });

  it.runIf(process.platform === "linux")("takes a lock whose pid now belongs to a process started after it (a reboot, a reused pid) for stale", async () => {
    const { layout } = fixture();
    const reused = otherProcess();
    mkdirSync(layout.root, { recursive: true });
    writeFileSync(updateLockPath(layout), JSON.stringify({ pid: reused.pid, operation: "apply", since: "an hour ago" }));
    expect(() => acquireUpdateLock(layout, "apply")).toThrow(UpdateInProgressError); // made after it started: its own
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(updateLockPath(layout), anHourAgo, anHourAgo);
    expectTakenOver(layout);
  });

  it("lets one of many processes that find the same stale lock take it", { timeout: 30_000 }, async () => {
    const { layout } = fixture();
    const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => gone.once("exit", resolve));
    mkdirSync(layout.root, { recursive: true });
    writeFileSync(updateLockPath(layout), JSON.stringify({ pid: gone.pid, operation: "apply", since: "then" }));
    // Eight processes race for it; a winner holds it for 4 s, longer than the others take to try.
    const outcomes = await raceProcesses(8, `
      const { acquireUpdateLock } = await import(${builtModule("server", "release", "install", "update-lock.js")});
      const { installLayout } = await import(${builtModule("server", "release", "install", "layout.js")});`, `
      try { const release = acquireUpdateLock(installLayout(${JSON.stringify(layout.root)}), "race"); console.log("won"); await new Promise((r) => setTimeout(r, 4000)); release(); }
      catch (error) { console.log(error.name); }`);
    expect(outcomes.filter((outcome) => outcome === "won")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "UpdateInProgressError")).toHaveLength(7);
  });
});

describe("recovery of a journal cut off", () => {
  // Each row: the operation and phase the journal says, where `current` points, and what the data must be after.
  const cases: Array<[UpdateJournal["operation"], UpdateJournal["phase"], "from" | "to", string, "from" | "to"]> = [
    // apply's automatic rollback: "restoring" is written before current moves back.
    ["apply", "restoring", "to", "migrated", "to"],
    ["apply", "restoring", "from", "backed up", "from"],
    ["apply", "migrating", "from", "backed up", "from"],
    ["apply", "switched", "to", "migrated", "to"],
    // rollback --restore-data: "restoring" is written before current moves to the version returned to.
    ["rollback", "restoring", "from", "migrated", "from"],
    ["rollback", "restoring", "to", "backed up", "to"],
    ["rollback", "stopping", "from", "migrated", "from"],
  ];
  for (const [operation, phase, current, data, serving] of cases) {
    it(`${operation} cut off while ${phase} with current at ${current === "from" ? "the version it left" : "the version it went to"}: ${data} data, state.json naming ${serving === "from" ? "the old" : "the new"} current`, async () => {
      const f = fixture();
      pointCurrentAt(f.layout, f[current].root);
      const journal = journalOf(f, operation, phase);
      writeInstallState(f.layout, journal.priorState!);
      writeJournal(f.layout, journal);
      const said = (await recoverInterruptedUpdate(f.layout))?.said;
      expect(said).toContain(`an interrupted ${operation} from 0.1.0 to 0.3.0 (cut off while ${phase}) was recovered`);
      expect(f.marker()).toBe(data);
      expect(readJournal(f.layout)).toBeUndefined();
      expect(currentRoot(f.layout)).toBe(f[current].root);
      expect(readInstallState(f.layout)?.current.version).toBe(f[serving].version);
    });
  }
});

describe("recovery started from another working folder", () => {
  /** Runs `body` with the working folder at a new folder holding a data dir of its own (marker "someone else's"). */
  async function elsewhere<T>(body: (otherData: string) => Promise<T>): Promise<T> {
    const folder = join(dir, `elsewhere-${count++}`);
    mkdirSync(join(folder, "data", "pglite"), { recursive: true });
    writeFileSync(join(folder, "data", "pglite", "marker"), "someone else's");
    const before = process.cwd();
    process.chdir(folder);
    try {
      return await body(join(folder, "data"));
    } finally {
      process.chdir(before);
    }
  }

  it("restores the journal's absolute data dir, as a service manager starting loom from another folder would, and leaves the data/ there alone", async () => {
    const f = fixture();
    pointCurrentAt(f.layout, f.from.root);
    writeJournal(f.layout, journalOf(f, "apply", "migrating"));
    await elsewhere(async (otherData) => {
      expect(await recoverInstall(f.layout.root)).toContain("restored the data backed up before the update");
      expect(readFileSync(join(otherData, "pglite", "marker"), "utf8")).toBe("someone else's");
    });
    expect(f.marker()).toBe("backed up");
    expect(readJournal(f.layout)).toBeUndefined();
  });

  it("refuses a journal naming the data dir relatively (older looms wrote it as typed): nothing restored, the journal kept", async () => {
    const f = fixture();
    pointCurrentAt(f.layout, f.from.root);
    writeJournal(f.layout, { ...journalOf(f, "apply", "migrating"), dataDir: "data" });
    await elsewhere(async (otherData) => {
      await expect(recoverInterruptedUpdate(f.layout)).rejects.toThrow(`${f.layout.journal} names the data dir as "data", relative to a working folder it does not record`);
      expect(readFileSync(join(otherData, "pglite", "marker"), "utf8")).toBe("someone else's");
    });
    expect(f.marker()).toBe("migrated");
    expect(readJournal(f.layout)?.dataDir).toBe("data");
  });
});

describe("a rolling update whose new worker never becomes healthy", () => {
  it("starts the stopped worker again on its old version and says why", async () => {
    const parent = join(dir, "rolling");
    const layout: InstallLayout = installLayout(join(parent, "install"));
    const old = fakePackageRoot(parent, "0.1.0");
    const broken = { version: "0.2.0", root: fakePackageRoot(parent, "0.2.0", true) };
    const worker = spawn(process.execPath, [join(old, "dist", "server", "cli", "main.js"), "worker", "--install-dir", layout.root], { stdio: "ignore" });
    children.push(worker);
    for (let tries = 0; runningProcesses(layout).length === 0; tries++) {
      if (tries > 200) throw new Error("the fake worker did not record itself");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const lines: string[] = [];
    const rolled = await rollProcesses(layout, runningProcesses(layout), broken, { drainMs: 2000, healthMs: 5000, onProgress: (line) => lines.push(line) });
    expect(rolled.failure?.message).toContain("exited");
    expect(rolled.replaced).toEqual([]);
    const after = runningProcesses(layout);
    expect(after.map((process_) => `${process_.role} ${process_.version}`)).toEqual(["worker 0.1.0"]);
    expect(after[0]!.pid).not.toBe(worker.pid);
    children.push(...after.map((process_) => ({ pid: process_.pid }) as ChildProcess));
    expect(lines.some((line) => line.startsWith("started 0.1.0 as process"))).toBe(true);
  }, 30_000);
});
