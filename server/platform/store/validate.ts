// Checks of the platform's input fields, each throwing a PlatformInputError that names the field and says what it got.
import { PlatformInputError } from "../contract.js";
import { unstorableCharacter, unstorableTextMessage } from "../db/storable-text.js";

/** The largest magnitude a numeric(20,9) column holds: 11 digits before the point. */
export const MAX_DOLLARS = 99_999_999_999;

/** A short quote of a bad value for an error message. */
export function quote(value: unknown): string {
  if (typeof value === "string") return `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;
  if (value === undefined) return "nothing";
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 60)}...` : text;
  } catch {
    return String(value);
  }
}

/**
 * Text the database can store: no U+0000 and no lone UTF-16 surrogate (db/storable-text.ts). Every string field the
 * platform stores passes here (the checks below call it), so that such text is a 400 naming its field, not a
 * database error. `inKey`: `value` is a key of the object `field` (a model slug of `prices`).
 */
export function requireStorableText(field: string, value: string, inKey = false): string {
  const found = unstorableCharacter(value);
  if (found) throw new PlatformInputError(field, unstorableTextMessage(field, found, inKey));
  return value;
}

/** A display name: a string of 1 to 255 characters (code points), not blank, storable. Returned as given. */
export function requireName(field: string, value: unknown): string {
  if (typeof value !== "string") throw new PlatformInputError(field, `${field} must be a string of 1 to 255 characters, got ${quote(value)}`);
  if (value.trim() === "") throw new PlatformInputError(field, `${field} must not be empty or only whitespace`);
  const length = [...value].length;
  if (length > 255) throw new PlatformInputError(field, `${field} must be at most 255 characters, got ${length}`);
  return requireStorableText(field, value);
}

/** A short label (plan label, plan status): 1 to 100 characters, not blank, storable; or null when `nullable`. */
export function requireLabel(field: string, value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== "string" || value.trim() === "" || [...value].length > 100) {
    throw new PlatformInputError(field, `${field} must be a non-empty string of at most 100 characters or null, got ${quote(value)}`);
  }
  return requireStorableText(field, value.trim());
}

export function requireBoolean(field: string, value: unknown): boolean {
  if (typeof value !== "boolean") throw new PlatformInputError(field, `${field} must be true or false, got ${quote(value)}`);
  return value;
}

/** One of `choices`, or null when null is among them. */
export function requireChoice<T extends string | null>(field: string, value: unknown, choices: readonly T[]): T {
  if (!choices.includes(value as T)) {
    const names = choices.map((choice) => (choice === null ? "null" : `'${choice}'`)).join(", ");
    throw new PlatformInputError(field, `${field} must be one of ${names}, got ${quote(value)}`);
  }
  return value as T;
}

/** An integer in [minimum, Number.MAX_SAFE_INTEGER]. */
export function requireInteger(field: string, value: unknown, minimum: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < minimum) {
    throw new PlatformInputError(field, `${field} must be an integer >= ${minimum}, got ${quote(value)}`);
  }
  return value;
}

/** A limit: an integer >= 1, or null for none at this level. */
export function requireLimit(field: string, value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new PlatformInputError(field, `${field} must be an integer >= 1, or null for no limit, got ${quote(value)}`);
  }
  return value;
}

/** An amount of dollars (or a price): finite, at least `minimum`, within what numeric(20,9) holds. */
export function requireDollars(field: string, value: unknown, minimum = 0): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < minimum || Math.abs(value) > MAX_DOLLARS) {
    throw new PlatformInputError(field, `${field} must be a number from ${minimum} to ${MAX_DOLLARS}, got ${quote(value)}`);
  }
  return value;
}

/** A non-empty identifier-like string (an id, a model slug) of at most 255 characters, storable. */
export function requireId(field: string, value: unknown): string {
  if (typeof value !== "string" || value.trim() === "" || value.length > 255) {
    throw new PlatformInputError(field, `${field} must be a non-empty string of at most 255 characters, got ${quote(value)}`);
  }
  return requireStorableText(field, value);
}

/** A UTC day, YYYY-MM-DD, that exists on the calendar. */
export function requireDay(field: string, value: unknown): string {
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const date = new Date(`${value}T00:00:00Z`);
    if (!Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value) return value;
  }
  throw new PlatformInputError(field, `${field} must be a day as YYYY-MM-DD, got ${quote(value)}`);
}

/** A plain object (not null, not an array), for fields that hold one. */
export function requireObject(field: string, value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PlatformInputError(field, `${field} must be an object, got ${quote(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Refuses fields of `object` outside `known` (a misspelt field is an error, not silently ignored). */
export function refuseUnknownFields(object: Record<string, unknown>, known: readonly string[], prefix = ""): void {
  for (const field of Object.keys(object)) {
    if (!known.includes(field)) throw new PlatformInputError(`${prefix}${field}`, `unknown field ${prefix}${field} (known: ${known.join(", ")})`);
  }
}

/** The UTC day of a moment, YYYY-MM-DD. */
export function utcDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}
