// A search provider over the platform database's own corpus (search_documents, filled by `loom admin corpus add`):
// PostgreSQL full-text search, the same SQL on PGlite and PostgreSQL.
import type { Sql } from "../../platform/contract.js";
import type { SearchProvider, SearchResult } from "./web-search.js";

// websearch_to_tsquery takes what people type (quotes, OR, -word) and never fails on syntax; the headline is made
// only for the rows kept, since ts_headline reads the whole body.
const SEARCH_SQL = `
  WITH query AS (SELECT websearch_to_tsquery('english', $1) AS terms),
  best AS (
    SELECT document.title, document.url, document.body, document.created_order, ts_rank(document.search, query.terms) AS rank
    FROM search_documents AS document, query
    WHERE document.search @@ query.terms
    ORDER BY rank DESC, document.created_order
    LIMIT $2::int
  )
  SELECT best.title, best.url,
    ts_headline('english', best.body, query.terms, 'MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" ... ", StartSel="", StopSel=""') AS snippet
  FROM best, query
  ORDER BY best.rank DESC, best.created_order`;

/** Full-text search over `search_documents` (English stemming: "caches" finds "cache"). */
export class CorpusSearch implements SearchProvider {
  constructor(private readonly database: Sql) {}

  async search(query: string, limit: number, signal?: AbortSignal): Promise<SearchResult[]> {
    signal?.throwIfAborted();
    const rows = await this.database.query<{ title: string; url: string; snippet: string }>(SEARCH_SQL, [query, limit]);
    return rows.map(({ title, url, snippet }) => ({ title, url, snippet }));
  }
}
