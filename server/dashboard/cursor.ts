// The dashboard lists' opaque cursors: base64url of the JSON array of a page's keyset values. Opaque to clients, but
// decoded strictly here: anything but a cursor this server made for that kind of list is a 400 naming `cursor`, so
// that no crafted value reaches a query.
import { ProtocolError } from "../protocol/internal.js";
import type { TimeKeyset } from "../platform/store/page.js";

/** The longest cursor accepted (the longest made is about 100 characters). */
export const MAX_CURSOR_CHARS = 200;

/** `at` of a TimeKeyset: UTC to the microsecond, as the stores write it. */
const KEYSET_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** Ids of keys and payments (`key_...`, `pay_...`). */
const KEYSET_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** A creation order number (a bigint identity: 1 to 2^63 - 1). */
const KEYSET_ORDER = /^[1-9]\d{0,18}$/;
const BIGINT_MAX = 9_223_372_036_854_775_807n;

/** The cursor of a list ordered by creation time, then id. */
export function encodeTimeCursor(keyset: TimeKeyset): string {
  return encode([keyset.at, keyset.id]);
}

/** The cursor of a list ordered by creation order number. */
export function encodeOrderCursor(order: string): string {
  return encode([order]);
}

/** A cursor made by encodeTimeCursor. @throws ProtocolError (400, field `cursor`) for anything else. */
export function decodeTimeCursor(cursor: string): TimeKeyset {
  const values = decode(cursor, 2);
  const [at, id] = values;
  if (typeof at !== "string" || !KEYSET_TIME.test(at) || Number.isNaN(Date.parse(at)) || typeof id !== "string" || !KEYSET_ID.test(id)) throw malformed();
  // A calendar date that does not exist (2024-02-30) parses in some engines: compare its round trip to the second.
  if (new Date(at).toISOString().slice(0, 19) !== at.slice(0, 19)) throw malformed();
  return { at, id };
}

/** A cursor made by encodeOrderCursor. @throws ProtocolError (400, field `cursor`) for anything else. */
export function decodeOrderCursor(cursor: string): string {
  const [order] = decode(cursor, 1);
  if (typeof order !== "string" || !KEYSET_ORDER.test(order) || BigInt(order) > BIGINT_MAX) throw malformed();
  return order;
}

function encode(values: readonly string[]): string {
  return Buffer.from(JSON.stringify(values), "utf8").toString("base64url");
}

/** The array of `length` values a cursor holds. */
function decode(cursor: string, length: number): unknown[] {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  const bytes = Buffer.from(cursor, "base64url");
  // Node decodes leniently: only a cursor that is its bytes' canonical encoding is one this server made.
  if (bytes.toString("base64url") !== cursor) throw malformed();
  let values: unknown;
  try {
    values = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(values) || values.length !== length) throw malformed();
  return values;
}

function malformed(): ProtocolError {
  return new ProtocolError("invalid_request", "cursor is not a cursor of this list: pass the previous page's nextCursor as it was given", "cursor");
}
