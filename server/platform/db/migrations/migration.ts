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
  /**
   * True when the loom before this migration keeps working on the schema after it ("expand": new tables, new
   * nullable columns, new indexes). A loom that finds a newer schema than its own starts only when every newer
   * migration says so; that is what lets an update roll back without restoring data, and old workers serve beside
   * new ones during a rolling update. Removing or renaming what an older loom uses ("contract") leaves it false.
   */
  keepsPrevious?: boolean;
}
