// Runs a release's own migrations (`loom update migrate` of the package at `root`) on the platform's database, in a
// process of its own: the new code knows the new schema, the running command may not.
import { execFile } from "node:child_process";
import { cliOf } from "./process-control.js";
import type { UpdateDatabase } from "./apply-update.js";

/** The most a migration may take before the update gives up on it (the transaction then rolls back). */
const MIGRATION_TIMEOUT_MS = 30 * 60_000;

/**
 * Migrates `database` with the release at `root`. @returns the versions applied.
 * @throws Error with the release's own message (naming the migration that failed).
 */
export function runMigrations(root: string, database: UpdateDatabase): Promise<number[]> {
  // The URL travels in the environment, not the arguments (which any user can read in ps).
  const args = [cliOf(root), "update", "migrate", "--json", ...("dataDir" in database ? ["--data-dir", database.dataDir] : [])];
  const env = "databaseUrl" in database ? { ...process.env, LOOM_DATABASE_URL: database.databaseUrl } : process.env;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, timeout: MIGRATION_TIMEOUT_MS, maxBuffer: 4 * 1024 ** 2 }, (error, stdout, stderr) => {
      if (error !== null) {
        const said = stderr.trim().replace(/^loom: /, "") || error.message;
        reject(new Error(said));
        return;
      }
      try {
        resolve((JSON.parse(stdout) as { applied: number[] }).applied);
      } catch {
        reject(new Error(`the release's migrate command printed no result: ${stdout.slice(0, 200)}`));
      }
    });
  });
}
