// `loom update apply`: installs an approved, verified release beside the running one and moves the install to it.
// In order, holding the install's update lock: recover a cut-off update; check the policy, the signature and every
// hash, the version, the approval and that the switch could be undone (refusals change nothing); unpack; write the
// journal; stop the processes; back up the embedded database; run the new release's migrations; switch `current`;
// start the processes from the new release and wait for /health. If a migration fails or the new version is not
// healthy in time, the old version is put back (its data restored from the backup) and started again. See
// update-journal.ts for what a crash at any step leaves.
import type { KeyObject } from "node:crypto";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { liveLockOwner, processIsAlive } from "../../platform/db/data-dir-lock.js";
import type { NewUpdateEvent } from "../../platform/store/update-ledger.js";
import { fetchVerifiedRelease, readFeedIndex } from "../check-updates.js";
import type { FeedSource } from "../feed-source.js";
import type { ReleaseManifest } from "../manifest.js";
import { compareSemVer } from "../semver.js";
import { type MaintenanceWindow, type UpdatePolicy, policyRefusal } from "../update-policy.js";
import { backUpData, restoreData } from "./data-backup.js";
import { readInstallState, removeInstallState, writeInstallState } from "./install-state.js";
import { type InstallLayout, currentRoot, pointCurrentAt, releaseRoot } from "./layout.js";
import { runMigrations } from "./run-migrations.js";
import { type RunningProcess, runningProcesses } from "./running-processes.js";
import { type SwitchTiming, processesToStart, rollProcesses, startAll, stopAll } from "./switch-processes.js";
import { unpackRelease } from "./unpack-release.js";
import { recoverAndRestart } from "./restart-after-recovery.js";
import { type InstalledVersion, clearJournal, writeJournal } from "./update-journal.js";
import { UpdateInProgressError, acquireUpdateLock } from "./update-lock.js";
import { installedVersion, readBuiltSchema, sameSchema } from "./installed-version.js";

/** The platform database's update records, wherever it is reached (directly, or through the running server). */
export interface UpdateRecords {
  /** Who approved `version`'s package with this SHA-256, if anyone. */
  approval(version: string, packageSha256: string): Promise<{ approvedBy: string; approvedAt: string } | undefined>;
  record(event: NewUpdateEvent): Promise<void>;
  /** The newest audit records, newest first. */
  history(limit: number): Promise<RecordedUpdateEvent[]>;
}

/** An audit record as read back. */
export type RecordedUpdateEvent = NewUpdateEvent & { id: number; at: string };

/** Where the platform's data is: the embedded database's data dir, or PostgreSQL. */
export type UpdateDatabase = { dataDir: string } | { databaseUrl: string };

/** What apply needs. */
export interface ApplyOptions extends SwitchTiming {
  layout: InstallLayout;
  feed: FeedSource;
  trusted: ReadonlyMap<string, KeyObject>;
  /** The release to apply (default: the newest approved release newer than the current one). */
  version?: string;
  allowDowngrade: boolean;
  /** One process at a time (PostgreSQL only): the deployment keeps serving. */
  rolling: boolean;
  database: UpdateDatabase;
  records: UpdateRecords;
  actor: string;
  policy: UpdatePolicy;
  window?: MaintenanceWindow;
  /** The package loom runs from when the install has no `current` yet and no process recorded (this CLI's). */
  fallbackRoot: string;
  now?: () => Date;
}

/** How an apply ended. */
export interface ApplyResult {
  from: InstalledVersion;
  to: InstalledVersion;
  /** The processes now running `to`, by pid. */
  restarted: number[];
  /** The backup taken before the migrations, if one was. */
  backup: string | null;
  /** The migrations the new release applied. */
  migrations: number[];
}

/** A refusal before anything changed (the policy, the signature, the version, the approval). */
export class UpdateRefusedError extends Error {
  override readonly name = "UpdateRefusedError";
}

/** The update failed and the install was put back on the old version (data included). */
export class UpdateRolledBackError extends Error {
  override readonly name = "UpdateRolledBackError";
}

/** Applies a release (see the file's comment). @throws UpdateRefusedError, UpdateRolledBackError, or Error. */
export async function applyUpdate(options: ApplyOptions): Promise<ApplyResult> {
  return underUpdateLock(options.layout, options.database, options.records, { action: "apply", fromVersion: null, toVersion: options.version ?? null, actor: options.actor }, () => applyLocked(options));
}

/**
 * Runs `body` holding the install's update lock (update-lock.ts).
 * @throws UpdateRefusedError when another live update holds it: recorded as `refused` on PostgreSQL; not on the
 * embedded database, which the other update may have stopped its server to copy or migrate (opening it here could
 * make that update fail).
 */
export async function underUpdateLock<T>(layout: InstallLayout, database: UpdateDatabase, records: UpdateRecords, refusal: Omit<NewUpdateEvent, "outcome" | "detail">, body: () => Promise<T>): Promise<T> {
  let release: () => void;
  try {
    release = acquireUpdateLock(layout, refusal.action);
  } catch (error) {
    if (!(error instanceof UpdateInProgressError)) throw error;
    if ("databaseUrl" in database) await records.record({ ...refusal, outcome: "refused", detail: error.message }).catch(() => undefined);
    throw new UpdateRefusedError(error.message);
  }
  try {
    return await body();
  } finally {
    release();
  }
}

async function applyLocked(options: ApplyOptions): Promise<ApplyResult> {
  const { layout, onProgress } = options;
  const recovery = await recoverAndRestart(layout, options);
  // An apply of this release cut off after its switch is done once its processes run again: not applied twice.
  if (recovery !== undefined && recovery.recovered.finished && recovery.recovered.journal.operation === "apply" && (options.version === undefined || options.version === recovery.recovered.journal.to.version)) {
    return finishRecoveredApply(options, recovery);
  }
  const processes = runningProcesses(layout);
  const from = installedVersion(currentRoot(layout) ?? processes[0]?.root ?? options.fallbackRoot);
  const event = (outcome: NewUpdateEvent["outcome"], toVersion: string | null, detail: string): NewUpdateEvent => ({ action: "apply", outcome, fromVersion: from.version, toVersion, actor: options.actor, detail });
  let target: Awaited<ReturnType<typeof chooseRelease>>;
  try {
    const refusal = policyRefusal(options.policy, options.window, (options.now ?? (() => new Date()))());
    if (refusal !== undefined) throw new UpdateRefusedError(refusal);
    if (options.rolling && !("databaseUrl" in options.database)) throw new UpdateRefusedError("--rolling needs the platform on PostgreSQL (--database-url): the embedded database admits one process, so old and new cannot run side by side");
    target = await chooseRelease(options, from);
    await refuseUnsafeSwitch(options, from, target.verified.manifest, processes);
  } catch (error) {
    await options.records.record(event("refused", options.version ?? null, (error as Error).message)).catch(() => undefined);
    throw error instanceof UpdateRefusedError ? error : new UpdateRefusedError((error as Error).message);
  }
  const { verified, approval } = target;
  const to: InstalledVersion = { version: verified.manifest.version, root: releaseRoot(layout, verified.manifest.version) };
  onProgress(`applying ${to.version} over ${from.version}: signed by key ${verified.signedBy}, package SHA-256 ${verified.manifest.package.sha256} verified, approved by ${approval.approvedBy} at ${approval.approvedAt}`);
  try {
    await unpackRelease(verified.tgz, verified.manifest, to.root, modulesOf(from.root), options.feed.describe(verified.release.files.package));
  } catch (error) {
    await options.records.record(event("refused", to.version, (error as Error).message)).catch(() => undefined);
    throw new UpdateRefusedError((error as Error).message);
  }
  onProgress(`unpacked ${to.version} into ${to.root} (${verified.manifest.files.length} files, each matching the manifest)`);
  // From here the install has a `current`, so that a crash leaves a version to start.
  if (currentRoot(layout) === undefined) pointCurrentAt(layout, from.root);
  let result: ApplyResult;
  try {
    result = options.rolling ? await applyRolling(options, from, to, processes) : await applyInPlace(options, from, to, processes);
  } catch (error) {
    // Rolled back (recorded as such), or failed on the way back: recorded here, the journal kept for recovery.
    if (!(error instanceof UpdateRolledBackError)) await options.records.record(event("failed", to.version, (error as Error).message)).catch(() => undefined);
    throw error;
  }
  clearJournal(layout);
  const detail = `package SHA-256 ${verified.manifest.package.sha256}; migrations ${result.migrations.join(", ") || "none"}; backup ${result.backup ?? "none"}; processes ${result.restarted.join(", ") || "none running"}`;
  await options.records.record(event("ok", to.version, detail)).catch((error: Error) => onProgress(`warning: the apply succeeded but its audit record was not written: ${error.message}`));
  return result;
}

/** The result of an apply that recovery finished (the release was switched to before the crash). */
async function finishRecoveredApply(options: ApplyOptions, recovery: NonNullable<Awaited<ReturnType<typeof recoverAndRestart>>>): Promise<ApplyResult> {
  const { journal, said } = recovery.recovered;
  const restarted = recovery.restarted.map((process_) => process_.pid);
  const detail = `${said}; processes started again: ${restarted.join(", ") || "none (none had stopped)"}`;
  await options.records.record({ action: "apply", outcome: "ok", fromVersion: journal.from.version, toVersion: journal.to.version, actor: options.actor, detail })
    .catch((error: Error) => options.onProgress(`warning: the apply was finished but its audit record was not written: ${error.message}`));
  return { from: journal.from, to: journal.to, restarted, backup: journal.backup, migrations: [] };
}

/**
 * Refuses a switch that could not be undone or would copy a database in use: on PostgreSQL (no backup is taken) a
 * new migration that does not keep the old version working; on the embedded database a data dir held by a process
 * the install does not record (apply could neither stop it nor back up its data safely).
 */
async function refuseUnsafeSwitch(options: ApplyOptions, from: InstalledVersion, manifest: ReleaseManifest, processes: readonly RunningProcess[]): Promise<void> {
  const { database } = options;
  if ("databaseUrl" in database) {
    const fromSchema = await readBuiltSchema(from.root);
    const breaking = manifest.schema.migrations.find((migration) => migration.version > fromSchema.version && migration.keepsPrevious !== true);
    if (breaking !== undefined) {
      throw new UpdateRefusedError(`${manifest.version}'s migration ${breaking.version} (${breaking.description}) does not keep ${from.version} working: on PostgreSQL loom takes no backup to go back to, so every migration must keep the previous version running (expand now, contract in a later release; server/release/README.md)`);
    }
    return;
  }
  const holder = liveLockOwner(database.dataDir);
  if (holder !== undefined && holder !== process.pid && !processes.some((process_) => process_.pid === holder)) {
    throw new UpdateRefusedError(`the embedded database in ${database.dataDir} is open in process ${holder}, which this install (${options.layout.root}) does not record: start it with --install-dir ${options.layout.root} (or stop it) before applying`);
  }
}

/** The release to apply, verified and approved. @throws UpdateRefusedError naming the version, file or key. */
async function chooseRelease(options: ApplyOptions, from: InstalledVersion) {
  const index = await readFeedIndex(options.feed);
  let entry = options.version === undefined ? undefined : index.releases.find((release) => release.version === options.version);
  if (options.version !== undefined && entry === undefined) throw new UpdateRefusedError(`the feed ${options.feed.location} has no release ${options.version} (it has ${index.releases.map((release) => release.version).join(", ") || "none"})`);
  if (entry === undefined) {
    // The newest approved release newer than the current one; what could not be verified is named, never skipped silently.
    const skipped: string[] = [];
    for (const candidate of index.releases.filter((release) => compareSemVer(release.version, from.version) > 0).sort((a, b) => compareSemVer(b.version, a.version))) {
      let verified: Awaited<ReturnType<typeof fetchVerifiedRelease>>;
      try {
        verified = await fetchVerifiedRelease(options.feed, candidate, options.trusted);
      } catch (error) {
        skipped.push(`${candidate.version}: ${(error as Error).message}`);
        continue;
      }
      const approval = await options.records.approval(candidate.version, verified.manifest.package.sha256);
      if (approval === undefined) continue;
      for (const line of skipped) options.onProgress(`warning: skipped newer release ${line}`);
      return { verified, approval };
    }
    throw new UpdateRefusedError(`no approved release newer than ${from.version} in ${options.feed.location}: approve one with loom update approve VERSION${skipped.length === 0 ? "" : `; these did not verify: ${skipped.join("; ")}`}`);
  }
  const order = compareSemVer(entry.version, from.version);
  if (order === 0) throw new UpdateRefusedError(`${entry.version} is the version installed already`);
  if (order < 0 && !options.allowDowngrade) throw new UpdateRefusedError(`${entry.version} is older than the installed ${from.version}: pass --allow-downgrade to install an older release (its migrations cannot undo the newer schema: see loom update rollback --restore-data)`);
  const verified = await fetchVerifiedRelease(options.feed, entry, options.trusted);
  const approval = await options.records.approval(entry.version, verified.manifest.package.sha256);
  if (approval === undefined) throw new UpdateRefusedError(`release ${entry.version} (package SHA-256 ${verified.manifest.package.sha256}) is not approved: run loom update approve ${entry.version}`);
  return { verified, approval };
}

/** Stop everything, back up, migrate, switch, start; undo all of it when the new version fails. */
async function applyInPlace(options: ApplyOptions, from: InstalledVersion, to: InstalledVersion, processes: ReturnType<typeof runningProcesses>): Promise<ApplyResult> {
  const { layout, onProgress, database } = options;
  const dataDir = "dataDir" in database ? database.dataDir : null;
  const priorState = readInstallState(layout) ?? null;
  const journal = { operation: "apply" as const, from, to, dataDir, backup: null as string | null, priorState, processes: [...processes], startedAt: new Date().toISOString() };
  writeJournal(layout, { ...journal, phase: "stopping" });
  const toStart = processesToStart(processes);
  try {
    await stopAll(processes, options);
    if (dataDir !== null) {
      journal.backup = await backUpData(dataDir, join(layout.backups, `${new Date().toISOString().replace(/[:.]/g, "-")}-${from.version}-to-${to.version}`));
      onProgress(`backed up the embedded database to ${journal.backup}`);
    }
    writeJournal(layout, { ...journal, phase: "migrating" });
    const migrations = (await sameSchema(from.root, to.root)) ? [] : await runMigrations(to.root, database);
    onProgress(`migrations applied by ${to.version}: ${migrations.join(", ") || "none (the schema was current)"}`);
    pointCurrentAt(layout, to.root);
    writeJournal(layout, { ...journal, phase: "switched" });
    writeInstallState(layout, { previous: from, current: to, backup: journal.backup });
    onProgress(`current -> ${to.root}`);
    const started = await startAll(layout, toStart, to, options);
    return { from, to, restarted: started.map((process_) => process_.pid), backup: journal.backup, migrations };
  } catch (error) {
    const reason = (error as Error).message;
    onProgress(`${to.version} failed: ${reason}`);
    onProgress(`rolling back to ${from.version}`);
    // The journal says "restoring" before `current` moves back: a crash in between then leaves the new version with
    // its migrated data (current still names it), or the old one with the backup restored, never the old on new data.
    writeJournal(layout, { ...journal, phase: "restoring" });
    try {
      pointCurrentAt(layout, from.root);
      if (priorState === null) removeInstallState(layout);
      else writeInstallState(layout, priorState);
      if (journal.backup !== null && dataDir !== null) {
        const replaced = await restoreData(dataDir, journal.backup);
        onProgress(`restored the embedded database from ${journal.backup}${replaced === undefined ? "" : ` (the migrated one is kept at ${replaced})`}`);
      }
    } catch (failure) {
      throw new Error(`the update to ${to.version} failed (${reason}) and putting ${from.version} back failed too: ${(failure as Error).message}; the journal ${layout.journal} is kept: the next loom update or loom serve with this install finishes the rollback`);
    }
    clearJournal(layout);
    // Only those that stopped: a process whose stop failed (another user's) still runs its old version.
    const stopped = toStart.filter(({ like }) => !processIsAlive(like.pid));
    let again = toStart.length === 0 ? "no process was running" : "its processes never stopped";
    if (stopped.length > 0) {
      const restarted = await startAll(layout, stopped, from, options).then((list) => list.map((process_) => process_.pid).join(", "), (failure: Error) => `could not start it again: ${failure.message}`);
      again = `processes ${restarted}`;
    }
    const message = `the update to ${to.version} was rolled back: ${reason}; ${from.version} runs again (${again})${journal.backup === null ? "" : `, on its data as backed up at ${journal.backup}`}`;
    await options.records.record({ action: "apply", outcome: "rolled-back", fromVersion: from.version, toVersion: to.version, actor: options.actor, detail: message }).catch(() => undefined);
    throw new UpdateRolledBackError(message);
  }
}

/**
 * PostgreSQL: migrate while the old processes serve (every new migration must keep the old version working), then
 * move the processes one at a time; on a failure, move the ones already moved back.
 */
async function applyRolling(options: ApplyOptions, from: InstalledVersion, to: InstalledVersion, processes: ReturnType<typeof runningProcesses>): Promise<ApplyResult> {
  const { layout, onProgress, database } = options;
  const priorState = readInstallState(layout) ?? null;
  const journal = { operation: "apply" as const, from, to, dataDir: null, backup: null, priorState, processes: [...processes], startedAt: new Date().toISOString() };
  writeJournal(layout, { ...journal, phase: "migrating" });
  let migrations: number[];
  try {
    migrations = (await sameSchema(from.root, to.root)) ? [] : await runMigrations(to.root, database);
  } catch (error) {
    // The migrations run in one transaction: nothing changed, and the old processes never stopped.
    clearJournal(layout);
    const message = `the rolling update to ${to.version} stopped before any process moved: ${(error as Error).message}; ${from.version} kept serving`;
    await options.records.record({ action: "apply", outcome: "rolled-back", fromVersion: from.version, toVersion: to.version, actor: options.actor, detail: message }).catch(() => undefined);
    throw new UpdateRolledBackError(message);
  }
  onProgress(`migrations applied by ${to.version} while ${from.version} serves: ${migrations.join(", ") || "none"}`);
  pointCurrentAt(layout, to.root);
  writeJournal(layout, { ...journal, phase: "switched" });
  writeInstallState(layout, { previous: from, current: to, backup: null });
  const rolled = await rollProcesses(layout, processes, to, options);
  if (rolled.failure === undefined) return { from, to, restarted: runningProcesses(layout).filter((process_) => process_.version === to.version).map((process_) => process_.pid), backup: null, migrations };
  onProgress(`${to.version} failed: ${rolled.failure.message}; moving the processes already updated back to ${from.version}`);
  pointCurrentAt(layout, from.root);
  if (priorState === null) removeInstallState(layout);
  else writeInstallState(layout, priorState);
  const back = await rollProcesses(layout, runningProcesses(layout).filter((process_) => process_.version === to.version), from, options);
  if (back.failure !== undefined) {
    // Recorded as failed by the caller; the journal stays, and `loom update status` shows which process runs what.
    throw new Error(`the rolling update to ${to.version} failed (${rolled.failure.message}) and moving the processes back to ${from.version} failed too: ${back.failure.message}; current names ${from.version}: see loom update status`);
  }
  clearJournal(layout);
  const message = `the rolling update to ${to.version} was rolled back: ${rolled.failure.message}; ${to.version}'s migrations (${migrations.join(", ") || "none"}) stay: they keep ${from.version} working`;
  await options.records.record({ action: "apply", outcome: "rolled-back", fromVersion: from.version, toVersion: to.version, actor: options.actor, detail: message }).catch(() => undefined);
  throw new UpdateRolledBackError(message);
}

/** The dependencies the install's releases run on: those of the package loom was first installed from. */
function modulesOf(root: string): string {
  return realpathSync(join(root, "node_modules"));
}
