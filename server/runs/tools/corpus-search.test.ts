// The corpus on PGlite and PostgreSQL: documents added from files, replaced by URL, removed; CorpusSearch finds them
// by their words with English stemming, ranks title matches first, and web_search presents them to the model.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { CorpusStore } from "../../platform/store/corpus-store.js";
import { TEST_BACKENDS, type TestDatabase } from "../../platform/testing/test-databases.js";
import { listCorpusFiles, readCorpusFile } from "./corpus-files.js";
import { CorpusSearch } from "./corpus-search.js";
import { WebSearchTool } from "./web-search.js";

const signal = new AbortController().signal;

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`the corpus and CorpusSearch on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let store: CorpusStore;
    let search: CorpusSearch;
    let folder: string;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      store = new CorpusStore(test.database);
      search = new CorpusSearch(test.database);
      folder = mkdtempSync(join(tmpdir(), "loom-corpus-"));
      mkdirSync(join(folder, "web"));
      writeFileSync(join(folder, "kv.md"), "# Paged attention\n\nThe KV cache is split into fixed-size blocks, so that a request's cache grows without copying.\n");
      writeFileSync(join(folder, "web", "gcra.html"), "<html><head><title>Rate limiting with GCRA</title></head><body><nav>Home</nav><p>The generic cell rate algorithm keeps one timestamp per bucket.</p></body></html>");
      writeFileSync(join(folder, "notes.txt"), "Prefix caching reuses blocks of earlier prompts.");
    });
    afterAll(async () => {
      await test?.dispose();
      if (folder) rmSync(folder, { recursive: true, force: true });
    });

    it("adds documents read from files and finds them by their words, stemmed", async () => {
      const { files } = await listCorpusFiles([folder]);
      const documents = [];
      for (const file of files) documents.push(await readCorpusFile(file));
      expect(await store.add(documents as never)).toEqual({ added: 3, replaced: 0 });
      expect(await store.count()).toBe(3);

      // "caches" finds "cache", "caching"; the Markdown document's title matches too.
      const caches = await search.search("caches", 10, signal);
      expect(caches.map((result) => result.url).sort()).toEqual([pathToFileURL(join(folder, "kv.md")).href, pathToFileURL(join(folder, "notes.txt")).href].sort());
      const kv = caches.find((result) => result.url.endsWith("kv.md"))!;
      expect(kv.title).toBe("Paged attention");
      expect(kv.snippet).toContain("cache");

      const [gcra] = await search.search("limiting rates", 10, signal);
      expect(gcra).toMatchObject({ title: "Rate limiting with GCRA", url: pathToFileURL(join(folder, "web", "gcra.html")).href });
      expect(gcra!.snippet).toContain("generic cell rate algorithm");
      expect(gcra!.snippet).not.toContain("Home"); // the page's navigation was left out

      // What people type: quoted phrases, "or", -excluded words; nothing that matches, and only stop words.
      expect((await search.search('"fixed-size blocks" -prefix', 10, signal)).map((result) => result.title)).toEqual(["Paged attention"]);
      expect(await search.search("zebra", 10, signal)).toEqual([]);
      expect(await search.search("the of and", 10, signal)).toEqual([]);
      expect(await search.search("blocks", 1, signal)).toHaveLength(1);
    });

    it("replaces a document of the same URL, lists without bodies, removes and clears", async () => {
      const url = "https://example.org/doc";
      expect(await store.add([{ url, title: "First", body: "an old tokenizer" }, { url: "https://example.org/other", title: "Other", body: "x" }])).toEqual({ added: 2, replaced: 0 });
      expect(await store.add([{ url, title: "Second", body: "a new scheduler" }, { url, title: "Third", body: "a newer scheduler" }])).toEqual({ added: 0, replaced: 1 });
      expect(await search.search("tokenizer", 10, signal)).toEqual([]);
      expect((await search.search("schedulers", 10, signal)).map((result) => result.title)).toEqual(["Third"]);
      const entries = await store.list();
      expect(entries.find((entry) => entry.url === url)).toMatchObject({ title: "Third", bodyCharacters: "a newer scheduler".length });
      expect(entries[0]!.id).toMatch(/^doc_[0-9a-f]{24}$/);
      expect(entries[0]!.addedAt).toBeInstanceOf(Date);
      expect(await store.list({ limit: 1, offset: 1 })).toEqual([entries[1]]);
      expect(await store.remove(url)).toBe(true);
      expect(await store.remove(url)).toBe(false);
      const left = await store.count();
      expect(left).toBe(entries.length - 1);
      expect(await store.clear()).toBe(left);
      expect(await store.count()).toBe(0);
    });

    it("gives web_search's results as numbered text", async () => {
      await store.add([
        { url: "https://example.org/a", title: "Speculative decoding", body: "A draft model proposes tokens that the target model verifies in one pass." },
        { url: "https://example.org/b", title: "Sampling", body: "Top-p sampling keeps the smallest set of tokens whose probability reaches p." },
      ]);
      const tool = new WebSearchTool(search);
      const text = await tool.run({ query: "draft tokens verified" }, { signal });
      expect(text).toMatch(/^1\. Speculative decoding\n {3}https:\/\/example\.org\/a\n {3}.*draft model proposes tokens/);
      expect(await tool.run({ query: "kangaroo" }, { signal })).toBe('No results for "kangaroo".');
      expect((await tool.run({ query: "tokens", limit: 1 }, { signal })).split("\n\n")).toHaveLength(1);
      await expect(tool.run({ query: "tokens", limit: 11 }, { signal })).rejects.toThrow(/"limit" must be an integer from 1 to 10, got 11/);
      await expect(tool.run({ query: " " }, { signal })).rejects.toThrow(/web_search needs "query"/);
    });
  });
}
