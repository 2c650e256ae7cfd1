// The one-process lock of a data directory: `<dataDir>/loom.lock`, created exclusively and holding the owner's pid.
// PGlite admits one process per data directory; a second opener is refused by name, a dead owner's lock is taken over.
import { readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { createLockFile, lockOwnerIsLive, readLockFile, removeStaleLock } from "./lock-file.js";

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
 * Takes the lock of `dataDir` (which must exist) for this process.
 * NOTE: the file is created whole and exclusively (lock-file.ts), so of two openers exactly one wins; a lock whose
 * owner is gone (its pid dead, or reused by a process started after the lock) or that holds no pid is removed, by one
 * of the openers that found it, and the create tried again, so a `kill -9` never locks a data dir out for good.
 * @throws DataDirLockedError when a live process (this one included) holds it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 100; attempt++) {
    if (createLockFile(path, `${process.pid}\n`)) return heldLock(path);
    const text = readLockFile(path);
    if (text === undefined) continue; // removed meanwhile
    const owner = parsePid(text);
    if (owner !== undefined && lockOwnerIsLive(path, owner)) throw new DataDirLockedError(dataDir, owner);
    removeStaleLock(path, text);
  }
  const owner = readLockOwner(dataDir);
  throw new DataDirLockedError(dataDir, owner ?? -1);
}

function heldLock(path: string): DataDirLock {
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.off("exit", release);
    try {
      // Only our own lock: a lock taken over after this process was presumed dead is not ours to remove.
      if (readFileSync(path, "utf8").trim() === String(process.pid)) unlinkSync(path);
    } catch {
      // Already gone.
    }
  };
  // A process that exits without closing the database (an uncaught error, process.exit) leaves no lock behind.
  process.on("exit", release);
  return { path, release };
}
