// The real tools and the callback transport of `loom serve`: web_search over the local corpus (or a SearXNG
// endpoint), read_page, and callbacks POSTed through the same SSRF-guarded client under the same network policy.
import type { Sql } from "../platform/contract.js";
import type { CallbackPost } from "./callbacks/callback-transport.js";
import type { ToolName } from "./contract.js";
import type { ToolFactory } from "./runs.js";
import { CorpusSearch } from "./tools/corpus-search.js";
import type { NetworkPolicy } from "./tools/network-policy.js";
import { ReadPageTool } from "./tools/read-page.js";
import { safeRequest } from "./tools/safe-http.js";
import { SearxngSearch } from "./tools/searxng-search.js";
import { type SearchProvider, WebSearchTool } from "./tools/web-search.js";

/** Where the tools may connect and search. */
export interface RunToolSettings {
  /** Addresses besides public ones that read_page and callbacks may reach (default: none). */
  network?: NetworkPolicy;
  /** A SearXNG-compatible endpoint for web_search; default: the local corpus in the platform database. */
  searchUrl?: string;
}

/** How each tool of a run is made from its `{id, options}` (options checked at creation: create-request.ts). */
export function runToolFactories(database: Sql, settings: RunToolSettings = {}): Record<ToolName, ToolFactory> {
  const provider: SearchProvider = settings.searchUrl
    ? new SearxngSearch({ baseUrl: settings.searchUrl, ...(settings.network ? { policy: settings.network } : {}) })
    : new CorpusSearch(database);
  return {
    web_search: (options) => new WebSearchTool(provider, typeof options.limit === "number" ? { defaultLimit: options.limit } : {}),
    read_page: (options) => new ReadPageTool({ ...(settings.network ? { policy: settings.network } : {}), ...(typeof options.maxChars === "number" ? { limits: { maxChars: options.maxChars } } : {}) }),
  };
}

/** Most bytes of a callback receiver's answer read (only its status matters). */
const CALLBACK_ANSWER_BYTES = 64 * 1024;

/**
 * Callbacks POSTed through the SSRF-guarded client: the same addresses refused as for read_page, redirects not
 * followed (a 3xx is a failed attempt, retried), the answer's body ignored past its status.
 */
export function guardedCallbackPost(network: NetworkPolicy = {}): CallbackPost {
  return async ({ url, headers, body, timeoutMs, signal }) => {
    const response = await safeRequest({ url, method: "POST", headers, body, timeoutMs, maxBytes: CALLBACK_ANSWER_BYTES, overflow: "truncate", maxRedirects: 0, policy: network, signal });
    return { status: response.status };
  };
}
