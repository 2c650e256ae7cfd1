// The corpus admin commands (corpus.add, corpus.list, corpus.remove, corpus.clear) through runAdminCommand on PGlite
// and PostgreSQL: their JSON results, and each bad field named.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../contract.js";
import { createPlatformStores, type PlatformStores } from "../store/platform-stores.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { formatAdminResult } from "./admin-text.js";
import { type CorpusEntryJson, runAdminCommand } from "./run-admin-command.js";

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`corpus admin commands on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let stores: PlatformStores;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      stores = createPlatformStores(test.database);
    });
    afterAll(async () => test?.dispose());

    async function refused(command: unknown): Promise<PlatformInputError> {
      const error = await runAdminCommand(stores, command).then(() => undefined, (e: unknown) => e);
      expect(error, JSON.stringify(command)).toBeInstanceOf(PlatformInputError);
      return error as PlatformInputError;
    }

    it("adds, lists, removes and clears documents, answering JSON", async () => {
      const documents = [{ url: "https://example.org/a", title: "A", body: "alpha text" }, { url: "file:///srv/b.md", title: "B", body: "beta" }];
      const added = await runAdminCommand(stores, { command: "corpus.add", documents });
      expect(added).toEqual({ added: 2, replaced: 0, count: 2 });
      expect(formatAdminResult("corpus.add", added)).toBe("added 2, replaced 0; the corpus holds 2 documents\n");
      expect(await runAdminCommand(stores, { command: "corpus.add", documents: [{ ...documents[0]!, body: "new" }] })).toEqual({ added: 0, replaced: 1, count: 2 });
      const listed = (await runAdminCommand(stores, { command: "corpus.list" })) as { count: number; documents: CorpusEntryJson[] };
      expect(listed.count).toBe(2);
      expect(listed.documents.map(({ url, title, bodyCharacters }) => ({ url, title, bodyCharacters }))).toEqual([
        { url: "https://example.org/a", title: "A", bodyCharacters: 3 }, { url: "file:///srv/b.md", title: "B", bodyCharacters: 4 },
      ]);
      expect(typeof listed.documents[0]!.addedAt).toBe("string");
      expect(await runAdminCommand(stores, { command: "corpus.list", limit: 0 })).toEqual({ count: 2, documents: [] });
      expect(await runAdminCommand(stores, { command: "corpus.remove", url: "file:///srv/b.md" })).toEqual({ url: "file:///srv/b.md", removed: true });
      const missing = await refused({ command: "corpus.remove", url: "file:///srv/b.md" });
      expect([missing.field, missing.message, missing.notFound]).toEqual(["url", "the corpus has no document file:///srv/b.md", true]);
      expect(await runAdminCommand(stores, { command: "corpus.clear" })).toEqual({ removed: 1 });
    });

    it("names the bad field of a corpus command", async () => {
      const cases: Array<[unknown, string, RegExp]> = [
        [{ command: "corpus.add", documents: [] }, "documents", /documents must be an array of 1 to 1000 documents/],
        [{ command: "corpus.add", documents: [{ url: "u", title: "t" }] }, "documents.0.body", /documents\.0\.body must be a string of at most 500000 characters, got nothing/],
        [{ command: "corpus.add", documents: [{ url: "u", title: "t", body: "b" }, { url: " ", title: "t", body: "b" }] }, "documents.1.url", /documents\.1\.url must be a non-empty string/],
        [{ command: "corpus.add", documents: [{ url: "u", title: "t", body: "x".repeat(500_001) }] }, "documents.0.body", /got '500001 characters'/],
        [{ command: "corpus.add", documents: [{ url: "u", title: "t", body: "a\u0000b" }] }, "documents.0.body", /holds U\+0000 \(NUL\) at character 2/],
        [{ command: "corpus.add", documents: [{ url: "u", title: "a\ud800", body: "b" }] }, "documents.0.title", /holds a lone surrogate U\+D800 at character 2/],
        [{ command: "corpus.remove", url: "file:///a\u0000" }, "url", /url holds U\+0000/],
        [{ command: "corpus.add", documents: [{ url: "u", title: "t", body: "b", extra: 1 }] }, "documents.0.extra", /unknown field documents\.0\.extra/],
        [{ command: "corpus.list", limit: -1 }, "limit", /limit must be an integer >= 0/],
        [{ command: "corpus.remove" }, "url", /url must be a document's URL/],
        [{ command: "corpus.clear", everything: true }, "everything", /unknown field everything/],
      ];
      for (const [command, field, message] of cases) {
        const error = await refused(command);
        expect(error.field, JSON.stringify(command).slice(0, 100)).toBe(field);
        expect(error.message).toMatch(message);
      }
    });
  });
}
