// The untyped-JSON primitives both request parsers read bodies with: what counts as an object, an own field, and an
// unset one. Each adapter's fields.ts builds its format's checks and error messages on these.

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A field's own value, or undefined. NOTE: own properties only, so keys such as `constructor` or `__proto__` never
 * resolve to Object.prototype's.
 */
export function own(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Whether a field is unset: absent or null (clients and SDKs send explicit nulls for unset options). */
export function isUnset(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}
