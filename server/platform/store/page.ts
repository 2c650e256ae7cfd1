// Keyset paging for the stores' listings (the dashboard's lists): a page is the rows after a position in a total
// order, read through an index with LIMIT n + 1, so that a page costs the same on the first and the thousandth page,
// and rows inserted meanwhile neither repeat nor hide others.

/** One page of a listing: its rows, and the position the next page starts after (undefined: this one was the last). */
export interface Page<T, K> {
  items: T[];
  next: K | undefined;
}

/**
 * A position in a listing ordered by creation time, then id. `at` is the row's `created_at` to the microsecond, as
 * UTC text (`2024-05-01T12:00:00.123456Z`): a JavaScript Date holds milliseconds only, and a position rounded to them
 * would repeat or skip rows created within the same millisecond.
 */
export interface TimeKeyset {
  at: string;
  id: string;
}

/** The SQL of a timestamptz column as a TimeKeyset's `at` text. */
function keysetTimeSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** The column a newest-first listing selects its rows' positions as (`${keysetTimeSql("created_at")} AS keyset_at`). */
export const CREATED_AT_KEYSET_SQL = `${keysetTimeSql("created_at")} AS keyset_at`;

/**
 * The conditions that keep the rows after `after` in a listing ordered by `created_at DESC, id DESC`, its two values
 * pushed onto `params`. The first condition bounds the index scan on created_at; the second breaks ties of one
 * microsecond by id.
 */
export function afterNewestFirst(after: TimeKeyset, params: unknown[]): string[] {
  const at = `$${params.push(after.at)}::timestamptz`;
  const id = `$${params.push(after.id)}::text`;
  return [`created_at <= ${at}`, `(created_at < ${at} OR id < ${id})`];
}

/** A row's position in a newest-first listing that selected CREATED_AT_KEYSET_SQL. */
export function createdAtKeysetOf(row: Record<string, unknown>): TimeKeyset {
  return { at: row.keyset_at as string, id: String(row.id) };
}

/** Rows per page: at most this many, whatever the caller asks. */
export const MAX_PAGE_LIMIT = 100;

/**
 * The page of `rows` read with LIMIT `limit + 1`: the first `limit` mapped by `item`, and the position of the last of
 * them when a further row showed there is more.
 */
export function pageOf<T, K>(rows: readonly Record<string, unknown>[], limit: number, item: (row: Record<string, unknown>) => T, keyset: (row: Record<string, unknown>) => K): Page<T, K> {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { items: shown.map(item), next: rows.length > limit && last !== undefined ? keyset(last) : undefined };
}

/** Checks a page size. @throws RangeError outside 1..MAX_PAGE_LIMIT (callers validate their input first). */
export function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) throw new RangeError(`a page holds 1 to ${MAX_PAGE_LIMIT} rows, not ${limit}`);
  return limit;
}
