// Tools with predictable results for tests of the agent loop and the runs API (the real web_search and read_page
// have tests of their own): a search that always finds one page, and a reader of two fixed pages. Arguments are
// short strings (maxLength), so a random-weight model's calls end within a small turn.
import type { ToolName } from "../contract.js";
import type { ToolFactory } from "../runs.js";

export const FIXED_PAGES: Record<string, string> = {
  "https://docs.example/loom": "Loom keeps its KV cache in fixed-size pages.",
  "https://docs.example/other": "Nothing to see.",
};
export const fixedTools: Record<ToolName, ToolFactory> = {
  web_search: () => ({
    name: "web_search",
    description: "Search the web.",
    parameters: { type: "object", properties: { query: { type: "string", maxLength: 40 } }, required: ["query"] },
    run: async (args) => `1. Loom docs - https://docs.example/loom - paged KV cache (query: ${String(args.query)})`,
  }),
  read_page: () => ({
    name: "read_page",
    description: "Read a web page.",
    parameters: { type: "object", properties: { url: { type: "string", maxLength: 60 } }, required: ["url"] },
    run: async (args) => {
      const page = FIXED_PAGES[String(args.url)];
      if (page === undefined) throw new Error(`could not read ${String(args.url)}: 404 Not Found`);
      return page;
    },
  }),
};

