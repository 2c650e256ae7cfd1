// The one-process lock of a data directory: `<dataDir>/loom.lock`, created exclusively and holding the owner's pid.
// PGlite admits one process per data directory; a second opener is refused by name, a dead owner's lock is taken over.
import { join } from "node:path";
import { acquireLockFile, lockOwnerIsLive, readLockFile } from "./lock-file.js";

/** The lock file's name inside a data directory. */
export const LOCK_FILE_NAME = "loom.lock";

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  override readonly name = "DataDirLockedError";
  constructor(
    readonly dataDir: string,
    /** The process holding the lock. */
    readonly pid: number,
  ) {
    super(
      `the data dir ${dataDir} is in use by process ${pid} (${join(dataDir, LOCK_FILE_NAME)}); PGlite admits one ` +
        `process per data dir: stop that process, or reach it through it (loom admin does this for a loom server)`,
    );
  }
}

/** A held lock; `release()` removes the file (once; later calls do nothing). */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export { processIsAlive } from "./lock-file.js";

/** The pid written in a lock file, or undefined when there is none (or it holds no pid: a half-written file). */
export function readLockOwner(dataDir: string): number | undefined {
  const text = readLockFile(join(dataDir, LOCK_FILE_NAME));
  return text === undefined ? undefined : parsePid(text);
}

function parsePid(text: string): number | undefined {
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** The pid of the live process holding the data dir, or undefined when none does (no lock, or a stale one). */
export function liveLockOwner(dataDir: string): number | undefined {
  const pid = readLockOwner(dataDir);
  return pid !== undefined && lockOwnerIsLive(join(dataDir, LOCK_FILE_NAME), pid) ? pid : undefined;
}

/**
 * Takes the lock of `dataDir` (which must exist) for this process: created whole and exclusively, so of two openers
 * exactly one wins; a dead owner's lock (its pid gone, or reused by a process started after the lock) or one that
 * holds no pid is taken over (lock-file.ts).
 * @throws DataDirLockedError when a live process (this one included) holds it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE_NAME);
  const release = acquireLockFile(path, `${process.pid}\n`, parsePid, (_text, owner) => new DataDirLockedError(dataDir, owner));
  return { path, release };
}
