// Opens the platform's database: PGlite in a data directory (locked to this process) or PostgreSQL at a URL, migrated
// to the schema this code understands before it is handed out.
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { Database } from "../contract.js";
import { acquireDataDirLock } from "./data-dir-lock.js";
import { pgliteDirectory } from "./data-dir.js";
import { translateDriverError } from "./errors.js";
import { migrate } from "./migrate.js";
import { PgliteDatabase } from "./pglite-database.js";
import { PostgresDatabase, type PostgresOptions, redactUrl } from "./postgres-database.js";

/** Where the database is: an embedded data directory, or a PostgreSQL server. */
export type OpenDatabaseOptions = { dataDir: string } | PostgresOptions;

/**
 * Opens and migrates the database.
 * - `{ dataDir }`: creates the directory when missing (mode 0700), takes its lock (`loom.lock`), and opens PGlite in
 *   `<dataDir>/pglite`. The lock is released by close(), or when the process exits.
 * - `{ url, schema?, poolSize? }`: a `pg` pool of `poolSize` (default 8) connections; `schema` (created when missing)
 *   becomes every connection's search_path.
 * @param onMigrated told which migrations the open applied (`loom update migrate` prints them).
 * @throws DataDirLockedError when another live process holds the data directory.
 * @throws SchemaTooNewError when a newer loom migrated the database.
 * @throws DatabaseUnavailableError when the database cannot be reached or opened (the driver's error as `cause`).
 */
export async function openDatabase(options: OpenDatabaseOptions, onMigrated?: (applied: number[]) => void): Promise<Database> {
  let database: Database;
  let location: string;
  if ("dataDir" in options) {
    const dataDir = resolve(options.dataDir);
    location = dataDir;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const lock = acquireDataDirLock(dataDir);
    let pglite: PGlite;
    try {
      pglite = await PGlite.create(pgliteDirectory(dataDir));
    } catch (error) {
      lock.release();
      throw translateDriverError(error, location);
    }
    database = new PgliteDatabase(pglite, location, () => lock.release());
  } else {
    if (!/^postgres(ql)?:\/\//.test(options.url)) {
      throw new Error(`a database URL must start with postgres:// or postgresql://, got '${redactUrl(options.url)}'`);
    }
    location = redactUrl(options.url);
    database = await PostgresDatabase.open(options);
  }
  try {
    const applied = await migrate(database, location);
    onMigrated?.(applied);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}
