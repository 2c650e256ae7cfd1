// The Responses API's stored responses in the database (the `responses` table): kept per owner until they expire,
// read and deleted only by their owner, their input items paged in SQL. An expired row is invisible from the moment it
// expires; ResponseCleanup (response-cleanup.ts) removes it later.
import type { InputItemsPage, JsonRecord, ResponseRecord, ResponseStore } from "../../adapters/responses/store.js";
import type { Sql } from "../contract.js";
import { storableJson, unstorableCharacter } from "../db/storable-text.js";
import { deleteExpiredRows, itemPageQueries, readItemPage, requireDate, requireItemsWithIds } from "./owned-item-rows.js";
import { requireId, requireObject } from "./validate.js";

const INPUT_ITEMS = itemPageQueries({ table: "responses", column: "input_items" });

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
    requireItemsWithIds("inputItems", record.inputItems);
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
    return readItemPage(this.sql, INPUT_ITEMS, owner, id, this.now(), page);
  }

  /**
   * Deletes at most `limit` of the responses that expired at or before `now`, the oldest first. Rows another
   * transaction holds (a cleanup in another process, a delete in flight) are skipped rather than waited for.
   */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    return deleteExpiredRows(this.sql, "responses", now, limit);
  }
}

