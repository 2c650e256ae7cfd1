// Path-aware readers for an untyped JSON body: each one checks a value and, when it is wrong, throws
// ProtocolError("invalid_request") whose message names the dotted field and what it must be, with `param` set to the
// same path. Optional fields treat null like absence (clients and SDKs send explicit nulls for unset options).
import { ProtocolError } from "../../protocol/internal.js";
import { type JsonObject, isObject, isUnset } from "../json.js";

export { type JsonObject, isObject, isUnset, own } from "../json.js";

/** The path of a child field: `messages[1]`, `messages[1].content`. */
export function child(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return parent === "" ? key : `${parent}.${key}`;
}

/** An invalid_request error for `param`: "param: <rule>", then "(got <value>)" when the offending value is given. */
export function invalid(param: string, rule: string, ...got: [] | [unknown]): ProtocolError {
  const suffix = got.length > 0 ? ` (got ${describe(got[0])})` : "";
  return new ProtocolError("invalid_request", `${param}: ${rule}${suffix}`, param);
}

/** A short description of a JSON value for error messages (never echoes long strings back). */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  switch (typeof value) {
    case "string":
      return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length} characters`;
    case "number":
    case "boolean":
      return String(value);
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

/** A JSON object. */
export function readObject(value: unknown, param: string): JsonObject {
  if (!isObject(value)) throw invalid(param, "must be an object", value);
  return value;
}

/** An array. */
export function readArray(value: unknown, param: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(param, "must be an array", value);
  return value;
}

/** A string (possibly empty). */
export function readString(value: unknown, param: string): string {
  if (typeof value !== "string") throw invalid(param, "must be a string", value);
  return value;
}

/** A non-empty string. */
export function readNonEmptyString(value: unknown, param: string): string {
  if (typeof value !== "string" || value.length === 0) throw invalid(param, "must be a non-empty string", value);
  return value;
}

/** A boolean. */
export function readBoolean(value: unknown, param: string): boolean {
  if (typeof value !== "boolean") throw invalid(param, "must be a boolean", value);
  return value;
}

/** A finite number in [min, max]. */
export function readNumberIn(value: unknown, param: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(param, `must be a number from ${min} to ${max}`, value);
  }
  return value;
}

/** An integer >= 1 (safe integer, so arithmetic on it stays exact). */
export function readPositiveInteger(value: unknown, param: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw invalid(param, "must be a positive integer", value);
  }
  return value;
}

/** `read(value)` when the field is set, undefined when it is absent or null. */
export function optional<T>(value: unknown, param: string, read: (value: unknown, param: string) => T): T | undefined {
  return isUnset(value) ? undefined : read(value, param);
}
