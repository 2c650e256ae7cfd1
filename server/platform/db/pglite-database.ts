// The embedded back end: PGlite (PostgreSQL compiled to WebAssembly) in this process, behind the Database interface.
import { parse, PGlite, protocol, type Transaction } from "@electric-sql/pglite";
import type { Database, PreparedStatement, Sql } from "../contract.js";
import { translateDriverError } from "./errors.js";
import { requireOneText } from "./prepared.js";
import { requireStorableParameters } from "./storable-text.js";

/**
 * A Database over one PGlite instance. PGlite runs one statement at a time and queues the rest; its transaction()
 * holds the instance for the whole callback, so transactions never interleave.
 */
export class PgliteDatabase implements Database {
  readonly kind = "pglite";
  /** Prepared statements' texts by name, and the names parsed in this instance's session. */
  readonly #statements = new Map<string, string>();
  readonly #parsed = new Set<string>();
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
    requireStorableParameters(params);
    try {
      return (await this.pglite.query<Row>(text, [...params])).rows;
    } catch (error) {
      throw translateDriverError(error, this.location, params);
    }
  }

  async queryPrepared<Row extends Record<string, unknown>>(statement: PreparedStatement, params: readonly (string | null)[]): Promise<Row[]> {
    requireOneText(this.#statements, statement);
    requireStorableParameters(params);
    const { serialize } = protocol;
    try {
      // PGlite's query() parses, describes and plans every time, in five calls into its WebAssembly; a statement
      // parsed once is one call: bind, describe, execute, sync. The same two locks as query(): never inside another
      // caller's transaction, never beside another statement.
      return await this.pglite._runExclusiveTransaction(() => this.pglite._runExclusiveQuery(async () => {
        if (!this.#parsed.has(statement.name)) {
          await this.pglite.execProtocol(Buffer.concat([serialize.parse({ name: statement.name, text: statement.text }), serialize.sync()]), { syncToFs: false });
          this.#parsed.add(statement.name);
        }
        const { messages } = await this.pglite.execProtocol(Buffer.concat([
          serialize.bind({ statement: statement.name, values: [...params] }),
          serialize.describe({ type: "P" }),
          serialize.execute({}),
          serialize.sync(),
        ]));
        return parse.parseResults(messages, this.pglite.parsers)[0]!.rows as Row[];
      }));
    } catch (error) {
      throw translateDriverError(error, this.location, params);
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
      requireStorableParameters(params);
      try {
        return (await tx.query<Row>(text, [...params])).rows;
      } catch (error) {
        throw translateDriverError(error, location, params);
      }
    },
  };
}
