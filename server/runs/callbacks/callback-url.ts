// The check of a run's `output.callbackUrl`: the same at the run's creation (a 400 naming the field) and when the
// callback is enqueued, so a URL accepted with the run never fails the transaction that ends it.
import { PlatformInputError } from "../../platform/contract.js";
import { unstorableCharacter, unstorableTextMessage } from "../../platform/db/storable-text.js";

/** The longest callback URL accepted, in characters. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/**
 * `value` as a callback URL, as given: an absolute http or https URL of at most 2048 characters, holding no U+0000
 * or lone surrogate, without credentials (they would be sent to every host a redirect names, and shown to the run's
 * readers). Whether its host may be reached (no private addresses) is the transport's decision, made at each attempt,
 * since DNS answers change.
 * @throws PlatformInputError naming `field` (e.g. `output.callbackUrl`).
 */
export function validateCallbackUrl(field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_CALLBACK_URL_LENGTH) {
    throw new PlatformInputError(field, `${field} must be an http or https URL of at most ${MAX_CALLBACK_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PlatformInputError(field, `${field} must be an absolute http or https URL, got '${value.slice(0, 80)}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PlatformInputError(field, `${field} must use http or https, got ${url.protocol.slice(0, -1)}`);
  }
  if (url.username || url.password) throw new PlatformInputError(field, `${field} must not carry credentials (user:password@)`);
  // Stored as given (with the run, then with its delivery): URL parsing would have escaped these, the database cannot.
  const found = unstorableCharacter(value);
  if (found) throw new PlatformInputError(field, unstorableTextMessage(field, found));
  return value;
}
