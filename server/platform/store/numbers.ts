// Column values as JavaScript numbers: numeric comes back as a string and bigint as a string (pg) or a number
// (PGlite), so every store reads numbers through here.

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
