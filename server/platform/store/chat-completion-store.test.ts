// SqlChatCompletionStore on PGlite and PostgreSQL: stored completions round-trip, only their owner sees, updates or
// deletes them, an id is stored once, expired ones are invisible before cleanup, the list pages in either order
// (ties in creation time broken by id) and filters by model and metadata, and messages page like input items.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import type { JsonRecord, StoredCompletionRecord } from "../../adapters/openai/stored.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { SqlChatCompletionStore } from "./chat-completion-store.js";

const HOUR = 60 * 60 * 1000;

function newId(): string {
  return `chatcmpl-${randomBytes(12).toString("hex")}`;
}

function newOwner(): string {
  return `org_${randomBytes(12).toString("hex")}`;
}

/** A completion of `owner`, created `createdAt`, expiring `ttlMs` later (negative: already expired). */
function record(owner: string, overrides: Partial<StoredCompletionRecord> = {}, ttlMs = HOUR): StoredCompletionRecord {
  const id = overrides.id ?? newId();
  const createdAt = overrides.createdAt ?? new Date(Date.now() - 1000);
  return {
    id,
    owner,
    model: "tiny",
    createdAt,
    expiresAt: new Date(Date.now() + ttlMs),
    metadata: {},
    completion: { id, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" } }] },
    messages: [0, 1, 2].map((index) => ({ id: `${id}-${index}`, role: "user", content: `turn ${index}` })),
    ...overrides,
  };
}

const ids = (page: { items: JsonRecord[] } | undefined) => page?.items.map((item) => item.id);

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`SqlChatCompletionStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let store: SqlChatCompletionStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      store = new SqlChatCompletionStore(test.database);
    });
    afterAll(async () => test?.dispose());

    it("round-trips a completion for its owner only, and stores an id once", async () => {
      const owner = newOwner();
      const saved = record(owner, { metadata: { user: "ada" } });
      await store.save(saved);
      expect(await store.get(owner, saved.id)).toStrictEqual({ id: saved.id, completion: saved.completion, metadata: { user: "ada" } });
      expect(await store.get(newOwner(), saved.id)).toBeUndefined();
      expect(await store.updateMetadata(newOwner(), saved.id, { user: "eve" })).toBeUndefined();
      expect(await store.delete(newOwner(), saved.id)).toBe(false);
      expect(await store.messages(newOwner(), saved.id, { limit: 10, order: "asc" })).toBeUndefined();
      // A second save of the same id (a retried write) fails: it never makes two rows or overwrites the first.
      await expect(store.save({ ...saved, metadata: { user: "again" } })).rejects.toThrow();
      expect((await store.get(owner, saved.id))?.metadata).toStrictEqual({ user: "ada" });
    });

    it("replaces metadata and deletes", async () => {
      const owner = newOwner();
      const saved = record(owner, { metadata: { a: "1", b: "2" } });
      await store.save(saved);
      expect((await store.updateMetadata(owner, saved.id, { c: "3" }))?.metadata).toStrictEqual({ c: "3" });
      expect((await store.get(owner, saved.id))?.metadata).toStrictEqual({ c: "3" });
      expect(await store.delete(owner, saved.id)).toBe(true);
      expect(await store.delete(owner, saved.id)).toBe(false);
      expect(await store.get(owner, saved.id)).toBeUndefined();
    });

    it("hides expired completions from every read before cleanup removes them", async () => {
      const owner = newOwner();
      const expired = record(owner, {}, -1000);
      await store.save(expired);
      expect(await store.get(owner, expired.id)).toBeUndefined();
      expect((await store.list(owner, {}, { limit: 10, order: "asc" })).items).toStrictEqual([]);
      expect(await store.updateMetadata(owner, expired.id, {})).toBeUndefined();
      expect(await store.messages(owner, expired.id, { limit: 10, order: "asc" })).toBeUndefined();
      expect(await store.deleteExpired(new Date(), 1000)).toBeGreaterThanOrEqual(1);
      const [row] = await test.database.query<{ n: number }>("SELECT count(*)::int AS n FROM chat_completions WHERE id = $1", [expired.id]);
      expect(row!.n).toBe(0);
    });

    it("pages the list in creation order, ties broken by id, either way", async () => {
      const owner = newOwner();
      const at = new Date(Date.now() - 60_000);
      // Two share a creation time: the id decides between them, in both orders.
      const saved = [record(owner, { createdAt: at, id: "chatcmpl-b" }), record(owner, { createdAt: at, id: "chatcmpl-a" }), record(owner, { createdAt: new Date(at.getTime() + 1) }), record(owner, { createdAt: new Date(at.getTime() + 2) })];
      for (const one of saved) await store.save(one);
      const ascending = ["chatcmpl-a", "chatcmpl-b", saved[2]!.id, saved[3]!.id];
      const first = await store.list(owner, {}, { limit: 3, order: "asc" });
      expect(ids(first)).toStrictEqual(ascending.slice(0, 3));
      expect(first.hasMore).toBe(true);
      const second = await store.list(owner, {}, { limit: 3, order: "asc", after: "chatcmpl-b" });
      expect(ids(second)).toStrictEqual(ascending.slice(2));
      expect(second.hasMore).toBe(false);
      expect(ids(await store.list(owner, {}, { limit: 10, order: "desc" }))).toStrictEqual([...ascending].reverse());
      expect(ids(await store.list(owner, {}, { limit: 10, order: "desc", after: saved[2]!.id }))).toStrictEqual(["chatcmpl-b", "chatcmpl-a"]);
      // An unknown `after` (or another owner's id) gives an empty page.
      expect((await store.list(owner, {}, { limit: 10, order: "asc", after: "chatcmpl-nope" })).items).toStrictEqual([]);
      await expect(store.list(owner, {}, { limit: 0, order: "asc" })).rejects.toBeInstanceOf(PlatformInputError);
    });

    it("filters by model and by every metadata pair", async () => {
      const owner = newOwner();
      const one = record(owner, { model: "tiny", metadata: { team: "red", env: "prod" } });
      const two = record(owner, { model: "tiny", metadata: { team: "red" } });
      const three = record(owner, { model: "other", metadata: { team: "blue", env: "prod" } });
      for (const saved of [one, two, three]) await store.save(saved);
      const list = async (filter: Parameters<SqlChatCompletionStore["list"]>[1]) => new Set(ids(await store.list(owner, filter, { limit: 10, order: "asc" })));
      expect(await list({ model: "tiny" })).toEqual(new Set([one.id, two.id]));
      expect(await list({ metadata: { team: "red" } })).toEqual(new Set([one.id, two.id]));
      expect(await list({ metadata: { team: "red", env: "prod" } })).toEqual(new Set([one.id]));
      expect(await list({ model: "other", metadata: { env: "prod" } })).toEqual(new Set([three.id]));
      expect(await list({ metadata: { team: "green" } })).toEqual(new Set());
    });

    it("pages a completion's messages in either order", async () => {
      const owner = newOwner();
      const saved = record(owner);
      await store.save(saved);
      const page = await store.messages(owner, saved.id, { limit: 2, order: "asc" });
      expect(ids(page)).toStrictEqual([`${saved.id}-0`, `${saved.id}-1`]);
      expect(page?.hasMore).toBe(true);
      expect(ids(await store.messages(owner, saved.id, { limit: 2, order: "asc", after: `${saved.id}-1` }))).toStrictEqual([`${saved.id}-2`]);
      expect(ids(await store.messages(owner, saved.id, { limit: 5, order: "desc" }))).toStrictEqual([`${saved.id}-2`, `${saved.id}-1`, `${saved.id}-0`]);
      expect(await store.messages(owner, saved.id, { limit: 5, order: "asc", after: "nope" })).toStrictEqual({ items: [], hasMore: false });
    });

    it("stores text the database cannot hold as U+FFFD, and finds it so", async () => {
      const owner = newOwner();
      const saved = record(owner, { metadata: { "k\u0000": "v\ud800" } });
      await store.save(saved);
      expect((await store.get(owner, saved.id))?.metadata).toStrictEqual({ "k\ufffd": "v\ufffd" });
      expect(ids(await store.list(owner, { metadata: { "k\u0000": "v\ud800" } }, { limit: 10, order: "asc" }))).toStrictEqual([saved.id]);
      expect(await store.get(owner, "chatcmpl-\u0000")).toBeUndefined();
    });
  });
}
