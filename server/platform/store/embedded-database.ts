// The embedded database (PGlite) of a data dir, opened at its first use and shared by what keeps data there without
// the platform (stored responses, stored chat completions): PGlite admits one opener per data dir, so they share one.
import type { Database } from "../contract.js";
import { openDatabase } from "../db/open-database.js";

/** A data dir's database, opened at the first use (and tried again after a failed open). */
export class EmbeddedDatabase {
  #opening: Promise<Database> | undefined;
  #closed = false;

  constructor(private readonly dataDir: string) {}

  /** Whether an open has begun (before it, there is nothing in the database to clean up). */
  get opened(): boolean {
    return this.#opening !== undefined;
  }

  /**
   * The database, opening it if it is not yet.
   * @throws Error naming the data dir when it cannot be opened, or when the server is shutting down.
   */
  async database(): Promise<Database> {
    if (this.#closed) throw new Error("the server is shutting down");
    this.#opening ??= openDatabase({ dataDir: this.dataDir }).catch((error: unknown) => {
      this.#opening = undefined;
      throw new Error(`the data dir ${this.dataDir} cannot be opened for stored responses and completions (${(error as Error).message}); set LOOM_DATA_DIR to another folder, or send store: false`);
    });
    return this.#opening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const database = await this.#opening?.catch(() => undefined);
    await database?.close();
  }
}
