// The shape of one versioned schema migration.

/**
 * One step of the schema. Statements run in order inside the migrating transaction, one statement each (PGlite's
 * extended protocol takes one statement per query). Migrations are TypeScript so that tsc ships them in dist/.
 * NOTE: a released migration never changes; a change to the schema is a new migration with the next version.
 */
export interface Migration {
  version: number;
  /** What it does, in a few words. */
  description: string;
  statements: readonly string[];
}
