// `loom update rollback`: back to the version before the current one (state.json). Without --restore-data the
// previous version runs on the current data, which only works when every migration since kept it working; with it
// (and the operator's confirmation) the data goes back to the backup taken before those migrations, and what was
// written since is set aside, not deleted.
import { MAX_UPDATE_HISTORY, type NewUpdateEvent } from "../../platform/store/update-ledger.js";
import { type RecordedUpdateEvent, UpdateRefusedError, type UpdateDatabase, type UpdateRecords, underUpdateLock } from "./apply-update.js";
import { backupExists, restoreData } from "./data-backup.js";
import { type InstallState, readInstallState, writeInstallState } from "./install-state.js";
import { readBuiltSchema } from "./installed-version.js";
import { type InstallLayout, pointCurrentAt } from "./layout.js";
import { runningProcesses } from "./running-processes.js";
import { type SwitchTiming, processesToStart, startAll, stopAll } from "./switch-processes.js";
import { recoverAndRestart } from "./restart-after-recovery.js";
import { type InstalledVersion, clearJournal, writeJournal } from "./update-journal.js";

/** What rollback needs. */
export interface RollbackOptions extends SwitchTiming {
  layout: InstallLayout;
  database: UpdateDatabase;
  records: UpdateRecords;
  actor: string;
  /** Put the data back as it was before the current version's migrations (the caller has the operator's yes). */
  restoreData: boolean;
}

/** How a rollback ended. */
export interface RollbackResult {
  from: InstalledVersion;
  to: InstalledVersion;
  restarted: number[];
  /** Where the data replaced by the backup was kept. */
  replacedData: string | null;
}

/** Rolls back (see the file's comment). @throws UpdateRefusedError before any change, Error after. */
export async function rollbackUpdate(options: RollbackOptions): Promise<RollbackResult> {
  return underUpdateLock(options.layout, options.database, options.records, { action: "rollback", fromVersion: null, toVersion: null, actor: options.actor }, () => rollbackLocked(options));
}

async function rollbackLocked(options: RollbackOptions): Promise<RollbackResult> {
  const { layout, onProgress } = options;
  const recovery = await recoverAndRestart(layout, options);
  // A rollback cut off after its switch is done once its processes run again: rolling back again would undo it.
  if (recovery !== undefined && recovery.recovered.finished && recovery.recovered.journal.operation === "rollback") {
    const { journal, said } = recovery.recovered;
    const restarted = recovery.restarted.map((process_) => process_.pid);
    const detail = `${said}; processes started again: ${restarted.join(", ") || "none (none had stopped)"}`;
    await options.records.record({ action: "rollback", outcome: "ok", fromVersion: journal.from.version, toVersion: journal.to.version, actor: options.actor, detail })
      .catch((error: Error) => onProgress(`warning: the rollback was finished but its audit record was not written: ${error.message}`));
    return { from: journal.from, to: journal.to, restarted, replacedData: null };
  }
  const state = readInstallState(layout);
  const event = (outcome: NewUpdateEvent["outcome"], detail: string): NewUpdateEvent => ({ action: "rollback", outcome, fromVersion: state?.current.version ?? null, toVersion: state?.previous.version ?? null, actor: options.actor, detail });
  try {
    if (state === undefined) throw new UpdateRefusedError(`nothing to roll back to: ${layout.state} is missing (no release was applied with this install folder)`);
    await refusal(options, state);
  } catch (error) {
    await options.records.record(event("refused", (error as Error).message)).catch(() => undefined);
    throw error;
  }
  const { previous: to, current: from } = state!;
  const dataDir = "dataDir" in options.database ? options.database.dataDir : null;
  const backup = options.restoreData ? state!.backup : null;
  const processes = runningProcesses(layout);
  const journal = { operation: "rollback" as const, from, to, dataDir, backup, priorState: state!, processes, startedAt: new Date().toISOString() };
  // A restore takes the audit trail back too: what was recorded since is read now and recorded again after.
  const trail = backup === null ? [] : await options.records.history(MAX_UPDATE_HISTORY).catch((error: Error) => {
    onProgress(`warning: the audit records could not be read before the restore, so those written since the backup will be missing: ${error.message}`);
    return [];
  });
  writeJournal(layout, { ...journal, phase: "stopping" });
  const toStart = processesToStart(processes);
  let replacedData: string | null = null;
  try {
    await stopAll(processes, options);
    // With a restore, the journal says so before `current` moves: a crash after the move then finishes the restore.
    const restoring = backup !== null && dataDir !== null;
    writeJournal(layout, { ...journal, phase: restoring ? "restoring" : "switched" });
    pointCurrentAt(layout, to.root);
    writeInstallState(layout, { previous: from, current: to, backup: null });
    onProgress(`current -> ${to.root}`);
    if (restoring) {
      replacedData = (await restoreData(dataDir, backup)) ?? null;
      onProgress(`restored the embedded database from ${backup}; the data it replaced is kept at ${replacedData}`);
    }
  } catch (error) {
    const message = `the rollback to ${to.version} failed: ${(error as Error).message}; the journal ${layout.journal} is kept: loom update rollback (or loom serve with this install) finishes it`;
    await options.records.record(event("failed", message)).catch(() => undefined);
    throw new Error(message);
  }
  clearJournal(layout);
  let restarted: number[] = [];
  try {
    restarted = (await startAll(layout, toStart, to, options)).map((process_) => process_.pid);
  } catch (error) {
    const message = `rolled back to ${to.version}, but it did not start: ${(error as Error).message}`;
    await options.records.record(event("failed", message)).catch(() => undefined);
    throw new Error(message);
  }
  if (trail.length > 0) await recordAgain(options.records, trail).catch((error: Error) => onProgress(`warning: the audit records written since the backup were not recorded again: ${error.message}`));
  const detail = `${backup === null ? "data kept" : `data restored from ${backup} (replaced data kept at ${replacedData})`}; processes ${restarted.join(", ") || "none running"}`;
  await options.records.record(event("ok", detail)).catch((error: Error) => onProgress(`warning: the rollback succeeded but its audit record was not written: ${error.message}`));
  return { from, to, restarted, replacedData };
}

/** Why the rollback cannot be done as asked, or nothing. */
async function refusal(options: RollbackOptions, state: InstallState): Promise<void> {
  const { previous, current } = state;
  if (options.restoreData) {
    if (!("dataDir" in options.database)) throw new UpdateRefusedError("--restore-data restores the embedded database's backup; on PostgreSQL loom takes none (restore your own PostgreSQL backup)");
    if (state.backup === null || !(await backupExists(state.backup))) throw new UpdateRefusedError(`--restore-data: no backup was taken when ${current.version} was applied, or it is gone (${state.backup ?? "none recorded"})`);
    return;
  }
  const previousSchema = await readBuiltSchema(previous.root);
  const breaking = (await readBuiltSchema(current.root)).migrations.find((migration) => migration.version > previousSchema.version && !migration.keepsPrevious);
  if (breaking !== undefined) throw new UpdateRefusedError(`${previous.version} cannot run on the data as ${current.version} migrated it (migration ${breaking.version}, ${breaking.description}, does not keep it working): roll back with --restore-data`);
}

/** Records again, oldest first, the audit records of `trail` the restored database lacks. */
async function recordAgain(records: UpdateRecords, trail: readonly RecordedUpdateEvent[]): Promise<void> {
  const restoredNewest = Math.max(0, ...(await records.history(1)).map((event) => event.id));
  for (const event of [...trail].reverse()) {
    if (event.id <= restoredNewest) continue;
    const { action, outcome, fromVersion, toVersion, actor, detail } = event;
    await records.record({ action, outcome, fromVersion, toVersion, actor, detail: `${detail} (recorded at ${event.at}, again after the data restore)` });
  }
}
