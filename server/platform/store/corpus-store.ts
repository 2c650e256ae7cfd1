// The local search corpus (`search_documents`, migration 2): documents added, replaced by URL, listed, counted and
// removed. Searching it is the run tools' job (server/runs/tools/corpus-search.ts); filling it from files is
// `loom admin corpus add`. Here so that admin commands, which live in the platform, can run it.
import { PlatformInputError, type Sql } from "../contract.js";
import { newId } from "./ids.js";
import { quote, refuseUnknownFields, requireObject, requireStorableText } from "./validate.js";

/** A document of the corpus: the URL it is known by (a web URL, or `file://` and its path), its title and text. */
export interface CorpusDocument {
  url: string;
  title: string;
  body: string;
}

/** A document as listed: no body, its length instead. */
export interface CorpusEntry {
  id: string;
  url: string;
  title: string;
  /** The body's length in characters (UTF-16 code units are what JavaScript counts; PostgreSQL counts characters). */
  bodyCharacters: number;
  addedAt: Date;
}

export const MAX_CORPUS_URL_LENGTH = 2048;
export const MAX_CORPUS_TITLE_LENGTH = 1000;
/**
 * The longest body. NOTE: the generated tsvector of one row must stay under PostgreSQL's 1 MB limit; half a million
 * characters of prose stays well below it (distinct words, each with at most 256 positions).
 */
export const MAX_CORPUS_BODY_LENGTH = 500_000;

/**
 * Checks one document (from a command's JSON) and returns it typed; `field` names it in errors (`documents.3`).
 * @throws PlatformInputError naming the bad field (`documents.3.url`).
 */
export function validateCorpusDocument(input: unknown, field = "document"): CorpusDocument {
  const raw = requireObject(field, input);
  refuseUnknownFields(raw, ["url", "title", "body"], `${field}.`);
  const text = (name: "url" | "title" | "body", maximum: number, allowEmpty: boolean): string => {
    const value = raw[name];
    if (typeof value !== "string" || (!allowEmpty && value.trim() === "") || value.length > maximum) {
      throw new PlatformInputError(`${field}.${name}`, `${field}.${name} must be a ${allowEmpty ? "" : "non-empty "}string of at most ${maximum} characters, got ${quote(typeof value === "string" && value.length > maximum ? `${value.length} characters` : value)}`);
    }
    return requireStorableText(`${field}.${name}`, value);
  };
  return { url: text("url", MAX_CORPUS_URL_LENGTH, false), title: text("title", MAX_CORPUS_TITLE_LENGTH, true), body: text("body", MAX_CORPUS_BODY_LENGTH, true) };
}

/** The corpus over one database. */
export class CorpusStore {
  constructor(private readonly database: Sql) {}

  /**
   * Adds documents, replacing any of the same URL (a later one in `documents` wins), in one statement.
   * @returns how many were new and how many replaced one.
   */
  async add(documents: readonly CorpusDocument[]): Promise<{ added: number; replaced: number }> {
    const byUrl = new Map(documents.map((document) => [document.url, document]));
    if (byUrl.size === 0) return { added: 0, replaced: 0 };
    const rows = [...byUrl.values()].map(({ url, title, body }) => ({ id: newId("doc"), url, title, body }));
    // xmax is 0 for a row this statement inserted, and set on a row it updated.
    const results = await this.database.query<{ inserted: boolean }>(
      `INSERT INTO search_documents (id, url, title, body)
       SELECT id, url, title, body FROM jsonb_to_recordset($1::jsonb) AS document (id text, url text, title text, body text)
       ON CONFLICT (url) DO UPDATE SET title = excluded.title, body = excluded.body, added_at = now()
       RETURNING (xmax = 0) AS inserted`,
      [JSON.stringify(rows)],
    );
    const added = results.filter((row) => row.inserted).length;
    return { added, replaced: results.length - added };
  }

  async count(): Promise<number> {
    const [row] = await this.database.query<{ count: number }>("SELECT count(*)::int AS count FROM search_documents");
    return row!.count;
  }

  /** Documents in the order they were first added. */
  async list(options: { limit?: number; offset?: number } = {}): Promise<CorpusEntry[]> {
    const rows = await this.database.query<{ id: string; url: string; title: string; body_characters: number; added_at: Date }>(
      `SELECT id, url, title, length(body) AS body_characters, added_at FROM search_documents ORDER BY created_order LIMIT $1::int OFFSET $2::int`,
      [options.limit ?? null, options.offset ?? 0],
    );
    return rows.map((row) => ({ id: row.id, url: row.url, title: row.title, bodyCharacters: Number(row.body_characters), addedAt: row.added_at }));
  }

  /** Removes the document of `url`; false when there is none. */
  async remove(url: string): Promise<boolean> {
    return (await this.database.query("DELETE FROM search_documents WHERE url = $1 RETURNING id", [url])).length > 0;
  }

  /** Removes every document; returns how many there were. */
  async clear(): Promise<number> {
    return (await this.database.query("DELETE FROM search_documents RETURNING id")).length;
  }
}
