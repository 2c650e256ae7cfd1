// Stored chat completions in the database (the `chat_completions` table): kept per owner until they expire, read,
// listed, updated (metadata) and deleted only by their owner, the list and each completion's messages paged in SQL.
// An expired row is invisible from the moment it expires; the cleanup job (response-storage.ts) removes it later.
import type { ChatCompletionStore, CompletionFilter, JsonRecord, PageRequest, StoredCompletion, StoredCompletionRecord, StoredPage } from "../../adapters/openai/stored.js";
import { PlatformInputError, type Sql } from "../contract.js";
import { storableJson, storableText, unstorableCharacter } from "../db/storable-text.js";
import { deleteExpiredRows, itemPageQueries, readItemPage, requireDate, requireItemsWithIds } from "./owned-item-rows.js";
import { quote, requireChoice, requireId, requireInteger, requireObject } from "./validate.js";

/**
 * A page of the owner's completions in creation order (then id, which breaks ties between completions of one
 * microsecond). `after` ($4) is found among the owner's rows: unknown (or another owner's), the comparison with it is
 * NULL and the page is empty. Filters: the model ($5, NULL for any) and metadata containing $6.
 */
function listQuery(order: "asc" | "desc"): string {
  // Only these two constant texts are ever built: the direction is not a parameter in SQL.
  const direction = order === "asc" ? "ASC" : "DESC";
  const past = order === "asc" ? ">" : "<";
  return `SELECT c.id, c.completion, c.metadata FROM chat_completions c
    WHERE c.owner = $1 AND c.expires_at > $2
      AND ($5::text IS NULL OR c.model = $5::text)
      AND c.metadata @> $6::jsonb
      AND ($4::text IS NULL OR (c.created_at, c.id) ${past} (SELECT m.created_at, m.id FROM chat_completions m WHERE m.id = $4::text AND m.owner = $1))
    ORDER BY c.created_at ${direction}, c.id ${direction}
    LIMIT $3`;
}

const LIST = { asc: listQuery("asc"), desc: listQuery("desc") } as const;
/** A completion's messages, paged as a response's input items are. */
const MESSAGES = itemPageQueries({ table: "chat_completions", column: "messages" });

/** A row as reads select it. */
type CompletionRow = {
  id: string;
  completion: JsonRecord;
  metadata: Record<string, string>;
};

/**
 * Stored chat completions in the database. As SqlResponseStore: expiry is judged by this process's clock (`now`,
 * passed to every read), the clock the caller computed `expiresAt` from.
 */
export class SqlChatCompletionStore implements ChatCompletionStore {
  /**
   * @param sql the database, or a transaction.
   * @param now the clock for expiry (tests move it); default: the system clock.
   */
  constructor(
    private readonly sql: Sql,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Inserts the completion: one statement, so a crash leaves it whole or absent. Its id must be new: a duplicate is
   * the database's unique violation (SQLSTATE 23505), so a completion is never stored twice.
   * @throws PlatformInputError naming a malformed field.
   */
  async save(record: StoredCompletionRecord): Promise<void> {
    requireId("id", record.id);
    requireId("owner", record.owner);
    requireId("model", record.model);
    requireDate("createdAt", record.createdAt);
    requireDate("expiresAt", record.expiresAt);
    requireMetadata(record.metadata);
    requireObject("completion", record.completion);
    requireItemsWithIds("messages", record.messages);
    // JSON text cast to jsonb (both drivers send it as it is); U+0000 and lone surrogates become U+FFFD, as in stored
    // responses: the only way a stored completion differs from the one answered.
    await this.sql.query(
      "INSERT INTO chat_completions (id, owner, model, created_at, expires_at, metadata, completion, messages) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb)",
      [record.id, record.owner, record.model, record.createdAt, record.expiresAt, json(record.metadata), json(record.completion), json(record.messages)],
    );
  }

  async get(owner: string, id: string): Promise<StoredCompletion | undefined> {
    // Ids are made here and hold nothing the database cannot store: such an id is not found.
    if (unstorableCharacter(id)) return undefined;
    const [row] = await this.sql.query<CompletionRow>("SELECT id, completion, metadata FROM chat_completions WHERE id = $1 AND owner = $2 AND expires_at > $3", [id, owner, this.now()]);
    return row;
  }

  /**
   * A page of completions: `limit` of them (one more is read, to tell whether more follow).
   * @throws PlatformInputError for a limit below 1, an unknown order or metadata that is not string pairs.
   */
  async list(owner: string, filter: CompletionFilter, page: PageRequest): Promise<StoredPage<StoredCompletion>> {
    const limit = requireInteger("limit", page.limit, 1);
    const order = requireChoice("order", page.order, ["asc", "desc"] as const);
    requireMetadata(filter.metadata ?? {});
    // Compared with what was stored as storableJson wrote it.
    const after = page.after === undefined ? null : storableText(page.after);
    const model = filter.model === undefined ? null : storableText(filter.model);
    const rows = await this.sql.query<CompletionRow>(LIST[order], [owner, this.now(), limit + 1, after, model, json(filter.metadata ?? {})]);
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  async updateMetadata(owner: string, id: string, metadata: Record<string, string>): Promise<StoredCompletion | undefined> {
    requireMetadata(metadata);
    if (unstorableCharacter(id)) return undefined;
    const [row] = await this.sql.query<CompletionRow>(
      "UPDATE chat_completions SET metadata = $3::jsonb WHERE id = $1 AND owner = $2 AND expires_at > $4 RETURNING id, completion, metadata",
      [id, owner, json(metadata), this.now()],
    );
    return row;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    if (unstorableCharacter(id)) return false;
    const rows = await this.sql.query("DELETE FROM chat_completions WHERE id = $1 AND owner = $2 AND expires_at > $3 RETURNING id", [id, owner, this.now()]);
    return rows.length > 0;
  }

  /** @throws PlatformInputError for a limit below 1 or an unknown order. */
  async messages(owner: string, id: string, page: PageRequest): Promise<StoredPage<JsonRecord> | undefined> {
    return readItemPage(this.sql, MESSAGES, owner, id, this.now(), page);
  }

  /**
   * Deletes at most `limit` of the completions that expired at or before `now`, the oldest first, skipping rows
   * another transaction holds.
   */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    return deleteExpiredRows(this.sql, "chat_completions", now, limit);
  }
}

/** JSON text of a value as the database can hold it. */
function json(value: unknown): string {
  return JSON.stringify(storableJson(value));
}

/** String pairs (the adapter has checked their number and lengths). */
function requireMetadata(value: unknown): void {
  const metadata = requireObject("metadata", value);
  for (const [key, entry] of Object.entries(metadata)) {
    if (typeof entry !== "string") throw new PlatformInputError(`metadata.${key.slice(0, 64)}`, `metadata.${key.slice(0, 64)} must be a string, got ${quote(entry)}`);
  }
}
