// Files that survive a crash: written beside their place, flushed, renamed over it, and the folder flushed, so a
// reader finds the old content or the new, never half of either.
import { closeSync, fsyncSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Writes `text` to `path` durably (see above). */
export function writeFileDurably(path: string, text: string, mode = 0o644): void {
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, text, { mode });
  syncFile(partial);
  renameSync(partial, path);
  syncDirectory(dirname(path));
}

/** A JSON file's value, or undefined when the file does not exist. @throws Error naming the file when it is not JSON. */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not JSON (${(error as Error).message})`);
  }
}

/** Removes `path` and flushes its folder. */
export function removeFileDurably(path: string): void {
  rmSync(path, { force: true });
  syncDirectory(dirname(path));
}

/** Flushes a folder's entries (a rename is durable once its folder is). Ignored where folders cannot be opened. */
export function syncDirectory(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a folder; the rename is then as durable as they make it.
  } finally {
    closeSync(fd);
  }
}

/**
 * Flushes every file and folder under `root` (links are not followed): a copied or unpacked tree is on disk before the
 * rename that makes it the backup or the release, so a power cut cannot leave a complete-looking tree of empty files.
 */
export function syncTree(root: string): void {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    // The entry's own type (readdir does not follow links): a link is neither, and is not followed.
    if (entry.isDirectory()) syncTree(path);
    else if (entry.isFile()) syncFile(path);
  }
  syncDirectory(root);
}

/** Flushes a file's content to disk. */
function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
