// What the tables of stored responses and stored chat completions share: rows kept per owner until they expire, each
// holding a JSON array of objects with ids (a response's input items, a completion's messages) that is paged in SQL;
// expired rows deleted in batches; the checks of the dates and items a row is saved with.
import { PlatformInputError, type Sql } from "../contract.js";
import { storableText, unstorableCharacter } from "../db/storable-text.js";
import { quote, requireChoice, requireInteger, requireObject } from "./validate.js";

/**
 * A table of owned, expiring rows (`id`, `owner`, `expires_at`) and its JSON array column. NOTE: both names are
 * written into SQL: they are constants of this code, never input.
 */
export interface ItemsTable {
  table: "responses" | "chat_completions";
  column: "input_items" | "messages";
}

/** The statements {@link readItemPage} runs, one per order. */
export type ItemPageQueries = Readonly<Record<"asc" | "desc", string>>;

/**
 * The statements that read a page of a row's items, newest-first or oldest-first. One statement: the row (no row:
 * missing, expired or another owner's), the ordinal of `after` (the first item with the `after` id; none when `after`
 * is unknown, so every comparison with it is NULL and the page is empty) and up to $5 items past it. The LEFT JOINs
 * keep the row when the page is empty, so an empty page and a missing row differ.
 */
export function itemPageQueries({ table, column }: ItemsTable): ItemPageQueries {
  const query = (order: "asc" | "desc") => {
    // Only these constant texts are ever built: the direction is not a parameter in SQL.
    const direction = order === "asc" ? "ASC" : "DESC";
    const past = order === "asc" ? ">" : "<";
    return `SELECT page.item
    FROM ${table} r
    LEFT JOIN LATERAL (
      SELECT c.ordinal FROM jsonb_array_elements(r.${column}) WITH ORDINALITY AS c (item, ordinal)
      WHERE c.item ->> 'id' = $4::text ORDER BY c.ordinal LIMIT 1
    ) mark ON true
    LEFT JOIN LATERAL (
      SELECT e.item, e.ordinal FROM jsonb_array_elements(r.${column}) WITH ORDINALITY AS e (item, ordinal)
      WHERE $4::text IS NULL OR e.ordinal ${past} mark.ordinal
      ORDER BY e.ordinal ${direction} LIMIT $5
    ) page ON true
    WHERE r.id = $1 AND r.owner = $2 AND r.expires_at > $3
    ORDER BY page.ordinal ${direction}`;
  };
  return { asc: query("asc"), desc: query("desc") };
}

/**
 * A page of the items of the owner's row `id` unexpired at `now`: `limit` of them (one more is read, to tell whether
 * more follow). With duplicate item ids, `after` names the first item of the list with that id.
 * @returns undefined when the row is missing, expired or another owner's.
 * @throws PlatformInputError for a limit below 1 or an unknown order.
 */
export async function readItemPage(
  sql: Sql,
  queries: ItemPageQueries,
  owner: string,
  id: string,
  now: Date,
  page: { limit: number; order: "asc" | "desc"; after?: string },
): Promise<{ items: Record<string, unknown>[]; hasMore: boolean } | undefined> {
  const limit = requireInteger("limit", page.limit, 1);
  const order = requireChoice("order", page.order, ["asc", "desc"] as const);
  // Ids are made here and hold nothing the database cannot store: such an id is not found.
  if (unstorableCharacter(id)) return undefined;
  // Item ids were stored as storableJson wrote them: `after` is looked up so too.
  const after = page.after === undefined ? null : storableText(page.after);
  const rows = await sql.query<{ item: Record<string, unknown> | null }>(queries[order], [id, owner, now, after, limit + 1]);
  if (rows.length === 0) return undefined;
  // An empty page is the row with no item beside it.
  const items = rows.flatMap((row) => (row.item === null ? [] : [row.item]));
  return { items: items.slice(0, limit), hasMore: items.length > limit };
}

/**
 * Deletes at most `limit` of the table's rows that expired at or before `now`, the oldest first. Rows another
 * transaction holds (a cleanup in another process, a delete in flight) are skipped rather than waited for.
 * @returns how many were deleted.
 */
export async function deleteExpiredRows(sql: Sql, table: ItemsTable["table"], now: Date, limit: number): Promise<number> {
  requireDate("now", now);
  requireInteger("limit", limit, 1);
  const [row] = await sql.query<{ deleted: number }>(
    `WITH gone AS (
        DELETE FROM ${table} WHERE id IN (
          SELECT id FROM ${table} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
        ) RETURNING 1
      )
      SELECT count(*)::int AS deleted FROM gone`,
    [now, limit],
  );
  return row!.deleted;
}

/** @throws PlatformInputError naming `field` when `value` is not a valid Date. */
export function requireDate(field: string, value: unknown): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new PlatformInputError(field, `${field} must be a valid Date, got ${quote(value)}`);
  return value;
}

/** @throws PlatformInputError naming `field` (or `field[i].id`) unless `value` is an array of objects, each with a non-empty string `id` (what `after` finds). */
export function requireItemsWithIds(field: string, value: unknown): void {
  if (!Array.isArray(value)) throw new PlatformInputError(field, `${field} must be an array, got ${quote(value)}`);
  value.forEach((item: unknown, index) => {
    const { id } = requireObject(`${field}[${index}]`, item);
    if (typeof id !== "string" || id === "") throw new PlatformInputError(`${field}[${index}].id`, `${field}[${index}].id must be a non-empty string, got ${quote(id)}`);
  });
}
