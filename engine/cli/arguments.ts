// Command-line argument checks that name the flag at fault.

/** A command-line mistake: printed with the usage text, exit status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Parses a finite number flag, or returns the default when absent. */
export function parseNumber(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number)) throw new UsageError(`${flag} must be a number, got '${value}'`);
  return number;
}

/** Parses an integer flag at least `minimum`, or returns the default when absent. */
export function parseInteger(flag: string, value: string | undefined, fallback: number, minimum: number): number {
  const number = parseNumber(flag, value, fallback);
  if (!Number.isSafeInteger(number) || number < minimum) throw new UsageError(`${flag} must be an integer >= ${minimum}, got '${value}'`);
  return number;
}
