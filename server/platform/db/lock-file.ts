// What the one-process lock files (a data dir's `loom.lock`, an install's `update.lock`) share: a lock is created
// whole (written beside its place, then linked there: link() fails when the lock exists, so no reader ever sees a
// lock without its owner); its owner is live only while its pid runs a process started before the lock was made
// (a pid reused after a reboot or a kill -9 is not the owner); and of the processes that find the same stale lock,
// one removes it, and only while it is still that stale lock, so that none removes a lock another has just taken.
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates the lock file at `path` holding `text`, whole.
 * @returns false when a lock is there already.
 */
function createLockFile(path: string, text: string): boolean {
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, text, { mode: 0o600 });
  try {
    linkSync(partial, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(partial, { force: true });
  }
}

/** The lock's text, or undefined when there is none. */
export function readLockFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read the lock ${path}: ${(error as Error).message} (run loom as the user that holds it)`);
  }
}

/** Whether the lock at `path`, naming `pid`, has a live owner: the pid runs, in a process started before the lock. */
export function lockOwnerIsLive(path: string, pid: number): boolean {
  if (!processIsAlive(pid)) return false;
  const made = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
  const started = processStartMs(pid);
  // A second of slack for the clocks' resolutions (the start time is in clock ticks).
  return made === undefined || started === undefined || started <= made + 1000;
}

/**
 * Takes the lock at `path` for this process, writing `text` (which names this process's pid) into it. A lock whose
 * owner is gone (`ownerPid` finds no pid in it, or its pid is not live) is removed, by one of the processes that found
 * it, and the create tried again, so a `kill -9` never locks anyone out for good.
 * @param ownerPid the pid a lock's text names, or undefined for text that names none (a broken lock: stale).
 * @param heldBy the error to throw when a live process holds the lock, given that lock's text and pid.
 * @returns a function that releases the lock (once; later calls do nothing). It removes the file only while it still
 * holds `text`: a lock taken over after this process was presumed dead is not its to remove. A process that exits
 * without releasing (an uncaught error, process.exit) releases on its way out.
 */
export function acquireLockFile(
  path: string,
  text: string,
  ownerPid: (text: string) => number | undefined,
  heldBy: (text: string, pid: number) => Error,
): () => void {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (createLockFile(path, text)) return releaseOnce(path, text);
    const found = readLockFile(path);
    if (found === undefined) continue; // removed meanwhile
    const owner = ownerPid(found);
    if (owner !== undefined && lockOwnerIsLive(path, owner)) throw heldBy(found, owner);
    removeStaleLock(path, found);
  }
  throw new Error(`${path}: could not take the lock (it kept changing hands): is another loom process starting?`);
}

function releaseOnce(path: string, text: string): () => void {
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.off("exit", release);
    try {
      if (readLockFile(path) === text) rmSync(path, { force: true });
    } catch {
      // Unreadable now: left for the next taker to judge.
    }
  };
  process.on("exit", release);
  return release;
}

/** A takeover guard older than this was left by a process killed while taking over: it is removed. */
const STALE_GUARD_MS = 10_000;

/**
 * Removes the stale lock at `path` if it still holds `staleText`. A guard file, created exclusively, lets one of the
 * processes that found it do so; the others wait a moment and look at the lock again.
 */
function removeStaleLock(path: string, staleText: string): void {
  const guard = `${path}.takeover`;
  if (!createLockFile(guard, `${process.pid}\n`)) {
    const age = Date.now() - (statSync(guard, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > STALE_GUARD_MS) rmSync(guard, { force: true });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    return;
  }
  try {
    if (readLockFile(path) === staleText) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

/** When process `pid` started (epoch ms), where Linux says: boot time plus its start in clock ticks (USER_HZ, 100). */
function processStartMs(pid: number): number | undefined {
  try {
    const bootSeconds = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: state is field 3, starttime 22.
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    return Number.isFinite(bootSeconds) && Number.isFinite(ticks) ? bootSeconds * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}
