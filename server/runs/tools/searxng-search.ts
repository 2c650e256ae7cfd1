// A search provider over a SearXNG-compatible JSON API (`GET {base}/search?q=...&format=json`), fetched through
// safeRequest. The operator names the service, so its host is allowed even on a private address.
import type { NetworkPolicy } from "./network-policy.js";
import { safeRequest } from "./safe-http.js";
import type { SearchProvider, SearchResult } from "./web-search.js";

/** Where the SearXNG service is and how long to wait for it. */
export interface SearxngOptions {
  /** The service's base URL (`http://searxng.internal:8080`, or with a path prefix). */
  baseUrl: string;
  /** Policy for anything besides the base URL's host (which is always allowed). Default: public addresses only. */
  policy?: NetworkPolicy;
  /** Default 10,000 ms. */
  timeoutMs?: number;
  /** The most bytes of answer read. Default 2 MiB. */
  maxBytes?: number;
  /** Extra request headers (an API key of a compatible service). */
  headers?: Record<string, string>;
}

/** SearXNG's JSON answer, as much of it as is used. */
interface SearxngAnswer {
  results?: Array<{ title?: unknown; url?: unknown; content?: unknown }>;
}

/** Searches a SearXNG instance (or any service answering in its JSON format). */
export class SearxngSearch implements SearchProvider {
  private readonly searchUrl: URL;
  private readonly policy: NetworkPolicy;

  constructor(private readonly options: SearxngOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
    } catch {
      throw new TypeError(`the SearXNG baseUrl must be an http or https URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    if (base.protocol !== "http:" && base.protocol !== "https:") throw new TypeError(`the SearXNG baseUrl must be an http or https URL, got ${JSON.stringify(options.baseUrl)}`);
    this.searchUrl = new URL("search", base);
    const policy = options.policy ?? {};
    this.policy = { ...policy, allowHosts: [...(policy.allowHosts ?? []), base.hostname] };
  }

  async search(query: string, limit: number, signal?: AbortSignal): Promise<SearchResult[]> {
    const url = new URL(this.searchUrl);
    url.searchParams.set("q", query);
    url.searchParams.set("format", "json");
    const response = await safeRequest({
      url, policy: this.policy, signal, timeoutMs: this.options.timeoutMs ?? 10_000, maxBytes: this.options.maxBytes ?? 2 * 1024 * 1024,
      headers: { accept: "application/json", ...this.options.headers },
    });
    const where = `the search service at ${this.searchUrl.origin}`;
    if (response.status !== 200) {
      // SearXNG answers 403 when its settings.yml does not list json under search.formats.
      const hint = response.status === 403 ? " (a SearXNG instance needs `json` in search.formats of its settings.yml)" : "";
      throw new Error(`${where} answered HTTP ${response.status}${hint}`);
    }
    let answer: SearxngAnswer;
    try {
      answer = JSON.parse(response.body.toString("utf8")) as SearxngAnswer;
    } catch {
      throw new Error(`${where} did not answer JSON`);
    }
    if (!Array.isArray(answer?.results)) throw new Error(`${where} answered JSON without a results array`);
    const results: SearchResult[] = [];
    for (const result of answer.results) {
      if (typeof result?.url !== "string" || result.url === "") continue;
      results.push({ title: typeof result.title === "string" ? result.title : "", url: result.url, snippet: typeof result.content === "string" ? result.content : "" });
      if (results.length === limit) break;
    }
    return results;
  }
}
