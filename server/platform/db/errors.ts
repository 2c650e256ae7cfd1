// Which driver errors mean "the database is unavailable" (connection lost, server shutting down, out of resources,
// closed) and which are the statement's own (a constraint, a syntax error): the first become DatabaseUnavailableError;
// and which refuse text the database cannot store (escaped in JSON, where no check before the statement sees it).
import { DatabaseUnavailableError, UnstorableTextError } from "../contract.js";
import { parameterWithUnstorableEscape } from "./storable-text.js";

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
 * The error to throw for a driver error: text the database refused to store (jsonb's `\u0000` and lone surrogate
 * escapes) as an UnstorableTextError naming the parameter of `params` that held it; the statement's own errors
 * (SQLSTATE outside the unavailable classes) as they are; everything else (no SQLSTATE: refused or lost connections, a
 * closed database; or an unavailable class) as a DatabaseUnavailableError naming `location`, with the driver's error as
 * `cause`.
 */
export function translateDriverError(error: unknown, location: string, params: readonly unknown[] = []): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const state = sqlState(error);
  const unstorable = unstorableText(state, error, params);
  if (unstorable !== undefined) return unstorable;
  if (state !== undefined && !UNAVAILABLE_CLASSES.has(state.slice(0, 2)) && !UNAVAILABLE_STATES.has(state)) return error;
  return new DatabaseUnavailableError(`the database at ${location} is unavailable: ${describe(error)}`, { cause: error });
}

/**
 * Text the database refused: 22P05 (untranslatable character: jsonb's `\u0000`) always; 22P02 (invalid text
 * representation, also a malformed number or date) only when a parameter holds an escape jsonb refuses, such as
 * JSON.stringify's `\ud800` for a lone surrogate (read from the parameters, not from the server's localized message).
 */
function unstorableText(state: string | undefined, error: unknown, params: readonly unknown[]): UnstorableTextError | undefined {
  if (state !== "22P05" && state !== "22P02") return undefined;
  const parameter = parameterWithUnstorableEscape(params);
  if (state === "22P02" && parameter === undefined) return undefined;
  const where = parameter === undefined ? "a statement parameter" : `statement parameter $${parameter}`;
  const detail = (error as { detail?: unknown }).detail;
  const refusal = typeof detail === "string" && detail !== "" ? `${describe(error)}: ${detail}` : describe(error);
  return new UnstorableTextError(`${where} holds text the database cannot store (${refusal}); text loom stores cannot hold U+0000 or lone UTF-16 surrogates (not valid Unicode text); remove it`, parameter, { cause: error });
}

/** A driver error in words; a refused connection to a name with several addresses is an AggregateError without one. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  const inner = (error as Partial<AggregateError>).errors?.[0];
  if (inner instanceof Error && inner.message) return inner.message;
  return (error as { code?: string }).code ?? error.name;
}
