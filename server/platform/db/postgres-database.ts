// The scaled-out back end: a small `pg` pool on a PostgreSQL server, behind the Database interface.
import pg from "pg";
import type { Database, PreparedStatement, Sql } from "../contract.js";
import { requireOneText } from "./prepared.js";
import { translateDriverError } from "./errors.js";
import { requireStorableParameters } from "./storable-text.js";
import { ADVISORY_LOCK_CLASS } from "./migrate.js";

/** Options of a PostgreSQL connection pool. */
export interface PostgresOptions {
  /** postgres:// or postgresql:// URL. */
  url: string;
  /** Schema for every connection's search_path (created when missing); default: the server's (`public`). */
  schema?: string;
  /** Most connections at once (default 8). */
  poolSize?: number;
  /** How long to wait for a connection before the database counts as unavailable (default 5000 ms). */
  connectTimeoutMs?: number;
}

/** A plain lower-case SQL identifier: safe in search_path and in quoted DDL. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A URL fit for messages: the password replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable database URL)";
  }
}

/**
 * A Database over a `pg` Pool. Statements go to any free connection, prepared statements to one connection the
 * database keeps; a transaction takes one connection for its whole length (BEGIN ... COMMIT, ROLLBACK on a throw) and
 * gives it back, destroyed if it broke.
 */
export class PostgresDatabase implements Database {
  readonly kind = "postgres";
  readonly #pool: pg.Pool;
  readonly #location: string;
  /** Prepared statements' texts by name. */
  readonly #statements = new Map<string, string>();
  /**
   * The connection prepared statements run on, taken from the pool once and kept: the usage commit before each
   * response's last byte then skips the pool's acquire and release (their promises, listeners and idle timer), a
   * tenth of a millisecond of CPU per request. Dropped when its connection breaks; the next statement takes another.
   */
  #held: Promise<pg.PoolClient> | undefined;
  /** Whether prepared statements keep a connection: not when it would be the pool's only one. */
  readonly #keepsConnection: boolean;
  #closed = false;

  private constructor(pool: pg.Pool, location: string, poolSize: number) {
    this.#pool = pool;
    this.#location = location;
    this.#keepsConnection = poolSize > 1;
  }

  /** Opens a pool (connecting lazily) and creates `options.schema` when missing. */
  static async open(options: PostgresOptions): Promise<PostgresDatabase> {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error(`schema must be a lower-case SQL identifier (letters, digits, _), got '${options.schema}'`);
    }
    const location = redactUrl(options.url);
    const poolSize = options.poolSize ?? 8;
    const pool = new pg.Pool({
      connectionString: options.url,
      max: poolSize,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      ...(options.schema !== undefined ? { options: `-c search_path=${options.schema}` } : {}),
    });
    // An idle connection the server drops (a restart) reports here; without a listener it would end the process.
    // The next statement gets a fresh connection or a DatabaseUnavailableError.
    pool.on("error", () => {});
    const database = new PostgresDatabase(pool, location, poolSize);
    if (options.schema !== undefined) {
      try {
        // CREATE SCHEMA IF NOT EXISTS races with itself (a unique violation in pg_namespace): openers take turns.
        await database.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [ADVISORY_LOCK_CLASS, options.schema]);
          await tx.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
        });
      } catch (error) {
        await pool.end();
        throw error;
      }
    }
    return database;
  }

  async query<Row extends Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
    requireStorableParameters(params);
    try {
      return (await this.#pool.query<Row>(text, [...params])).rows;
    } catch (error) {
      throw translateDriverError(error, this.#location, params);
    }
  }

  async queryPrepared<Row extends Record<string, unknown>>(statement: PreparedStatement, params: readonly (string | null)[]): Promise<Row[]> {
    requireOneText(this.#statements, statement);
    requireStorableParameters(params);
    const query = { name: statement.name, text: statement.text, values: [...params] };
    let client: pg.PoolClient | undefined;
    try {
      if (!this.#keepsConnection) return (await this.#pool.query<Row>(query)).rows;
      client = await this.#heldConnection();
      // pg parses a named statement once per connection and then only binds and executes it.
      return (await client.query<Row>(query)).rows;
    } catch (error) {
      // The server's error about a statement (a bad cast, a deadlock) leaves the connection usable; a FATAL one (the
      // backend terminated) or a driver error (the socket closed) may have broken it.
      if (client !== undefined && !(error instanceof pg.DatabaseError && error.severity === "ERROR")) this.#dropHeld(client, error as Error);
      throw translateDriverError(error, this.#location, params);
    }
  }

  #heldConnection(): Promise<pg.PoolClient> {
    if (this.#held === undefined) {
      const held = this.#pool.connect().then((client) => {
        // A checked-out client has no pool listener: without this, a connection the server drops while idle would
        // end the process with an unhandled 'error'.
        client.on("error", (error) => this.#dropHeld(client, error));
        return client;
      });
      held.catch(() => {
        if (this.#held === held) this.#held = undefined;
      });
      this.#held = held;
    }
    return this.#held;
  }

  #dropHeld(client: pg.PoolClient, error: Error): void {
    const held = this.#held;
    if (held === undefined) return;
    void held.then((current) => {
      if (current !== client || this.#held !== held) return;
      this.#held = undefined;
      client.release(error); // destroyed, not returned to the pool
    }, () => undefined);
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translateDriverError(error, this.#location);
    }
    const location = this.#location;
    const sql: Sql = {
      async query<Row extends Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<Row[]> {
        requireStorableParameters(params);
        try {
          return (await client.query<Row>(text, [...params])).rows;
        } catch (error) {
          throw translateDriverError(error, location, params);
        }
      },
    };
    let broken: Error | undefined;
    try {
      await sql.query("BEGIN");
      const result = await work(sql);
      await sql.query("COMMIT");
      return result;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const held = this.#held;
    this.#held = undefined;
    // The pool's end waits for every checked-out connection: the held one goes back first.
    if (held !== undefined) await held.then((client) => client.release(), () => undefined);
    await this.#pool.end();
  }
}
