// The field checks of run create bodies (legacy runs and machine runs): each error is a 400 naming the field as the
// client wrote it (`input.tools[1].id`), with the rule it breaks and what was sent.
import { PlatformInputError } from "../platform/contract.js";
import { unstorableCharacter, unstorableInJson, unstorableTextMessage } from "../platform/db/storable-text.js";
import { ProtocolError } from "../protocol/internal.js";
import { validateCallbackUrl } from "./callbacks/callback-url.js";
import type { RunSpec } from "./contract.js";

/**
 * What legacy and machine run bodies share: `input.answerFormat` and `input.reasoningFormat` (JSON Schemas, compiled
 * by `checkSchema`, which throws naming the field) and `output.callbackUrl`.
 */
export function formatsAndCallback(input: Record<string, unknown>, outputField: unknown, checkSchema: (schema: Record<string, unknown>, field: string) => void): Pick<RunSpec, "answerFormat" | "reasoningFormat" | "callbackUrl"> {
  const chosen: Pick<RunSpec, "answerFormat" | "reasoningFormat" | "callbackUrl"> = {};
  for (const field of ["answerFormat", "reasoningFormat"] as const) {
    if (input[field] === undefined) continue;
    const schema = object(`input.${field}`, input[field]);
    // Stored with the run (jsonb): a string or key the database cannot store is refused by its path.
    const unstorable = unstorableInJson(schema, `input.${field}`);
    if (unstorable) throw invalid(unstorable.field, unstorableTextMessage(unstorable.field, unstorable.found, unstorable.inKey));
    checkSchema(schema, `input.${field}`);
    chosen[field] = schema;
  }
  if (outputField !== undefined) {
    const output = object("output", outputField, ["callbackUrl"]);
    if (output.callbackUrl !== undefined) chosen.callbackUrl = callbackUrl("output.callbackUrl", output.callbackUrl);
  }
  return chosen;
}

/** The completion callback's URL, checked as enqueueing it will check it again (callbacks/callback-url.ts). */
export function callbackUrl(field: string, value: unknown): string {
  try {
    return validateCallbackUrl(field, value);
  } catch (error) {
    if (error instanceof PlatformInputError) throw invalid(error.field, error.message);
    throw error;
  }
}

export function invalid(field: string, message: string): ProtocolError {
  return new ProtocolError("invalid_request", message, field);
}

export function quote(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A JSON object; with `fields`, any other field is refused by name. */
export function object(field: string, value: unknown, fields?: readonly string[]): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid(field, `${field} must be a JSON object, got ${quote(value)}`);
  if (fields) {
    const unknown = Object.keys(value).find((name) => !fields.includes(name));
    if (unknown !== undefined) {
      const path = field === "body" ? unknown : `${field}.${unknown}`;
      throw invalid(path, `unknown field ${path}: ${field === "body" ? "the body" : field} takes ${fields.join(", ")}`);
    }
  }
  return value as Record<string, unknown>;
}

export function array(field: string, value: unknown, maxItems: number): unknown[] {
  if (!Array.isArray(value)) throw invalid(field, `${field} must be an array, got ${quote(value)}`);
  if (value.length > maxItems) throw invalid(field, `${field} has ${value.length} items; at most ${maxItems}`);
  return value;
}

/** A string that is not blank, of at most `maxChars` UTF-16 units, storable (no U+0000, no lone surrogate). */
export function text(field: string, value: unknown, maxChars: number): string {
  if (typeof value !== "string") throw invalid(field, `${field} must be a string, got ${quote(value)}`);
  if (value.trim() === "") throw invalid(field, `${field} must not be empty`);
  if (value.length > maxChars) throw invalid(field, `${field} is ${value.length} characters; at most ${maxChars}`);
  const found = unstorableCharacter(value);
  if (found) throw invalid(field, unstorableTextMessage(field, found));
  return value;
}

export function strings(field: string, value: unknown, maxItems: number, maxChars: number): string[] {
  return array(field, value, maxItems).map((item, index) => text(`${field}[${index}]`, item, maxChars));
}

export function integer(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(field, `${field} must be an integer from ${min} to ${max}, got ${quote(value)}`);
  }
  return value;
}

export function choice<T extends string>(field: string, value: unknown, choices: readonly T[], what = "not one of them"): T {
  if (typeof value !== "string" || !choices.includes(value as T)) {
    throw invalid(field, `${field} must be one of ${choices.join(", ")}; ${quote(value)} is ${what}`);
  }
  return value as T;
}
