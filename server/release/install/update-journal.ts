// The journal of an update under way: written before the first change and removed after the last, so that a loom
// starting after a crash (kill -9 of `loom update apply`, a power cut) finishes or undoes what was cut off. Recovery
// never moves `current`: it makes the data match the version `current` names, which is therefore always one that
// can start (the old version with its data as before, or the new one with its migrated data).
import { isAbsolute, resolve } from "node:path";
import { readJsonFile, removeFileDurably, writeFileDurably } from "./durable-files.js";
import { restoreData } from "./data-backup.js";
import { type InstallState, removeInstallState, writeInstallState } from "./install-state.js";
import { type InstallLayout, currentRoot } from "./layout.js";
import type { RunningProcess } from "./running-processes.js";

/** A version and the package root it runs from. */
export interface InstalledVersion {
  version: string;
  root: string;
}

/**
 * Where an update stands; each phase is written before the step it names. apply: `stopping` (the old processes
 * stop), `migrating` (the backup is complete; the new release's migrations may run), `switched` (`current` names the
 * new release), `restoring` (rolling back by itself: `current` may still name the new release, or the old one again
 * with the backup being restored). rollback: `stopping`, then `switched` (`current` moves to the version returned
 * to) or, with --restore-data, `restoring` (`current` moves, then the data is restored).
 */
export interface UpdateJournal {
  operation: "apply" | "rollback";
  from: InstalledVersion;
  to: InstalledVersion;
  phase: "stopping" | "migrating" | "switched" | "restoring";
  /** The embedded database's folder, absolute (null on PostgreSQL, whose data loom does not copy). */
  dataDir: string | null;
  /** The backup taken before the migrations, absolute (null when none was). */
  backup: string | null;
  /**
   * The loom processes running when the update began, as they recorded themselves: what recovery starts again when
   * a crash left them stopped. Absent in journals written by older looms, which did not record them.
   */
  processes?: RunningProcess[];
  /** state.json as it was before (null: there was none), put back when the update is undone. */
  priorState: InstallState | null;
  startedAt: string;
}

/** Writes the journal durably. */
export function writeJournal(layout: InstallLayout, journal: UpdateJournal): void {
  writeFileDurably(layout.journal, `${JSON.stringify(journal, null, 2)}\n`);
}

/** The journal, or undefined when no update is under way. */
export function readJournal(layout: InstallLayout): UpdateJournal | undefined {
  const value = readJsonFile(layout.journal) as UpdateJournal | undefined;
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || !["apply", "rollback"].includes(value.operation) || typeof value.from?.root !== "string" || typeof value.to?.root !== "string") {
    throw new Error(`${layout.journal}: not an update journal; look at it, and remove it once the install is as it should be`);
  }
  return value;
}

/** Removes the journal: the update is finished (or undone). */
export function clearJournal(layout: InstallLayout): void {
  removeFileDurably(layout.journal);
}

/** What recovery did. */
export interface RecoveredUpdate {
  /** What was done, in words. */
  said: string;
  /** The journal it found (and removed). */
  journal: UpdateJournal;
  /** Whether `current` names the version the update went to: the update is done (else it is undone). */
  finished: boolean;
}

/**
 * Finishes or undoes an update that was cut off, so that the version `current` names starts on data it understands.
 * Call it holding the install's update lock (update-lock.ts): a journal whose update still runs is not cut off.
 * It starts no process: the loom that calls it at its start is one; `loom update` starts the rest
 * (restart-after-recovery.ts).
 * @returns what was done, or undefined when no update was under way.
 * @throws Error when the data must be restored but the journal names it by a relative path (written by an older loom
 * from a working folder it did not record): restoring there could replace some other data dir.
 */
export async function recoverInterruptedUpdate(layout: InstallLayout): Promise<RecoveredUpdate | undefined> {
  const journal = readJournal(layout);
  if (journal === undefined) return undefined;
  const current = currentRoot(layout);
  const names = (version: InstalledVersion) => current !== undefined && resolve(current) === resolve(version.root);
  const { from, to } = journal;
  // The data fits `current` unless its migrations (apply) or its restore (rollback) may have been cut off.
  const restore =
    journal.backup !== null && journal.dataDir !== null &&
    ((journal.operation === "apply" && names(from) && (journal.phase === "migrating" || journal.phase === "restoring")) ||
      (journal.operation === "rollback" && names(to) && journal.phase === "restoring"));
  let done: string;
  if (restore) {
    for (const [what, path] of [["data dir", journal.dataDir!], ["backup", journal.backup!]] as const) {
      if (!isAbsolute(path)) {
        throw new Error(`${layout.journal} names the ${what} as "${path}", relative to a working folder it does not record, so the data is not restored (it could replace another data dir): put the absolute path in the journal, then start loom again`);
      }
    }
    await restoreData(journal.dataDir!, journal.backup!);
    done = `restored the data backed up before the update (${journal.backup})`;
  } else {
    done = "the data needed no change";
  }
  const serving = names(to) ? to.version : names(from) ? from.version : "the version it names";
  // state.json follows `current`: the update done (rollback then returns to `from`), or undone.
  if (names(to)) writeInstallState(layout, { previous: from, current: to, backup: journal.operation === "apply" ? journal.backup : null });
  else if (journal.priorState === null) removeInstallState(layout);
  else writeInstallState(layout, journal.priorState);
  clearJournal(layout);
  const said = `an interrupted ${journal.operation} from ${from.version} to ${to.version} (cut off while ${journal.phase}) was recovered: ${done}; current names ${serving}`;
  return { said, journal, finished: names(to) };
}
