// The embedded database's backup before an update's migrations, and its restore on a rollback, both holding the data
// dir's lock (PGlite admits one process; no loom may open it meanwhile). The copy goes into a folder that becomes the
// backup only by a final rename; the restore is a sequence of renames that can be resumed from wherever it stopped.
import { cp, mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { acquireDataDirLock } from "../../platform/db/data-dir-lock.js";
import { pgliteDirectory } from "../../platform/db/data-dir.js";
import { syncDirectory, syncTree } from "./durable-files.js";

/** Copies `<dataDir>/pglite` to `<backupDir>/pglite`. @returns `backupDir`. */
export async function backUpData(dataDir: string, backupDir: string): Promise<string> {
  const source = pgliteDirectory(dataDir);
  await stat(source).catch(() => {
    throw new Error(`no embedded database to back up at ${source}`);
  });
  const partial = `${backupDir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  await holdingDataDir(dataDir, () => cp(source, join(partial, "pglite"), { recursive: true, errorOnExist: true, preserveTimestamps: true }));
  syncTree(partial);
  await rm(backupDir, { recursive: true, force: true });
  await rename(partial, backupDir);
  syncDirectory(join(backupDir, ".."));
  return backupDir;
}

/** Whether `backupDir` holds a finished backup. */
export async function backupExists(backupDir: string): Promise<boolean> {
  return stat(join(backupDir, "pglite")).then(() => true, () => false);
}

/**
 * Puts the backup in `backupDir` back as `<dataDir>/pglite`, keeping the replaced database as
 * `pglite.replaced-<time>` (nothing is deleted). Safe to call again after a crash at any step:
 * copy to `pglite.restoring`, rename it `pglite.restored` (complete), move the current database aside, rename
 * `pglite.restored` to `pglite`.
 * @returns where the replaced database was kept (undefined when there was none, e.g. a resumed restore).
 */
export async function restoreData(dataDir: string, backupDir: string): Promise<string | undefined> {
  if (!(await backupExists(backupDir))) throw new Error(`the backup ${backupDir} is missing or incomplete: the data cannot be restored`);
  return holdingDataDir(dataDir, () => restoreUnlocked(dataDir, backupDir));
}

async function restoreUnlocked(dataDir: string, backupDir: string): Promise<string | undefined> {
  const live = pgliteDirectory(dataDir);
  const restoring = `${live}.restoring`;
  const restored = `${live}.restored`;
  if (!(await exists(restored))) {
    await rm(restoring, { recursive: true, force: true });
    await cp(join(backupDir, "pglite"), restoring, { recursive: true, preserveTimestamps: true });
    syncTree(restoring);
    await rename(restoring, restored);
    syncDirectory(dataDir);
  }
  let replaced: string | undefined;
  if (await exists(live)) {
    replaced = `${live}.replaced-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    await rename(live, replaced);
  }
  await rename(restored, live);
  syncDirectory(dataDir);
  return replaced;
}

/**
 * Runs `work` holding the data dir's one-process lock, so that no loom (a `loom admin` or `loom update approve` run
 * meanwhile) opens the database while it is copied or replaced. @throws DataDirLockedError naming the holder.
 */
async function holdingDataDir<T>(dataDir: string, work: () => Promise<T>): Promise<T> {
  const lock = acquireDataDirLock(dataDir);
  try {
    return await work();
  } finally {
    lock.release();
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}
