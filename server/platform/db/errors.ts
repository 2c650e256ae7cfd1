// Which driver errors mean "the database is unavailable" (connection lost, server shutting down, out of resources,
// closed) and which are the statement's own (a constraint, a syntax error): the first become DatabaseUnavailableError.
import { DatabaseUnavailableError } from "../contract.js";

/** SQLSTATE classes of a database that cannot serve: connection exception, invalid authorization (the server
 * refuses the credentials), insufficient resources, operator intervention (shutdown), system error, internal error. */
const UNAVAILABLE_CLASSES = new Set(["08", "28", "53", "57", "58", "XX"]);

/**
 * Single SQLSTATEs a new connection gets from a database that will not serve, in classes whose other codes are a
 * statement's own: 3D000, the database does not exist (dropped, renamed); 55000, it does not accept connections now
 * (`ALTER DATABASE ... ALLOW_CONNECTIONS false`, a template database).
 */
const UNAVAILABLE_STATES = new Set(["3D000", "55000"]);

/** The SQLSTATE of a driver error (pg and PGlite both put it in `code`), or undefined. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * The error to throw for a driver error: the statement's own errors (SQLSTATE outside the unavailable classes) as
 * they are, everything else (no SQLSTATE: refused or lost connections, a closed database; or an unavailable class)
 * as a DatabaseUnavailableError naming `location`, with the driver's error as `cause`.
 */
export function translateDriverError(error: unknown, location: string): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const state = sqlState(error);
  if (state !== undefined && !UNAVAILABLE_CLASSES.has(state.slice(0, 2)) && !UNAVAILABLE_STATES.has(state)) return error;
  return new DatabaseUnavailableError(`the database at ${location} is unavailable: ${describe(error)}`, { cause: error });
}

/** A driver error in words; a refused connection to a name with several addresses is an AggregateError without one. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  const inner = (error as Partial<AggregateError>).errors?.[0];
  if (inner instanceof Error && inner.message) return inner.message;
  return (error as { code?: string }).code ?? error.name;
}
