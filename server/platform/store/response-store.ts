// The Responses API's stored responses in the database (the `responses` table): kept per owner until they expire,
// read and deleted only by their owner, their input items paged in SQL. An expired row is invisible from the moment it
// expires; ResponseCleanup (response-cleanup.ts) removes it later.
import type { InputItemsPage, JsonRecord, ResponseRecord, ResponseStore } from "../../adapters/responses/store.js";
import { PlatformInputError, type Sql } from "../contract.js";
import { storableJson, storableText, unstorableCharacter } from "../db/storable-text.js";
import { quote, requireChoice, requireId, requireInteger, requireObject } from "./validate.js";

/**
 * A page of a response's input items, newest-first or oldest-first. One statement: the response's row (no row: the
 * response is missing, expired or another owner's), the ordinal of `after` (the first item with the `after` id; none
 * when `after` is unknown, so every comparison with it is NULL and the page is empty) and up to $5 items past it.
 * The LEFT JOINs keep the row when the page is empty, so an empty page and a missing response differ.
 */
function inputItemsQuery(order: "asc" | "desc"): string {
  // Only these two constant texts are ever built: the direction is not a parameter in SQL.
  const direction = order === "asc" ? "ASC" : "DESC";
  const past = order === "asc" ? ">" : "<";
  return `SELECT page.item
    FROM responses r
    LEFT JOIN LATERAL (
      SELECT c.ordinal FROM jsonb_array_elements(r.input_items) WITH ORDINALITY AS c (item, ordinal)
      WHERE c.item ->> 'id' = $4::text ORDER BY c.ordinal LIMIT 1
    ) mark ON true
    LEFT JOIN LATERAL (
      SELECT e.item, e.ordinal FROM jsonb_array_elements(r.input_items) WITH ORDINALITY AS e (item, ordinal)
      WHERE $4::text IS NULL OR e.ordinal ${past} mark.ordinal
      ORDER BY e.ordinal ${direction} LIMIT $5
    ) page ON true
    WHERE r.id = $1 AND r.owner = $2 AND r.expires_at > $3
    ORDER BY page.ordinal ${direction}`;
}

const INPUT_ITEMS = { asc: inputItemsQuery("asc"), desc: inputItemsQuery("desc") } as const;

/**
 * Stored responses in the database. Whether a row has expired is judged by this process's clock, not the database's
 * now(): every read and delete passes the `now` clock's Date (default `new Date()`) as a parameter, the same clock
 * the caller computed `expiresAt` from, so a response is visible for exactly its time to live as the caller counts it.
 */
export class SqlResponseStore implements ResponseStore {
  /**
   * @param sql the database, or a transaction.
   * @param now the clock for expiry (tests move it); default: the system clock.
   */
  constructor(
    private readonly sql: Sql,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Inserts the response. Its id must be new: a duplicate is the database's unique violation (SQLSTATE 23505).
   * @throws PlatformInputError naming a malformed field (an item without a string `id`, an invalid date, ...).
   */
  async save(record: ResponseRecord): Promise<void> {
    requireId("id", record.id);
    requireId("owner", record.owner);
    requireDate("createdAt", record.createdAt);
    requireDate("expiresAt", record.expiresAt);
    requireObject("response", record.response);
    requireItems(record.inputItems);
    // JSON text cast to jsonb in the statement: both drivers send it as it is (a JS array would become a SQL array).
    // U+0000 and lone surrogates (which any client may send and a model may write) become U+FFFD. NOTE: the only way
    // a stored response differs from the one answered.
    await this.sql.query(
      "INSERT INTO responses (id, owner, created_at, expires_at, response, input_items) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)",
      [record.id, record.owner, record.createdAt, record.expiresAt, JSON.stringify(storableJson(record.response)), JSON.stringify(storableJson(record.inputItems))],
    );
  }

  async get(owner: string, id: string): Promise<Pick<ResponseRecord, "id" | "response" | "inputItems"> | undefined> {
    // No response id holds what the database cannot store (ids are made here): such an id is not found.
    if (unstorableCharacter(id)) return undefined;
    const [row] = await this.sql.query<{ id: string; response: JsonRecord; input_items: JsonRecord[] }>(
      "SELECT id, response, input_items FROM responses WHERE id = $1 AND owner = $2 AND expires_at > $3",
      [id, owner, this.now()],
    );
    return row === undefined ? undefined : { id: row.id, response: row.response, inputItems: row.input_items };
  }

  async delete(owner: string, id: string): Promise<boolean> {
    if (unstorableCharacter(id)) return false;
    const rows = await this.sql.query("DELETE FROM responses WHERE id = $1 AND owner = $2 AND expires_at > $3 RETURNING id", [id, owner, this.now()]);
    return rows.length > 0;
  }

  /**
   * A page of the input items: `limit` of them (one more is read, to tell whether more follow). With duplicate item
   * ids, `after` names the first item of the list with that id.
   * @throws PlatformInputError for a limit below 1 or an unknown order.
   */
  async inputItems(owner: string, id: string, page: { limit: number; order: "asc" | "desc"; after?: string }): Promise<InputItemsPage | undefined> {
    const limit = requireInteger("limit", page.limit, 1);
    const order = requireChoice("order", page.order, ["asc", "desc"] as const);
    if (unstorableCharacter(id)) return undefined;
    // Item ids were stored as storableJson wrote them: `after` is looked up so too.
    const after = page.after === undefined ? null : storableText(page.after);
    const rows = await this.sql.query<{ item: JsonRecord | null }>(INPUT_ITEMS[order], [id, owner, this.now(), after, limit + 1]);
    if (rows.length === 0) return undefined;
    // An empty page is the response's row with no item beside it.
    const items = rows.flatMap((row) => (row.item === null ? [] : [row.item]));
    return { items: items.slice(0, limit), hasMore: items.length > limit };
  }

  /**
   * Deletes at most `limit` of the responses that expired at or before `now`, the oldest first. Rows another
   * transaction holds (a cleanup in another process, a delete in flight) are skipped rather than waited for.
   */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    requireDate("now", now);
    requireInteger("limit", limit, 1);
    const [row] = await this.sql.query<{ deleted: number }>(
      `WITH gone AS (
        DELETE FROM responses WHERE id IN (
          SELECT id FROM responses WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
        ) RETURNING 1
      )
      SELECT count(*)::int AS deleted FROM gone`,
      [now, limit],
    );
    return row!.deleted;
  }
}

function requireDate(field: string, value: unknown): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new PlatformInputError(field, `${field} must be a valid Date, got ${quote(value)}`);
  return value;
}

/** An array of objects, each with a non-empty string `id` (what `after` finds). */
function requireItems(value: unknown): void {
  if (!Array.isArray(value)) throw new PlatformInputError("inputItems", `inputItems must be an array, got ${quote(value)}`);
  value.forEach((item: unknown, index) => {
    const { id } = requireObject(`inputItems[${index}]`, item);
    if (typeof id !== "string" || id === "") throw new PlatformInputError(`inputItems[${index}].id`, `inputItems[${index}].id must be a non-empty string, got ${quote(id)}`);
  });
}
