// SqlResponseStore on PGlite and PostgreSQL: stored responses round-trip as plain JSON, only their owner sees them,
// expired ones are invisible before cleanup, input items page in either order, and expired rows go in bounded
// batches; ResponseCleanup deletes batch after batch, one run at a time, and stops cleanly.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import type { JsonRecord, ResponseRecord, ResponseStore } from "../../adapters/responses/store.js";
import { PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { ResponseCleanup } from "./response-cleanup.js";
import { SqlResponseStore } from "./response-store.js";

const HOUR = 60 * 60 * 1000;

function newResponseId(): string {
  return `resp_${randomBytes(16).toString("hex")}`;
}

/** `count` input items `msg_0`, `msg_1`, ... in order. */
function items(count: number): JsonRecord[] {
  return Array.from({ length: count }, (_, index) => ({ id: `msg_${index}`, type: "message", role: "user", content: [{ type: "input_text", text: `turn ${index}` }] }));
}

/** A response of `owner` that expires `ttlMs` from now (negative: already expired). */
function record(owner: string, overrides: Partial<ResponseRecord> = {}, ttlMs = HOUR): ResponseRecord {
  const id = overrides.id ?? newResponseId();
  const now = Date.now();
  return {
    id,
    owner,
    createdAt: new Date(now - 1000),
    expiresAt: new Date(now + ttlMs),
    response: { id, object: "response", status: "completed", output: [] },
    inputItems: items(2),
    ...overrides,
  };
}

/** A fresh owner, so that each test's rows are its own. */
function newOwner(): string {
  return `org_${randomBytes(12).toString("hex")}`;
}

const ids = (page: { items: JsonRecord[] } | undefined) => page?.items.map((item) => item.id);

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`SqlResponseStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let store: SqlResponseStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      store = new SqlResponseStore(test.database);
    });
    afterAll(async () => test?.dispose());

    /** Removes every row, for the tests that count what deleteExpired finds. */
    const emptyTable = () => test.database.query("DELETE FROM responses");
    const countRows = async () => (await test.database.query<{ n: number }>("SELECT count(*)::int AS n FROM responses"))[0]!.n;

    it("gives back what it saved as plain JSON: nested objects, unicode, numbers, large items", async () => {
      const owner = newOwner();
      const long = "λ→🦙 ".repeat(20_000);
      const saved = record(owner, {
        response: {
          id: "resp_x",
          object: "response",
          created_at: 1_700_000_000,
          temperature: 0.7,
          metadata: { "ключ": "值", empty: {}, list: [1, "two", null, true, { deep: [[["🦙"]]] }] },
          output: [{ type: "message", content: [{ type: "output_text", text: 'quotes " and \\ backslashes\nnew line', annotations: [] }] }],
          usage: null,
        },
        inputItems: [...items(3), { id: "msg_big", type: "message", role: "user", content: [{ type: "input_text", text: long }] }],
      });
      await store.save(saved);
      const got = await store.get(owner, saved.id);
      expect(got).toEqual({ id: saved.id, response: saved.response, inputItems: saved.inputItems });
      // Plain data: the drivers parsed the jsonb, nothing is left as text.
      expect(typeof got!.response).toBe("object");
      expect(Array.isArray(got!.inputItems)).toBe(true);
      expect((got!.inputItems[3]!.content as Array<{ text: string }>)[0]!.text).toBe(long);
      const [row] = await test.database.query<{ created_at: Date; expires_at: Date }>("SELECT created_at, expires_at FROM responses WHERE id = $1", [saved.id]);
      expect(row).toEqual({ created_at: saved.createdAt, expires_at: saved.expiresAt });
    });

    it("refuses a second response with the same id, and malformed records", async () => {
      const owner = newOwner();
      const saved = record(owner);
      await store.save(saved);
      await expect(store.save({ ...saved, owner: newOwner() })).rejects.toMatchObject({ code: "23505" });
      expect((await store.get(owner, saved.id))?.response).toEqual(saved.response);

      const bad: Array<[string, Partial<ResponseRecord>]> = [
        ["owner", { owner: "" }],
        ["expiresAt", { expiresAt: new Date(Number.NaN) }],
        ["response", { response: [] as unknown as JsonRecord }],
        ["inputItems", { inputItems: {} as unknown as JsonRecord[] }],
        ["inputItems[1]", { inputItems: [{ id: "a" }, "b" as unknown as JsonRecord] }],
        ["inputItems[0].id", { inputItems: [{ type: "message" }] }],
      ];
      for (const [field, overrides] of bad) {
        const error = await store.save(record(owner, overrides)).then(() => undefined, (e: unknown) => e);
        expect(error, field).toBeInstanceOf(PlatformInputError);
        expect(error, field).toMatchObject({ field });
      }
    });

    it("shows a response to its owner only: another owner gets nothing and deletes nothing", async () => {
      const owner = newOwner();
      const other = newOwner();
      const saved = record(owner);
      await store.save(saved);
      expect(await store.get(other, saved.id)).toBeUndefined();
      expect(await store.inputItems(other, saved.id, { limit: 20, order: "asc" })).toBeUndefined();
      expect(await store.delete(other, saved.id)).toBe(false);
      expect(await store.get(owner, saved.id)).toEqual({ id: saved.id, response: saved.response, inputItems: saved.inputItems });
      expect(ids(await store.inputItems(owner, saved.id, { limit: 20, order: "asc" }))).toEqual(["msg_0", "msg_1"]);
      expect(await store.get(owner, newResponseId())).toBeUndefined();
      expect(await store.inputItems(owner, newResponseId(), { limit: 20, order: "asc" })).toBeUndefined();
    });

    it("hides an expired response before any cleanup: no get, no delete, no input items", async () => {
      const owner = newOwner();
      const expired = record(owner, {}, -1);
      await store.save(expired);
      expect(await store.get(owner, expired.id)).toBeUndefined();
      expect(await store.inputItems(owner, expired.id, { limit: 20, order: "desc" })).toBeUndefined();
      expect(await store.delete(owner, expired.id)).toBe(false);
      // Still there, for the cleanup job.
      expect(await test.database.query("SELECT id FROM responses WHERE id = $1", [expired.id])).toEqual([{ id: expired.id }]);

      // The store's clock decides: the same row as seen before and after it expires.
      const expiresAt = new Date(Date.now() + HOUR);
      const later = record(owner, { expiresAt });
      await store.save(later);
      const before = new SqlResponseStore(test.database, () => new Date(expiresAt.getTime() - 1));
      const at = new SqlResponseStore(test.database, () => expiresAt);
      expect(await before.get(owner, later.id)).toEqual({ id: later.id, response: later.response, inputItems: later.inputItems });
      expect(await at.get(owner, later.id)).toBeUndefined();
      expect(await at.delete(owner, later.id)).toBe(false);
      expect(await before.delete(owner, later.id)).toBe(true);
    });

    it("deletes once: then get finds nothing and a second delete is false", async () => {
      const owner = newOwner();
      const saved = record(owner);
      await store.save(saved);
      expect(await store.delete(owner, saved.id)).toBe(true);
      expect(await store.get(owner, saved.id)).toBeUndefined();
      expect(await store.inputItems(owner, saved.id, { limit: 20, order: "asc" })).toBeUndefined();
      expect(await store.delete(owner, saved.id)).toBe(false);
    });

    it("pages 45 input items oldest first, 20 at a time, after the last item of each page", async () => {
      const owner = newOwner();
      const saved = record(owner, { inputItems: items(45) });
      await store.save(saved);
      const first = await store.inputItems(owner, saved.id, { limit: 20, order: "asc" });
      expect(ids(first)).toEqual(Array.from({ length: 20 }, (_, i) => `msg_${i}`));
      expect(first!.hasMore).toBe(true);
      expect(first!.items[0]).toEqual(saved.inputItems[0]);
      const second = await store.inputItems(owner, saved.id, { limit: 20, order: "asc", after: "msg_19" });
      expect(ids(second)).toEqual(Array.from({ length: 20 }, (_, i) => `msg_${20 + i}`));
      expect(second!.hasMore).toBe(true);
      const third = await store.inputItems(owner, saved.id, { limit: 20, order: "asc", after: "msg_39" });
      expect(ids(third)).toEqual(["msg_40", "msg_41", "msg_42", "msg_43", "msg_44"]);
      expect(third!.hasMore).toBe(false);
      // A page that ends exactly at the last item has no more; after the last item: an empty page.
      expect(await store.inputItems(owner, saved.id, { limit: 5, order: "asc", after: "msg_39" })).toEqual({ items: third!.items, hasMore: false });
      expect(await store.inputItems(owner, saved.id, { limit: 20, order: "asc", after: "msg_44" })).toEqual({ items: [], hasMore: false });
    });

    it("pages 45 input items newest first, 20 at a time, after the last item of each page", async () => {
      const owner = newOwner();
      const saved = record(owner, { inputItems: items(45) });
      await store.save(saved);
      const first = await store.inputItems(owner, saved.id, { limit: 20, order: "desc" });
      expect(ids(first)).toEqual(Array.from({ length: 20 }, (_, i) => `msg_${44 - i}`));
      expect(first!.hasMore).toBe(true);
      const second = await store.inputItems(owner, saved.id, { limit: 20, order: "desc", after: "msg_25" });
      expect(ids(second)).toEqual(Array.from({ length: 20 }, (_, i) => `msg_${24 - i}`));
      expect(second!.hasMore).toBe(true);
      const third = await store.inputItems(owner, saved.id, { limit: 20, order: "desc", after: "msg_5" });
      expect(ids(third)).toEqual(["msg_4", "msg_3", "msg_2", "msg_1", "msg_0"]);
      expect(third!.hasMore).toBe(false);
      expect(await store.inputItems(owner, saved.id, { limit: 20, order: "desc", after: "msg_0" })).toEqual({ items: [], hasMore: false });
      expect(ids(await store.inputItems(owner, saved.id, { limit: 1, order: "desc", after: "msg_44" }))).toEqual(["msg_43"]);
    });

    it("answers an unknown after with an empty page, and a response without items with an empty page", async () => {
      const owner = newOwner();
      const saved = record(owner, { inputItems: items(3) });
      await store.save(saved);
      for (const order of ["asc", "desc"] as const) {
        expect(await store.inputItems(owner, saved.id, { limit: 20, order, after: "msg_missing" })).toEqual({ items: [], hasMore: false });
      }
      const empty = record(owner, { inputItems: [] });
      await store.save(empty);
      expect(await store.inputItems(owner, empty.id, { limit: 20, order: "asc" })).toEqual({ items: [], hasMore: false });
      expect(await store.get(owner, empty.id)).toMatchObject({ inputItems: [] });
      await expect(store.inputItems(owner, saved.id, { limit: 0, order: "asc" })).rejects.toMatchObject({ field: "limit" });
      await expect(store.inputItems(owner, saved.id, { limit: 20, order: "sideways" as "asc" })).rejects.toMatchObject({ field: "order" });
    });

    it("stores U+0000 and lone surrogates as U+FFFD, and finds nothing (never a database error) for an id holding them", async () => {
      const owner = newOwner();
      const saved = record(owner, { inputItems: [{ id: "msg_\u0000", type: "message", content: [{ type: "input_text", text: "a\u0000b\ud800" }] }, ...items(2)] });
      saved.response = { ...saved.response, instructions: "x\udc00y", metadata: { ["k\u0000"]: "v" } };
      await store.save(saved);
      const got = await store.get(owner, saved.id);
      expect(got!.response).toMatchObject({ instructions: "x\ufffdy", metadata: { "k\ufffd": "v" } });
      expect(got!.inputItems[0]).toEqual({ id: "msg_\ufffd", type: "message", content: [{ type: "input_text", text: "a\ufffdb\ufffd" }] });
      // An item's id is looked up as it was stored.
      expect(ids(await store.inputItems(owner, saved.id, { limit: 20, order: "asc", after: "msg_\u0000" }))).toEqual(["msg_0", "msg_1"]);
      for (const id of [`${saved.id}\u0000`, "resp_\ud800"]) {
        expect(await store.get(owner, id)).toBeUndefined();
        expect(await store.inputItems(owner, id, { limit: 20, order: "asc" })).toBeUndefined();
        expect(await store.delete(owner, id)).toBe(false);
      }
      expect(await store.get(owner, saved.id)).toMatchObject({ id: saved.id, response: { id: saved.id, instructions: "x\ufffdy" } });
    });

    it("deletes only expired responses, at most limit of them at a time, the oldest first", async () => {
      await emptyTable();
      const owner = newOwner();
      const now = new Date();
      const expired = Array.from({ length: 5 }, (_, i) => record(owner, { expiresAt: new Date(now.getTime() - (5 - i) * 1000) }));
      const boundary = record(owner, { expiresAt: now });
      const live = [record(newOwner(), { expiresAt: new Date(now.getTime() + 1) }), record(owner)];
      for (const saved of [...expired, boundary, ...live]) await store.save(saved);

      expect(await store.deleteExpired(now, 2)).toBe(2);
      const left = async () => (await test.database.query<{ id: string }>("SELECT id FROM responses ORDER BY expires_at")).map((row) => row.id);
      expect(await left()).toEqual([...expired.slice(2), boundary, ...live].map((saved) => saved.id));
      // expires_at = now counts as expired (reads already ignore it).
      expect(await store.deleteExpired(now, 10)).toBe(4);
      expect(await left()).toEqual(live.map((saved) => saved.id));
      expect(await store.deleteExpired(now, 10)).toBe(0);
      expect(await store.get(live[1]!.owner, live[1]!.id)).toMatchObject({ id: live[1]!.id, response: live[1]!.response });
      await expect(store.deleteExpired(now, 0)).rejects.toMatchObject({ field: "limit" });
    });

    it("ResponseCleanup.runOnce deletes batch after batch until a short one, keeping unexpired responses", async () => {
      await emptyTable();
      const owner = newOwner();
      for (let i = 0; i < 7; i++) await store.save(record(owner, {}, -1000 - i));
      const live = record(owner);
      await store.save(live);
      const batches: number[] = [];
      const counting: ResponseStore = {
        ...bind(store),
        async deleteExpired(now, limit) {
          const deleted = await store.deleteExpired(now, limit);
          batches.push(deleted);
          return deleted;
        },
      };
      const cleanup = new ResponseCleanup(counting, { batch: 3 });
      expect(await cleanup.runOnce()).toBe(7);
      expect(batches).toEqual([3, 3, 1]);
      expect(await countRows()).toBe(1);
      expect(await store.get(owner, live.id)).toMatchObject({ id: live.id, response: live.response });
      expect(await cleanup.runOnce()).toBe(0);

      // A multiple of the batch ends with an empty batch.
      for (let i = 0; i < 6; i++) await store.save(record(owner, {}, -1));
      batches.length = 0;
      expect(await cleanup.runOnce()).toBe(6);
      expect(batches).toEqual([3, 3, 0]);
    });

    it("ResponseCleanup uses its clock: what expires later stays until then", async () => {
      await emptyTable();
      const owner = newOwner();
      const soon = record(owner, {}, HOUR);
      await store.save(soon);
      await store.save(record(owner, {}, -1));
      expect(await new ResponseCleanup(store).runOnce()).toBe(1);
      expect(await new ResponseCleanup(store, { now: () => new Date(Date.now() + 2 * HOUR) }).runOnce()).toBe(1);
      expect(await countRows()).toBe(0);
    });
  });
}

/** The store's methods, bound, for a wrapper that replaces some of them. */
function bind(store: ResponseStore): ResponseStore {
  return {
    save: (record) => store.save(record),
    get: (owner, id) => store.get(owner, id),
    delete: (owner, id) => store.delete(owner, id),
    inputItems: (owner, id, page) => store.inputItems(owner, id, page),
    deleteExpired: (now, limit) => store.deleteExpired(now, limit),
  };
}

/** A store whose deleteExpired answers from `answer`, for the job's own behaviour (no database needed). */
function scriptedStore(answer: (now: Date, limit: number) => Promise<number>): ResponseStore {
  const unused = () => Promise.reject(new Error("not used"));
  return { save: unused, get: unused, delete: unused, inputItems: unused, deleteExpired: answer };
}

describe("ResponseCleanup", () => {
  it("never runs twice at once: a second runOnce joins the run in progress", async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const cleanup = new ResponseCleanup(
      scriptedStore(async () => {
        calls++;
        await gate;
        return 2;
      }),
      { batch: 5 },
    );
    const first = cleanup.runOnce();
    const second = cleanup.runOnce();
    expect(second).toBe(first);
    release();
    expect(await first).toBe(2);
    expect(calls).toBe(1);
    // Once it ended, a new call is a new run.
    expect(await cleanup.runOnce()).toBe(2);
    expect(calls).toBe(2);
  });

  it("stop() waits for the run in progress, and a failed run does not make stop() reject", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const cleanup = new ResponseCleanup(
      scriptedStore(async () => {
        await gate;
        finished = true;
        throw new Error("database gone");
      }),
    );
    const run = cleanup.runOnce();
    run.catch(() => {});
    let stopped = false;
    const stopping = cleanup.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    await expect(run).rejects.toThrow("database gone");
  });

  it("start() runs soon and then every interval on timers that never keep the process alive; errors go to onError", async () => {
    const nows: Date[] = [];
    const errors: unknown[] = [];
    let fail = false;
    const clock = new Date("2030-01-01T00:00:00Z");
    const cleanup = new ResponseCleanup(
      scriptedStore(async (now) => {
        nows.push(now);
        if (fail) throw new Error("boom");
        return 0;
      }),
      { intervalMs: 25, onError: (error) => errors.push(error), now: () => clock },
    );
    // The job's own timers, seen through spies (other timers of the test process come and go meanwhile).
    const timeouts = vi.spyOn(globalThis, "setTimeout");
    const intervals = vi.spyOn(globalThis, "setInterval");
    try {
      cleanup.start();
      cleanup.start(); // a second start changes nothing
      expect(timeouts).toHaveBeenCalledTimes(1);
      const first = timeouts.mock.results[0]!.value as NodeJS.Timeout;
      timeouts.mockRestore();
      expect(first.hasRef()).toBe(false);
      await until(() => nows.length >= 3);
      const every = intervals.mock.calls.flatMap((call, index) => (call[1] === 25 ? [intervals.mock.results[index]!.value as NodeJS.Timeout] : []));
      expect(every).toHaveLength(1);
      expect(every[0]!.hasRef()).toBe(false);
    } finally {
      timeouts.mockRestore();
      intervals.mockRestore();
    }
    expect(nows.every((now) => now === clock)).toBe(true);
    fail = true;
    await until(() => errors.length >= 2);
    expect((errors[0] as Error).message).toBe("boom");
    await cleanup.stop();
    const runs = nows.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(nows.length).toBe(runs);
  });

  it("refuses a batch or an interval below 1", () => {
    const store = scriptedStore(async () => 0);
    expect(() => new ResponseCleanup(store, { batch: 0 })).toThrow(RangeError);
    expect(() => new ResponseCleanup(store, { intervalMs: 0 })).toThrow(RangeError);
  });
});

/** Waits (up to 5 s) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
