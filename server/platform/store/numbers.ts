// Column values as JavaScript numbers: numeric comes back as a string and bigint as a string (pg) or a number
// (PGlite), so every store reads numbers through here.
import type { Limits } from "../contract.js";

/** A numeric or bigint column as a number (NaN never: an unreadable value throws). */
export function toNumber(value: unknown): number {
  const number = typeof value === "number" || typeof value === "bigint" || typeof value === "string" ? Number(value) : NaN;
  if (!Number.isFinite(number) || (typeof value === "string" && value.trim() === "")) {
    throw new TypeError(`expected a number from the database, got ${String(value)}`);
  }
  return number;
}

/** A nullable numeric or bigint column as a number or null. */
export function toNumberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}

/** The limit columns of an organization or key row (NULL: no limit of that kind). */
export function limitsFromRow(row: Record<string, unknown>): Limits {
  const limits: Limits = {};
  const rpm = toNumberOrNull(row.requests_per_minute);
  const tpm = toNumberOrNull(row.tokens_per_minute);
  const tpd = toNumberOrNull(row.tokens_per_day);
  if (rpm !== null) limits.requestsPerMinute = rpm;
  if (tpm !== null) limits.tokensPerMinute = tpm;
  if (tpd !== null) limits.tokensPerDay = tpd;
  return limits;
}

/** A timestamp as JSON gives it (ISO 8601 text) as a Date. @throws TypeError for anything else. */
export function dateOf(value: unknown): Date {
  const date = typeof value === "string" ? new Date(value) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) throw new TypeError(`expected a timestamp from the database, got ${String(value)}`);
  return date;
}
