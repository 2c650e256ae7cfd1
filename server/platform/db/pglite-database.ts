// The embedded back end: PGlite (PostgreSQL compiled to WebAssembly) in this process, behind the Database interface.
import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { Database, Sql } from "../contract.js";
import { translateDriverError } from "./errors.js";

/**
 * A Database over one PGlite instance. PGlite runs one statement at a time and queues the rest; its transaction()
 * holds the instance for the whole callback, so transactions never interleave.
 */
export class PgliteDatabase implements Database {
  readonly kind = "pglite";
  #closed = false;

  /**
   * @param pglite an open instance, owned from now on (closed by close()).
   * @param location the data dir, for error messages.
   * @param onClose runs once after the instance is closed (releases the data dir lock).
   */
  constructor(
    private readonly pglite: PGlite,
    private readonly location: string,
    private readonly onClose: () => void = () => {},
  ) {}

  async query<Row extends Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
    try {
      return (await this.pglite.query<Row>(text, [...params])).rows;
    } catch (error) {
      throw translateDriverError(error, this.location);
    }
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    // Errors of `work` pass through as they are; only the driver's own (BEGIN, COMMIT, a closed instance) translate.
    let workError: { error: unknown } | undefined;
    try {
      return await this.pglite.transaction(async (tx) => {
        try {
          return await work(transactionSql(tx, this.location));
        } catch (error) {
          workError = { error };
          throw error;
        }
      });
    } catch (error) {
      if (workError !== undefined && workError.error === error) throw error;
      throw translateDriverError(error, this.location);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.pglite.close();
    } finally {
      this.onClose();
    }
  }
}

function transactionSql(tx: Transaction, location: string): Sql {
  return {
    async query<Row extends Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
      try {
        return (await tx.query<Row>(text, [...params])).rows;
      } catch (error) {
        throw translateDriverError(error, location);
      }
    },
  };
}
