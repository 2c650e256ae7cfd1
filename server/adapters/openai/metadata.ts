// `metadata` as OpenAI's API takes it on a stored object (a chat completion, a response): up to 16 string pairs,
// keys up to 64 characters, values up to 512.
import { invalid, optionalObject, quote, unsupported } from "./fields.js";

/** The most pairs `metadata` may hold. */
export const METADATA_PAIRS = 16;

/** Longest key and value, in characters (UTF-16 code units, as OpenAI counts them). */
export const METADATA_KEY_LENGTH = 64;
export const METADATA_VALUE_LENGTH = 512;

/**
 * Checks `metadata` (absent or null: none).
 * @param field the field's name in the error (`metadata`).
 * @throws ProtocolError (400) naming the field: too many pairs, a key too long, a value not a string or too long.
 */
export function parseMetadata(value: unknown, field = "metadata"): Record<string, string> {
  const metadata = optionalObject(value, field);
  if (!metadata) return {};
  const entries = Object.entries(metadata);
  if (entries.length > METADATA_PAIRS) unsupported(field, `${field} must have at most ${METADATA_PAIRS} key-value pairs, got ${entries.length}`);
  for (const [key, entry] of entries) {
    if (key.length > METADATA_KEY_LENGTH) unsupported(field, `${field} keys must be at most ${METADATA_KEY_LENGTH} characters, got ${quote(key)} (${key.length})`);
    if (typeof entry !== "string" || entry.length > METADATA_VALUE_LENGTH) invalid(`${field}.${key}`, `a string of at most ${METADATA_VALUE_LENGTH} characters`, entry);
  }
  return { ...(metadata as Record<string, string>) };
}
