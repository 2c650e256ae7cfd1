// One change to an install at a time: `loom update apply` and `rollback`, and a loom process recovering a cut-off
// update as it starts, hold `<install-dir>/update.lock` while they change the install, so that a timer's apply and
// an operator's cannot interleave, and so that a loom process starting meanwhile (the new version apply just
// started, or one restarted by hand) leaves the journal to the update under way instead of "recovering" it from
// under it. A lock whose process is gone (kill -9, a reboot, its pid reused since) is stale and taken over
// (server/platform/db/lock-file.ts: created whole, owner checked by pid and start time, one taker).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { acquireLockFile } from "../../platform/db/lock-file.js";
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

/**
 * Takes the install's update lock for `operation`.
 * @returns a function that releases it.
 * @throws UpdateInProgressError when a live process holds it.
 */
export function acquireUpdateLock(layout: InstallLayout, operation: string): () => void {
  const path = updateLockPath(layout);
  mkdirSync(layout.root, { recursive: true });
  const text = `${JSON.stringify({ pid: process.pid, operation, since: new Date().toISOString() })}\n`;
  const release = acquireLockFile(path, text, (found) => parseHolder(found)?.pid, (found) => new UpdateInProgressError(parseHolder(found)!, path));
  syncDirectory(layout.root);
  return release;
}

/** The holder a lock's text names; undefined for none or text this code did not write (a stale, broken lock). */
function parseHolder(text: string): UpdateLockHolder | undefined {
  let value: Partial<UpdateLockHolder>;
  try {
    value = JSON.parse(text) as Partial<UpdateLockHolder>;
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(value?.pid) || value.pid! <= 0) return undefined;
  return { pid: value.pid!, operation: String(value.operation ?? "an update"), since: String(value.since ?? "an unknown time") };
}
