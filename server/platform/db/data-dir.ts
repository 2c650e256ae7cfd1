// Where the embedded database lives when no --data-dir is given: $LOOM_DATA_DIR, else the XDG data folder.
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The default data directory: `LOOM_DATA_DIR`, else `$XDG_DATA_HOME/loom`, else `~/.local/share/loom`.
 * @param environment the variables to read (default: this process's).
 */
export function defaultDataDir(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.LOOM_DATA_DIR) return resolve(environment.LOOM_DATA_DIR);
  if (environment.XDG_DATA_HOME) return join(resolve(environment.XDG_DATA_HOME), "loom");
  return join(homedir(), ".local", "share", "loom");
}

/** The folder inside a data directory that holds PGlite's files (PGDATA); the lock and admin.json sit beside it. */
export function pgliteDirectory(dataDir: string): string {
  return join(dataDir, "pglite");
}
