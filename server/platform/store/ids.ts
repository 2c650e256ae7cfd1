// Record identifiers: a type prefix and random characters (`org_...`, `key_...`, `hold_...`, `doc_...`, `opt_...`); not secrets.
import { randomBytes } from "node:crypto";

/** A new identifier: `<prefix>_` and 24 lower-case hex characters (96 random bits). */
export function newId(prefix: "org" | "key" | "hold" | "doc" | "opt"): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}
