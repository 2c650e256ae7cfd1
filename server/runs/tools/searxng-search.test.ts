// SearxngSearch against a server in this process that answers in SearXNG's JSON format: it stands in for a SearXNG
// instance, which cannot run here. The service's own host is allowed though it is on loopback.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SearxngSearch } from "./searxng-search.js";
import { WebSearchTool } from "./web-search.js";

const signal = new AbortController().signal;

describe("SearxngSearch", () => {
  let server: Server;
  let base: string;
  const seen: URL[] = [];
  let answer: { status: number; body: string } | undefined;
  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://x");
      seen.push(url);
      if (answer !== undefined) return void response.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
      if (url.pathname !== "/searx/search" || url.searchParams.get("format") !== "json") return void response.writeHead(404).end();
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
        query: url.searchParams.get("q"),
        number_of_results: 3,
        results: [
          { url: "https://example.org/paged", title: "PagedAttention", content: "Memory management for LLM serving.", engine: "duckduckgo", score: 2 },
          { title: "no url: skipped", content: "x" },
          { url: "https://example.org/radix", title: "RadixAttention", engine: "bing", score: 1 },
          { url: "https://example.org/third", title: "Third", content: "c" },
        ],
        answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines: [],
      }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise((resolve) => server.close(resolve)));

  it("asks {base}/search?q=...&format=json and maps results' title, url and content", async () => {
    answer = undefined;
    const search = new SearxngSearch({ baseUrl: `${base}/searx` });
    const results = await search.search("kv cache & paging", 2, signal);
    expect(seen.at(-1)!.searchParams.get("q")).toBe("kv cache & paging");
    expect(results).toEqual([
      { title: "PagedAttention", url: "https://example.org/paged", snippet: "Memory management for LLM serving." },
      { title: "RadixAttention", url: "https://example.org/radix", snippet: "" },
    ]);
    const text = await new WebSearchTool(search).run({ query: "kv cache" }, { signal });
    expect(text).toBe("1. PagedAttention\n   https://example.org/paged\n   Memory management for LLM serving.\n\n2. RadixAttention\n   https://example.org/radix\n\n3. Third\n   https://example.org/third\n   c");
  });

  it("says what went wrong: json not enabled, not JSON, no results array", async () => {
    const search = new SearxngSearch({ baseUrl: `${base}/searx/` });
    answer = { status: 403, body: "Forbidden" };
    await expect(search.search("q", 5, signal)).rejects.toThrow(`the search service at ${base} answered HTTP 403 (a SearXNG instance needs \`json\` in search.formats of its settings.yml)`);
    answer = { status: 200, body: "<html>" };
    await expect(search.search("q", 5, signal)).rejects.toThrow(`the search service at ${base} did not answer JSON`);
    answer = { status: 200, body: "{}" };
    await expect(search.search("q", 5, signal)).rejects.toThrow(`the search service at ${base} answered JSON without a results array`);
    answer = undefined;
    expect(() => new SearxngSearch({ baseUrl: "ftp://x" })).toThrow(/the SearXNG baseUrl must be an http or https URL/);
  });
});
