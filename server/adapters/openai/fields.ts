// Small readers for untrusted JSON: each checks one field's type or range and throws a ProtocolError that names the
// field (dotted path) and says what it must be, so every rule in the request parser reads as one line.
import { ProtocolError } from "../../protocol/internal.js";
import { type JsonObject, isObject, isUnset } from "../json.js";

export { type JsonObject, isObject, isUnset, own } from "../json.js";

/** A short, bounded description of a received value for error messages (`got 3`, `got a string "abc"`). */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  switch (typeof value) {
    case "number":
      return String(value);
    case "boolean":
      return String(value);
    case "string": {
      // Bounded: a megabyte-long string must not come back in the error message.
      const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
      return `the string ${JSON.stringify(shown)}`;
    }
    case "object":
      return "an object";
    default:
      return `a ${typeof value}`;
  }
}

/** Longest piece of client text an error message echoes. */
const MAX_ECHOED_CHARACTERS = 64;

/** Client text quoted for an error message, truncated so a huge value cannot blow up the message. */
export function quote(text: string): string {
  return `'${text.length > MAX_ECHOED_CHARACTERS ? `${text.slice(0, MAX_ECHOED_CHARACTERS)}...` : text}'`;
}

/** Quoted client strings as a comma list, at most `max` of them (`'a', 'b' and 3 more`). */
export function quoteList(items: readonly string[], max = 8): string {
  const shown = items.slice(0, max).map(quote).join(", ");
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

/** Throws the invalid_request error for a field: `${path} must be ${rule}, got ${describe(value)}`. */
export function invalid(path: string, rule: string, value: unknown): never {
  throw new ProtocolError("invalid_request", `${path} must be ${rule}, got ${describe(value)}`, path);
}

/** Throws an invalid_request error saying a feature is not supported (never pretend to honour it). */
export function unsupported(path: string, message: string): never {
  throw new ProtocolError("invalid_request", message, path);
}

/** A required string. */
export function requireString(value: unknown, path: string): string {
  if (typeof value !== "string") invalid(path, "a string", value);
  return value;
}

/** An optional string (null counts as absent). */
export function optionalString(value: unknown, path: string): string | undefined {
  return isUnset(value) ? undefined : requireString(value, path);
}

/** An optional boolean (null counts as absent). */
export function optionalBoolean(value: unknown, path: string): boolean | undefined {
  if (isUnset(value)) return undefined;
  if (typeof value !== "boolean") invalid(path, "a boolean", value);
  return value;
}

/** An optional finite number within [min, max] (null counts as absent). */
export function optionalNumberInRange(value: unknown, path: string, min: number, max: number): number | undefined {
  if (isUnset(value)) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    invalid(path, `a number between ${min} and ${max}`, value);
  }
  return value;
}

/** An optional safe integer within [min, max] (null counts as absent); `rule` words the bound for the message. */
export function optionalInteger(value: unknown, path: string, rule: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (isUnset(value)) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) invalid(path, rule, value);
  return value;
}

/** An optional object (null counts as absent). */
export function optionalObject(value: unknown, path: string): JsonObject | undefined {
  if (isUnset(value)) return undefined;
  if (!isObject(value)) invalid(path, "an object", value);
  return value;
}

/** A required object. */
export function requireObject(value: unknown, path: string): JsonObject {
  if (!isObject(value)) invalid(path, "an object", value);
  return value;
}
