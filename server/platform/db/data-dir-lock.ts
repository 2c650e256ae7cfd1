// The one-process lock of a data directory: `<dataDir>/loom.lock`, created exclusively and holding the owner's pid.
// PGlite admits one process per data directory; a second opener is refused by name, a dead owner's lock is taken over.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

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
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid written in a lock file, or undefined when there is none (or it holds no pid: a half-written file). */
export function readLockOwner(dataDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, LOCK_FILE_NAME), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** The pid of the live process holding the data dir, or undefined when none does (no lock, or a stale one). */
export function liveLockOwner(dataDir: string): number | undefined {
  const pid = readLockOwner(dataDir);
  return pid !== undefined && processIsAlive(pid) ? pid : undefined;
}

/**
 * Takes the lock of `dataDir` (which must exist) for this process.
 * NOTE: the file is created with O_EXCL, so of two openers exactly one wins; a lock whose pid is dead (or that holds
 * no pid) is removed and the exclusive create tried again, so a `kill -9` never locks a data dir out for good.
 * @throws DataDirLockedError when a live process (this one included) holds it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readLockOwner(dataDir);
      if (owner !== undefined && processIsAlive(owner)) throw new DataDirLockedError(dataDir, owner);
      // Stale (or empty: an owner killed between create and write). Another opener may be taking it over at the same
      // moment: whoever creates the file next wins, the other sees a live owner on its next turn.
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== "ENOENT") throw unlinkError;
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    return heldLock(path);
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
