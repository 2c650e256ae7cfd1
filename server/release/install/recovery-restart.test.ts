// Re-running `loom update rollback` or `apply` after a kill -9 between "stopping" and "started": the processes the
// journal lists (stopped by the cut-off update) start again from the version `current` names and are health-checked,
// a finished update is not done twice, and a recovery that cannot start them fails naming the command to run.
// Package roots are small stand-ins (testing/fake-package-root.ts) that record themselves and answer /health.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openFeed } from "../feed-source.js";
import { fakePackageRoot } from "../testing/fake-package-root.js";
import { type RecordedUpdateEvent, type UpdateRecords, applyUpdate } from "./apply-update.js";
import { writeInstallState } from "./install-state.js";
import { type InstallLayout, currentRoot, installLayout, pointCurrentAt } from "./layout.js";
import { stopProcess } from "./process-control.js";
import { type RunningProcess, runningProcesses } from "./running-processes.js";
import { rollbackUpdate } from "./rollback-update.js";
import { type UpdateJournal, readJournal, writeJournal } from "./update-journal.js";

const dir = mkdtempSync(join(tmpdir(), "loom-recovery-"));
let count = 0;

afterEach(async () => {
  for (const layout of layouts.splice(0)) await Promise.all(runningProcesses(layout).map((process_) => stopProcess(process_.pid, 0, 2000)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const layouts: InstallLayout[] = [];

/** An install with releases 0.1.0 and 0.2.0 (0.2.0 broken when asked), and the update records kept in memory. */
function install(options: { brokenTo?: boolean } = {}) {
  const root = join(dir, `case-${count++}`);
  const layout = installLayout(join(root, "install"));
  layouts.push(layout);
  const from = { version: "0.1.0", root: fakePackageRoot(root, "0.1.0") };
  const to = { version: "0.2.0", root: fakePackageRoot(root, "0.2.0", options.brokenTo) };
  const events: RecordedUpdateEvent[] = [];
  const records: UpdateRecords = {
    approval: async () => undefined,
    record: async (event) => { events.push({ ...event, id: events.length + 1, at: new Date().toISOString() }); },
    history: async (limit) => [...events].reverse().slice(0, limit),
  };
  return { layout, from, to, events, records };
}

/** Starts `root`'s CLI as a process of the install, waits for its record, then kills it with SIGKILL: what the journal lists. */
async function killedProcess(layout: InstallLayout, root: string): Promise<RunningProcess> {
  const child: ChildProcess = spawn(process.execPath, [join(root, "dist", "server", "cli", "main.js"), "worker", "--install-dir", layout.root], { stdio: "ignore" });
  let record: RunningProcess | undefined;
  for (let tries = 0; record === undefined; tries++) {
    if (tries > 200) throw new Error("the stand-in process did not record itself");
    await new Promise((resolve) => setTimeout(resolve, 25));
    record = runningProcesses(layout).find((process_) => process_.pid === child.pid);
  }
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));
  expect(runningProcesses(layout)).toEqual([]);
  return record;
}

const timing = (lines: string[]) => ({ drainMs: 1000, healthMs: 10_000, onProgress: (line: string) => lines.push(line) });

function journal(f: ReturnType<typeof install>, operation: UpdateJournal["operation"], phase: UpdateJournal["phase"], processes?: RunningProcess[]): UpdateJournal {
  const priorState = operation === "apply" ? null : { previous: f.to, current: f.from, backup: null };
  return { operation, from: f.from, to: f.to, phase, dataDir: null, backup: null, priorState, ...(processes === undefined ? {} : { processes }), startedAt: new Date().toISOString() };
}

const rollback = (f: ReturnType<typeof install>, lines: string[]) =>
  rollbackUpdate({ layout: f.layout, database: { databaseUrl: "postgres://unused" }, records: f.records, actor: "test", restoreData: false, ...timing(lines) });

const apply = (f: ReturnType<typeof install>, lines: string[]) =>
  applyUpdate({
    layout: f.layout, feed: openFeed(join(dir, "no-feed")), trusted: new Map(), allowDowngrade: false, rolling: false, database: { databaseUrl: "postgres://unused" },
    records: f.records, actor: "test", policy: "manual", fallbackRoot: f.from.root, ...timing(lines),
  });

describe("re-running rollback after a kill -9 between stopping and started", () => {
  it("cut off after the switch: starts what was running from the version returned to, healthy, and does not roll back again", async () => {
    const f = install();
    const worker = await killedProcess(f.layout, f.from.root);
    // The rollback from 0.1.0 to 0.2.0 had stopped the worker and switched `current` when it was killed.
    pointCurrentAt(f.layout, f.to.root);
    writeInstallState(f.layout, { previous: f.to, current: f.from, backup: null });
    writeJournal(f.layout, journal(f, "rollback", "switched", [worker]));
    const lines: string[] = [];
    const result = await rollback(f, lines);
    expect(result).toMatchObject({ from: { version: "0.1.0" }, to: { version: "0.2.0" } });
    expect(result.restarted).toHaveLength(1);
    const running = runningProcesses(f.layout);
    expect(running.map(({ pid, role, version, argv }) => ({ pid, role, version, argv }))).toEqual([{ pid: result.restarted[0], role: "worker", version: "0.2.0", argv: worker.argv }]);
    expect(lines.some((line) => line.includes("runs 0.2.0 and is healthy"))).toBe(true);
    expect(currentRoot(f.layout)).toBe(f.to.root);
    expect(readJournal(f.layout)).toBeUndefined();
    expect(f.events.map(({ action, outcome, toVersion }) => `${action} ${outcome} ${toVersion}`)).toEqual(["rollback ok 0.2.0"]);
    expect(f.events[0]!.detail).toContain(`processes started again: ${result.restarted[0]}`);
  }, 30_000);

  it("cut off while stopping: starts what was running on the version it left, then rolls back, moving it", async () => {
    const f = install();
    const worker = await killedProcess(f.layout, f.from.root);
    pointCurrentAt(f.layout, f.from.root);
    writeInstallState(f.layout, { previous: f.to, current: f.from, backup: null });
    writeJournal(f.layout, journal(f, "rollback", "stopping", [worker]));
    const lines: string[] = [];
    const result = await rollback(f, lines);
    expect(lines.some((line) => line.includes("runs 0.1.0 and is healthy"))).toBe(true);
    expect(result.restarted).toHaveLength(1);
    expect(runningProcesses(f.layout).map(({ pid, version }) => ({ pid, version }))).toEqual([{ pid: result.restarted[0], version: "0.2.0" }]);
    expect(currentRoot(f.layout)).toBe(f.to.root);
  }, 30_000);

  it("fails, naming the command to run, when what was running does not start again", async () => {
    const f = install({ brokenTo: true });
    const worker = await killedProcess(f.layout, f.from.root);
    pointCurrentAt(f.layout, f.to.root);
    writeInstallState(f.layout, { previous: f.to, current: f.from, backup: null });
    writeJournal(f.layout, journal(f, "rollback", "switched", [worker]));
    const failure = rollback(f, []);
    await expect(failure).rejects.toThrow("starting the processes it had stopped failed: the new process");
    await expect(failure).rejects.toThrow(`start them yourself (with their environment: LOOM_CLUSTER_TOKEN, LOOM_DATABASE_URL, ...), then run this command again:\n  cd ${worker.cwd} && ${worker.execPath} ${join(f.to.root, "dist", "server", "cli", "main.js")} worker --install-dir ${f.layout.root}`);
    expect(runningProcesses(f.layout)).toEqual([]);
    expect(f.events).toEqual([]);
  }, 30_000);

  it("fails when the journal (an older loom's) does not say what was running", async () => {
    const f = install();
    pointCurrentAt(f.layout, f.to.root);
    writeJournal(f.layout, journal(f, "rollback", "switched"));
    await expect(rollback(f, [])).rejects.toThrow("does not say which loom processes were running, so none was started: start them from");
  });
});

describe("re-running apply after a kill -9 between stopping and started", () => {
  it("cut off after the switch: starts what was running from the new version, healthy, and records the apply as finished", async () => {
    const f = install();
    const worker = await killedProcess(f.layout, f.from.root);
    pointCurrentAt(f.layout, f.to.root);
    writeJournal(f.layout, journal(f, "apply", "switched", [worker]));
    const lines: string[] = [];
    const result = await apply(f, lines);
    expect(result).toMatchObject({ from: { version: "0.1.0" }, to: { version: "0.2.0" }, migrations: [] });
    expect(result.restarted).toHaveLength(1);
    expect(runningProcesses(f.layout).map(({ pid, version }) => ({ pid, version }))).toEqual([{ pid: result.restarted[0], version: "0.2.0" }]);
    expect(f.events.map(({ action, outcome, toVersion }) => `${action} ${outcome} ${toVersion}`)).toEqual(["apply ok 0.2.0"]);
  }, 30_000);

  it("cut off while stopping: starts what was running on the old version before trying the apply again", async () => {
    const f = install();
    const worker = await killedProcess(f.layout, f.from.root);
    pointCurrentAt(f.layout, f.from.root);
    writeJournal(f.layout, journal(f, "apply", "stopping", [worker]));
    const lines: string[] = [];
    // The apply itself is then refused (this test's feed is empty), but the old version serves again.
    await expect(apply(f, lines)).rejects.toThrow("no-feed");
    expect(runningProcesses(f.layout).map(({ role, version }) => `${role} ${version}`)).toEqual(["worker 0.1.0"]);
    expect(lines[0]).toContain("an interrupted apply from 0.1.0 to 0.2.0 (cut off while stopping) was recovered: the data needed no change; current names 0.1.0");
  }, 30_000);
});
