// One change to an install at a time: `loom update apply` and `rollback`, and a loom process recovering a cut-off
// update as it starts, hold `<install-dir>/update.lock` while they change the install, so that a timer's apply and
// an operator's cannot interleave, and so that a loom process starting meanwhile (the new version apply just
// started, or one restarted by hand) leaves the journal to the update under way instead of "recovering" it from
// under it. The lock names its process by pid, boot and start time: a lock whose process is gone (kill -9, a reboot,
// its pid reused since) is stale and taken over.
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processIsAlive } from "../../platform/db/data-dir-lock.js";
import { syncDirectory } from "./durable-files.js";
import type { InstallLayout } from "./layout.js";

/** Who holds an install's update lock. */
export interface UpdateLockHolder {
  pid: number;
  operation: string;
  since: string;
  /** Linux: the boot and the process's start time (clock ticks since boot), so a reused pid is not taken for it. */
  bootId?: string;
  startTicks?: string;
}

/** Another live process is changing the install. */
export class UpdateInProgressError extends Error {
  override readonly name = "UpdateInProgressError";
  constructor(readonly holder: UpdateLockHolder, path: string) {
    super(`another loom update (process ${holder.pid}, ${holder.operation} since ${holder.since}) is changing this install (${path}): wait for it to end`);
  }
}

/** A takeover guard older than this was left by a process killed while taking over: it is removed. */
const STALE_GUARD_MS = 10_000;

/** The lock file's path. */
export function updateLockPath(layout: InstallLayout): string {
  return join(layout.root, "update.lock");
}

/** The live process holding the lock, other than this one; undefined when none does (no lock, or a stale one). */
export function updateLockHolder(layout: InstallLayout): UpdateLockHolder | undefined {
  const read = readLock(updateLockPath(layout));
  return read?.holder !== undefined && read.holder.pid !== process.pid && isLive(read.holder) ? read.holder : undefined;
}

/**
 * Takes the install's update lock for `operation`.
 * @returns a function that releases it.
 * @throws UpdateInProgressError when a live process holds it.
 */
export function acquireUpdateLock(layout: InstallLayout, operation: string): () => void {
  const path = updateLockPath(layout);
  mkdirSync(layout.root, { recursive: true });
  // Written whole beside it, then linked into place: link() fails if the lock exists, so there is never a lock
  // without its holder for another process to mistake for a stale one.
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify({ pid: process.pid, operation, since: new Date().toISOString(), ...identityOf(process.pid) })}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        linkSync(partial, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const read = readLock(path);
        if (read === undefined) continue; // removed meanwhile: try again
        if (read.holder !== undefined && isLive(read.holder)) throw new UpdateInProgressError(read.holder, path);
        takeOver(path, read.text, partial);
        continue;
      }
      syncDirectory(layout.root);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (readLock(path)?.holder?.pid === process.pid) rmSync(path, { force: true });
        process.off("exit", release);
      };
      process.on("exit", release);
      return release;
    }
  } finally {
    rmSync(partial, { force: true });
  }
  throw new Error(`${path}: could not take the update lock (it kept changing): is another loom update starting?`);
}

/**
 * Removes the stale lock whose content is `staleText`. Two processes may find the same stale lock: a guard file,
 * created exclusively, lets one of them remove it, and only while it still holds that stale content, so that the
 * other never removes the lock the first has taken since.
 */
function takeOver(path: string, staleText: string, partial: string): void {
  const guard = `${path}.takeover`;
  try {
    linkSync(partial, guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const age = Date.now() - (statSync(guard, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > STALE_GUARD_MS) rmSync(guard, { force: true });
    // Another process is taking over: give it a moment, then look at the lock again.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    return;
  }
  try {
    if (readLock(path)?.text === staleText) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

/** The lock's text and holder (undefined holder: not a lock this code wrote); undefined when there is no lock. */
function readLock(path: string): { text: string; holder?: UpdateLockHolder } | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read the update lock ${path}: ${(error as Error).message} (run loom as the user that runs its updates)`);
  }
  let value: Partial<UpdateLockHolder>;
  try {
    value = JSON.parse(text) as Partial<UpdateLockHolder>;
  } catch {
    return { text };
  }
  if (!Number.isSafeInteger(value?.pid) || value.pid! <= 0) return { text };
  const optional = (field: unknown) => (typeof field === "string" ? field : undefined);
  return { text, holder: { pid: value.pid!, operation: String(value.operation ?? "an update"), since: String(value.since ?? "an unknown time"), bootId: optional(value.bootId), startTicks: optional(value.startTicks) } };
}

/** Whether the holder's process still runs: its pid is alive and, where Linux says, in the same boot since the same start. */
function isLive(holder: UpdateLockHolder): boolean {
  if (!processIsAlive(holder.pid)) return false;
  const now = identityOf(holder.pid);
  if (holder.bootId !== undefined && now.bootId !== undefined && holder.bootId !== now.bootId) return false;
  if (holder.startTicks !== undefined && now.startTicks !== undefined && holder.startTicks !== now.startTicks) return false;
  return true;
}

/** Linux's boot id and the start time of process `pid` (field 22 of /proc/<pid>/stat); nothing elsewhere. */
function identityOf(pid: number): { bootId?: string; startTicks?: string } {
  try {
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: state is field 3, starttime 22.
    const startTicks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return { bootId, startTicks };
  } catch {
    return {};
  }
}
