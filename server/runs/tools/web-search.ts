// The web_search tool over a search provider: the operator's local corpus (CorpusSearch) or a SearXNG-compatible
// service (SearxngSearch). The model gets titles, URLs and snippets as compact text, and reads pages with read_page.
import type { RunTool, ToolContext } from "./tool.js";

/** One search hit. */
export interface SearchResult {
  title: string;
  url: string;
  /** A few sentences of the document around the query's words ("" when the provider gives none). */
  snippet: string;
}

/** Where web_search looks. */
export interface SearchProvider {
  /**
   * The best `limit` results for `query`, best first (fewer when fewer match).
   * @throws Error whose message says what failed (it reaches the model as the tool's result).
   */
  search(query: string, limit: number, signal: AbortSignal): Promise<SearchResult[]>;
}

/** Options of a WebSearchTool. */
export interface WebSearchOptions {
  /** Results when the model gives no `limit`. Default 5. */
  defaultLimit?: number;
  /** Each snippet is cut to this many characters. Default 300. */
  maxSnippetChars?: number;
}

export const MAX_SEARCH_RESULTS = 10;
const MAX_QUERY_LENGTH = 400;

/** web_search: `{query, limit?}` -> numbered results, each title, URL and snippet. */
export class WebSearchTool implements RunTool {
  readonly name = "web_search";
  readonly description = "Searches for documents matching a query and returns their titles, URLs and short snippets. Read a result in full with read_page.";
  readonly parameters = {
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, maxLength: MAX_QUERY_LENGTH, description: "What to search for: a few keywords or a question" },
      limit: { type: "integer", minimum: 1, maximum: MAX_SEARCH_RESULTS, description: "How many results (default 5)" },
    },
    required: ["query"],
    additionalProperties: false,
  };
  private readonly defaultLimit: number;
  private readonly maxSnippetChars: number;

  constructor(private readonly provider: SearchProvider, options: WebSearchOptions = {}) {
    this.defaultLimit = options.defaultLimit ?? 5;
    this.maxSnippetChars = options.maxSnippetChars ?? 300;
    if (!Number.isInteger(this.defaultLimit) || this.defaultLimit < 1 || this.defaultLimit > MAX_SEARCH_RESULTS) {
      throw new RangeError(`defaultLimit must be an integer from 1 to ${MAX_SEARCH_RESULTS}, got ${this.defaultLimit}`);
    }
  }

  async run(args: Record<string, unknown>, context: ToolContext): Promise<string> {
    const { query, limit = this.defaultLimit } = args;
    if (typeof query !== "string" || query.trim() === "" || query.length > MAX_QUERY_LENGTH) {
      throw new Error(`web_search needs "query": words to search for, at most ${MAX_QUERY_LENGTH} characters`);
    }
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_RESULTS) {
      throw new Error(`web_search's "limit" must be an integer from 1 to ${MAX_SEARCH_RESULTS}, got ${JSON.stringify(limit)}`);
    }
    const results = (await this.provider.search(query.trim(), limit, context.signal)).slice(0, limit);
    if (results.length === 0) return `No results for ${JSON.stringify(query.trim())}.`;
    return results.map((result, index) => {
      const snippet = oneLine(result.snippet);
      const shown = snippet.length > this.maxSnippetChars ? `${snippet.slice(0, this.maxSnippetChars)}...` : snippet;
      return `${index + 1}. ${oneLine(result.title) || "(untitled)"}\n   ${result.url}${shown === "" ? "" : `\n   ${shown}`}`;
    }).join("\n\n");
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
