// One change to an install at a time: `loom update apply` and `rollback` hold `<install-dir>/update.lock` (created
// exclusively, naming their pid) while they change it, so that a timer's apply and an operator's cannot interleave,
// and so that a loom process starting meanwhile (the new version apply just started, or one a service manager
// restarted) leaves the journal to the update under way instead of "recovering" it from under it. A lock whose
// process is gone (kill -9) is stale and taken over.
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processIsAlive } from "../../platform/db/data-dir-lock.js";
import { syncDirectory } from "./durable-files.js";
import type { InstallLayout } from "./layout.js";

/** Who holds an install's update lock. */
export interface UpdateLockHolder {
  pid: number;
  operation: string;
  since: string;
}

/** Another live process is changing the install. */
export class UpdateInProgressError extends Error {
  override readonly name = "UpdateInProgressError";
  constructor(readonly holder: UpdateLockHolder, path: string) {
    super(`another loom update (process ${holder.pid}, ${holder.operation} since ${holder.since}) is changing this install (${path}): wait for it to end`);
  }
}

/** The lock file's path. */
export function updateLockPath(layout: InstallLayout): string {
  return join(layout.root, "update.lock");
}

/** The live process holding the lock, other than this one; undefined when none does (no lock, or a stale one). */
export function updateLockHolder(layout: InstallLayout): UpdateLockHolder | undefined {
  const holder = readHolder(updateLockPath(layout));
  return holder !== undefined && holder.pid !== process.pid && processIsAlive(holder.pid) ? holder : undefined;
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
  // without its pid for another process to mistake for a stale one.
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify({ pid: process.pid, operation, since: new Date().toISOString() })}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(partial, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = readHolder(path);
        if (holder !== undefined && processIsAlive(holder.pid)) throw new UpdateInProgressError(holder, path);
        // Stale: its process is gone (kill -9). Take it over.
        rmSync(path, { force: true });
        continue;
      }
      syncDirectory(layout.root);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (readHolder(path)?.pid === process.pid) rmSync(path, { force: true });
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

function readHolder(path: string): UpdateLockHolder | undefined {
  let value: Partial<UpdateLockHolder>;
  try {
    value = JSON.parse(readFileSync(path, "utf8")) as Partial<UpdateLockHolder>;
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(value?.pid) || value.pid! <= 0) return undefined;
  return { pid: value.pid!, operation: String(value.operation ?? "an update"), since: String(value.since ?? "an unknown time") };
}
