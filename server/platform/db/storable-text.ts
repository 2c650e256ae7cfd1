// What text the database can store, checked before it is sent: PostgreSQL text (and jsonb's strings and keys) holds
// any Unicode text except U+0000, and a lone UTF-16 surrogate is no Unicode text at all (pg and PGlite would write it
// as U+FFFD; jsonb refuses its \ud800 escape). Request parsers check their fields with it, naming them; both back ends
// check every statement parameter with it, as the last guard (db/pglite-database.ts, db/postgres-database.ts).
import { UnstorableTextError } from "../contract.js";

/** Where a string holds a character the database cannot store, and which. */
export interface UnstorableCharacter {
  /** Its UTF-16 index. */
  index: number;
  /** In words: `U+0000 (NUL)`, `a lone surrogate U+D800`. */
  what: string;
}

/** U+0000, or a surrogate that is not half of a pair (matched per UTF-16 code unit: no `u` flag). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The first character of `text` the database cannot store, or undefined (for nearly all text). */
export function unstorableCharacter(text: string): UnstorableCharacter | undefined {
  const match = UNSTORABLE.exec(text);
  if (match === null) return undefined;
  const unit = match[0].charCodeAt(0);
  return { index: match.index, what: unit === 0 ? "U+0000 (NUL)" : `a lone surrogate U+${unit.toString(16).toUpperCase()}` };
}

/** The message of a refusal of `field` (as the client wrote it) for `found`. */
export function unstorableTextMessage(field: string, found: UnstorableCharacter, inKey = false): string {
  const where = inKey ? `a key of ${field}` : field;
  return `${where} holds ${found.what} at character ${found.index + 1}: text loom stores cannot hold U+0000 or lone UTF-16 surrogates (not valid Unicode text); remove it`;
}

/** Where in a JSON value a string or a key holds a character the database cannot store. */
export interface UnstorableInJson {
  /** The path of the string, or of the object whose key it is: `input.answerFormat.properties`. */
  field: string;
  found: UnstorableCharacter;
  /** True when it is a key of the object at `field`. */
  inKey: boolean;
}

/** The first string or key of a JSON value (under `field`) that the database cannot store, depth first. */
export function unstorableInJson(value: unknown, field: string): UnstorableInJson | undefined {
  if (typeof value === "string") {
    const found = unstorableCharacter(value);
    return found && { field, found, inKey: false };
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const inner = unstorableInJson(value[index], `${field}[${index}]`);
      if (inner) return inner;
    }
    return undefined;
  }
  if (typeof value === "object" && value !== null && !(value instanceof Date) && !ArrayBuffer.isView(value)) {
    for (const [key, entry] of Object.entries(value)) {
      const found = unstorableCharacter(key);
      if (found) return { field, found, inKey: true };
      // The key is storable text, so a path through it is too.
      const inner = unstorableInJson(entry, `${field}.${key}`);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** A JSON escape: `\uXXXX` (with its code) or a backslash and one other character (`\\`, `\"`, `\n`...). */
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|[^u])/g;

/**
 * Whether JSON text holds an escape jsonb refuses: `\u0000`, or a surrogate escape that is not half of a pair
 * (JSON.stringify writes a lone surrogate so). Escaped backslashes are read as such (`\\u0000` is text).
 */
export function hasUnstorableEscape(json: string): boolean {
  if (!json.includes("\\u")) return false;
  let highEnd = -1;
  for (const match of json.matchAll(JSON_ESCAPE)) {
    const code = match[1] === undefined ? -1 : Number.parseInt(match[1], 16);
    const pairsWithHigh = highEnd === match.index && code >= 0xdc00 && code <= 0xdfff;
    if (highEnd >= 0 && !pairsWithHigh) return true;
    highEnd = -1;
    if (code === 0 || (code >= 0xdc00 && code <= 0xdfff && !pairsWithHigh)) return true;
    if (code >= 0xd800 && code <= 0xdbff) highEnd = match.index + match[0].length;
  }
  return highEnd >= 0;
}

/** The first parameter (1 for `$1`) that is JSON text with an escape jsonb refuses, or undefined. */
export function parameterWithUnstorableEscape(params: readonly unknown[]): number | undefined {
  const index = params.findIndex((param) => typeof param === "string" && hasUnstorableEscape(param));
  return index < 0 ? undefined : index + 1;
}

/**
 * Refuses a statement's parameters when one holds text the database cannot store: strings, and the strings and keys
 * inside arrays and objects (which the drivers send as PostgreSQL arrays and JSON). Dates and bytes are not text.
 * @throws UnstorableTextError naming the parameter (`$2`).
 */
export function requireStorableParameters(params: readonly unknown[]): void {
  for (let index = 0; index < params.length; index++) {
    const param = params[index];
    if (param === null || typeof param === "number" || typeof param === "boolean" || typeof param === "bigint" || param === undefined) continue;
    const inner = unstorableInJson(param, `$${index + 1}`);
    if (inner) throw new UnstorableTextError(unstorableTextMessage(`statement parameter ${inner.field}`, inner.found, inner.inKey), index + 1);
  }
}

/**
 * A copy of a JSON value the database can store, for what no client can be asked to fix (a model's output, a tool's
 * result, a response as answered): in strings and keys, U+0000 and each lone surrogate become U+FFFD, the replacement
 * character. Client fields are refused instead (above), naming the field.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (typeof value === "object" && value !== null && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [storableText(key), storableJson(entry)]));
  }
  return value;
}

/** Every character the database cannot store (U+0000, lone surrogates). */
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/** `text` with U+FFFD for each character the database cannot store, as storableJson writes strings. */
export function storableText(text: string): string {
  // Most text has neither, and is returned as it is.
  return unstorableCharacter(text) === undefined ? text : text.replace(UNSTORABLE_ALL, "\ufffd");
}
