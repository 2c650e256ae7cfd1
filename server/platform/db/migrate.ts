// Applies the versioned migrations at open: in one transaction, in order, each recorded in schema_migrations with
// whether the loom before it keeps working on the result. A database migrated by a newer loom is refused with both
// versions named, unless every newer migration kept the previous loom working (an update's expand step).
import type { Database } from "../contract.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from "./migrations/index.js";

/** The database's schema is newer than this code understands (a newer loom migrated it). */
export class SchemaTooNewError extends Error {
  override readonly name = "SchemaTooNewError";
  constructor(
    readonly location: string,
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(`the database at ${location} has schema version ${databaseVersion}; this loom understands up to ${codeVersion}: upgrade loom`);
  }
}

/** A migration failed; the message names it (the transaction left the schema as it was). */
export class MigrationFailedError extends Error {
  override readonly name = "MigrationFailedError";
  constructor(
    readonly location: string,
    readonly migration: { version: number; description: string },
    failure: Error,
  ) {
    super(`migration ${migration.version} (${migration.description}) failed on the database at ${location}: ${failure.message}; nothing was changed`, { cause: failure });
  }
}

/** The first key of loom's PostgreSQL advisory locks ('loom' in ASCII); the second is a hash of the schema's name. */
export const ADVISORY_LOCK_CLASS = 0x6c6f6f6d;

/**
 * Brings `database` to the newest schema in `migrations` and returns the versions it applied (empty: already there).
 * All of it is one transaction, so a failed migration leaves the schema as it was. On PostgreSQL a transaction-scoped
 * advisory lock (per schema) makes concurrent openers wait for the first to finish instead of racing it.
 * @param location where the database is, for the error message (a data dir, a URL without its password).
 * @throws SchemaTooNewError when the database's newest applied version is above the newest migration's and one of
 * the newer migrations did not keep the previous loom working.
 * @throws MigrationFailedError naming the migration whose statement failed.
 */
export async function migrate(database: Database, location: string, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const newest = migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
  return database.transaction(async (tx) => {
    if (database.kind === "postgres") {
      await tx.query("SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))", [ADVISORY_LOCK_CLASS]);
    }
    const [where] = await tx.query<{ schema: string | null }>("SELECT current_schema() AS schema");
    if (where?.schema == null) {
      throw new Error(`the database at ${location} has no schema to create loom's tables in (its search_path names none that exists): create the schema first`);
    }
    await tx.query("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    // Bookkeeping of the runner, not a migration: looms before it never read the column.
    await tx.query("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS keeps_previous boolean NOT NULL DEFAULT false");
    const [row] = await tx.query<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations");
    const current = row?.version ?? 0;
    if (current > newest) {
      const [breaking] = await tx.query<{ count: number }>("SELECT count(*)::int AS count FROM schema_migrations WHERE version > $1 AND NOT keeps_previous", [newest]);
      if ((breaking?.count ?? 1) > 0) throw new SchemaTooNewError(location, current, newest);
      return [];
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      try {
        for (const statement of migration.statements) await tx.query(statement);
      } catch (error) {
        throw new MigrationFailedError(location, migration, error as Error);
      }
      await tx.query("INSERT INTO schema_migrations (version, keeps_previous) VALUES ($1, $2)", [migration.version, migration.keepsPrevious ?? false]);
      applied.push(migration.version);
    }
    return applied;
  });
}

export { LATEST_SCHEMA_VERSION };
