// The dashboard's keyset pages and usage series on PGlite and PostgreSQL: keys, organizations, payments and runs
// paged across pages without duplicates or gaps (microsecond ties included), stable while rows are inserted, and
// the usage series summed over keys per day and model within its days and organization only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { RunStore } from "../runs/run-store.js";
import type { RunSpec } from "../runs/contract.js";
import type { KeyRecord } from "../platform/contract.js";
import { insertPayment } from "./testing/payment-rows.js";
import { TEST_BACKENDS, type TestDatabase } from "../platform/testing/test-databases.js";
import type { Page } from "../platform/store/page.js";
import { createPlatformStores, type PlatformStores } from "../platform/store/platform-stores.js";
import { recordUsageIn } from "../platform/store/usage-writer.js";

/** Every item of a listing, page by page, with the page sizes. */
async function readAll<T, K>(first: () => Promise<Page<T, K>>, next: (after: K) => Promise<Page<T, K>>): Promise<{ items: T[]; sizes: number[] }> {
  const items: T[] = [];
  const sizes: number[] = [];
  let page = await first();
  for (;;) {
    items.push(...page.items);
    sizes.push(page.items.length);
    if (page.next === undefined) return { items, sizes };
    page = await next(page.next);
  }
}

const SPEC: RunSpec = { engine: "tim", content: ["What is loom?"], resources: [], skills: [], tools: [], timeoutSeconds: 60 };

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`the dashboard's pages on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let stores: PlatformStores;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      stores = createPlatformStores(test.database);
    }, 60_000);
    afterAll(async () => test?.dispose());

    it("pages an organization's keys newest first, across pages, with kind filter and microsecond ties, stable under inserts", async () => {
      const acme = await stores.organizations.create("Acme keys");
      const other = await stores.organizations.create("Other keys");
      const created: KeyRecord[] = [];
      for (let i = 0; i < 7; i++) created.push((await stores.keys.create(acme.id, i % 3 === 0 ? "management" : "inference", `key ${i}`)).record);
      await stores.keys.create(other.id, "inference", "not acme's");
      // Three keys share one microsecond and two differ by one microsecond: the order falls to the id, then the time.
      await test.database.query(`UPDATE api_keys SET created_at = '2020-01-01T00:00:00.000001Z' WHERE id = ANY($1::text[])`, [[created[1]!.id, created[2]!.id, created[4]!.id]]);
      await test.database.query(`UPDATE api_keys SET created_at = '2020-01-01T00:00:00.000002Z' WHERE id = $1`, [created[5]!.id]);
      const rows = await test.database.query<{ id: string; kind: string }>(
        `SELECT id, kind FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id DESC`, [acme.id]);
      const expected = rows.map((row) => row.id);

      const all = await readAll((() => stores.keys.page(acme.id, { limit: 2 })), (after) => stores.keys.page(acme.id, { limit: 2, after }));
      expect(all.items.map((key) => key.id)).toEqual(expected);
      expect(all.sizes).toEqual([2, 2, 2, 1]);
      const inference = await readAll(() => stores.keys.page(acme.id, { kind: "inference", limit: 2 }), (after) => stores.keys.page(acme.id, { kind: "inference", limit: 2, after }));
      expect(inference.items.map((key) => key.id)).toEqual(rows.filter((row) => row.kind === "inference").map((row) => row.id));
      expect(inference.items.every((key) => key.organizationId === acme.id && key.kind === "inference")).toBe(true);

      // A key created between pages is newer than every listed one: the next pages neither repeat nor skip.
      const first = await stores.keys.page(acme.id, { limit: 3 });
      await stores.keys.create(acme.id, "inference", "created meanwhile");
      const rest = await readAll(() => stores.keys.page(acme.id, { limit: 3, after: first.next! }), (after) => stores.keys.page(acme.id, { limit: 3, after }));
      expect([...first.items, ...rest.items].map((key) => key.id)).toEqual(expected);
      // A page exactly at the end says so (eight keys now).
      expect((await stores.keys.page(acme.id, { limit: 7 })).next).toBeDefined();
      expect((await stores.keys.page(acme.id, { limit: 8 })).next).toBeUndefined();
      expect((await stores.keys.page(other.id, { limit: 100 })).items.map((key) => key.name)).toEqual(["not acme's"]);
    });

    it("pages organizations oldest first", async () => {
      const names = ["Org A", "Org B", "Org C", "Org D", "Org E"];
      for (const name of names) await stores.organizations.create(name);
      const all = await readAll(() => stores.organizations.page({ limit: 2 }), (after) => stores.organizations.page({ limit: 2, after }));
      const listed = (await stores.organizations.list()).map((organization) => organization.id);
      expect(all.items.map((organization) => organization.id)).toEqual(listed);
      expect(all.items.slice(-5).map((organization) => organization.name)).toEqual(names);
    });

    it("searches organizations by a part of the name (any case, no wildcards) or the whole id, paged", async () => {
      const made = [];
      for (const name of ["Zeta Searchable one", "zeta SEARCHABLE two", "Other 100%_x", "Zeta searchable three"]) made.push(await stores.organizations.create(name));
      const search = async (text: string, limit = 1) => (await readAll(() => stores.organizations.page({ limit, search: text }), (after) => stores.organizations.page({ limit, after, search: text }))).items.map((organization) => organization.name);
      expect(await search("zeta searchable")).toEqual(["Zeta Searchable one", "zeta SEARCHABLE two", "Zeta searchable three"]);
      expect(await search("%")).toEqual(["Other 100%_x"]);
      expect(await search("0%_")).toEqual(["Other 100%_x"]);
      expect(await search("_")).toEqual(["Other 100%_x"]);
      expect(await search(made[1]!.id)).toEqual(["zeta SEARCHABLE two"]);
      expect(await search(made[1]!.id.slice(0, -1))).toEqual([]);
      expect(await search("no such organization", 50)).toEqual([]);
    });

    it("pages payments newest first, with a status filter and microsecond ties", async () => {
      const ids: Array<{ id: string; status: string; at: string }> = [];
      const statuses = ["settled", "failed", "settling"] as const;
      for (let i = 0; i < 9; i++) {
        const at = `2031-01-01T00:00:00.00000${i < 3 ? 1 : i}Z`;
        ids.push({ id: await insertPayment(test.database, i, statuses[i % 3]!, at), status: statuses[i % 3]!, at });
      }
      const order = [...ids].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1));
      const all = await readAll(() => stores.payments.page({ limit: 4 }), (after) => stores.payments.page({ limit: 4, after }));
      expect(all.items.map((payment) => payment.id)).toEqual(order.map((payment) => payment.id));
      expect(all.items[0]).toEqual({
        id: order[0]!.id, kind: "machine_search", status: order[0]!.status, x402Version: 2, payer: expect.stringMatching(/^0x/), payTo: `0x${"1".padStart(40, "0")}`,
        amount: "1000", asset: `0x${"1".padStart(40, "0")}`, network: "eip155:8453", transaction: null, runId: expect.stringMatching(/^run_/), error: null,
        createdAt: "2031-01-01T00:00:00.000Z", settledAt: order[0]!.status === "settled" ? expect.any(String) : null,
      });
      const failed = await readAll(() => stores.payments.page({ limit: 1, status: "failed" }), (after) => stores.payments.page({ limit: 1, status: "failed", after }));
      expect(failed.items.map((payment) => payment.id)).toEqual(order.filter((payment) => payment.status === "failed").map((payment) => payment.id));
    });

    it("pages an organization's runs newest first, with the question, a status filter, and no other organization's", async () => {
      const owner = await stores.organizations.create("Run owner");
      const stranger = await stores.organizations.create("Run stranger");
      const ownerKey = (await stores.keys.create(owner.id, "inference", "runs")).record.id;
      const strangerKey = (await stores.keys.create(stranger.id, "inference", "runs")).record.id;
      const runs = new RunStore(test.database);
      const made: string[] = [];
      for (let i = 0; i < 6; i++) {
        const content = i === 0 ? ["x".repeat(300)] : i === 1 ? [] : i === 5 ? [] : [`question ${i}`, "second part"];
        // The last run is given as input.instructions alone: its instructions are its question.
        const instructions = i === 5 ? `instructions ${"y".repeat(300)}` : i === 2 ? "not the question" : undefined;
        made.push((await runs.create({ kind: "legacy", organizationId: owner.id, keyId: ownerKey, spec: { ...SPEC, content, ...(instructions ? { instructions } : {}) } }))!.id);
        await runs.create({ kind: "legacy", organizationId: stranger.id, keyId: strangerKey, spec: SPEC });
      }
      const all = await readAll(() => runs.pageOfOrganization(owner.id, { limit: 2 }), (before) => runs.pageOfOrganization(owner.id, { limit: 2, before }));
      expect(all.items.map((listed) => listed.run.id)).toEqual([...made].reverse());
      expect(all.items.map((listed) => listed.question)).toEqual([`instructions ${"y".repeat(187)}`, "question 4", "question 3", "question 2", null, "x".repeat(200)]);
      expect(all.items[0]!.run).not.toHaveProperty("spec");
      // Two taken by a worker: the filter shows those only.
      await test.database.query(`UPDATE runs SET status = 'processing', lease_expires_at = now() + interval '1 minute' WHERE id = ANY($1::text[])`, [[made[1], made[3]]]);
      const processing = await readAll(() => runs.pageOfOrganization(owner.id, { limit: 1, status: "processing" }), (before) => runs.pageOfOrganization(owner.id, { limit: 1, status: "processing", before }));
      expect(processing.items.map((listed) => [listed.run.id, listed.run.status])).toEqual([[made[3], "processing"], [made[1], "processing"]]);
    });

    it("sums the usage series over keys per day and model, within its days and organization, ordered by day then model", async () => {
      const acme = await stores.organizations.create("Series");
      const other = await stores.organizations.create("Series other");
      const [a, b] = [(await stores.keys.create(acme.id, "inference", "a")).record.id, (await stores.keys.create(acme.id, "inference", "b")).record.id];
      const o = (await stores.keys.create(other.id, "inference", "o")).record.id;
      const row = (organizationId: string, keyId: string, model: string, day: string, n: number) =>
        ({ organizationId, keyId, model, day, requests: n, inputTokens: 10 * n, cachedInputTokens: n, outputTokens: 100 * n, spendDollars: n / 1000 });
      await test.database.transaction((tx) => recordUsageIn(tx, [
        row(acme.id, a, "m-b", "2032-03-02", 1), row(acme.id, b, "m-b", "2032-03-02", 2), row(acme.id, a, "m-a", "2032-03-02", 4),
        row(acme.id, a, "m-a", "2032-03-01", 8), row(acme.id, a, "m-a", "2032-02-29", 16), row(acme.id, b, "m-a", "2032-03-04", 32),
        row(other.id, o, "m-a", "2032-03-02", 64),
      ]));
      const series = await stores.usage.series(acme.id, "2032-03-01", "2032-03-03");
      expect(series).toEqual([
        { day: "2032-03-01", model: "m-a", requests: 8, inputTokens: 80, cachedInputTokens: 8, outputTokens: 800, spendDollars: 0.008 },
        { day: "2032-03-02", model: "m-a", requests: 4, inputTokens: 40, cachedInputTokens: 4, outputTokens: 400, spendDollars: 0.004 },
        { day: "2032-03-02", model: "m-b", requests: 3, inputTokens: 30, cachedInputTokens: 3, outputTokens: 300, spendDollars: 0.003 },
      ]);
      expect(await stores.usage.series(acme.id, "2032-01-01", "2032-01-01")).toEqual([]);
      await expect(stores.usage.series(acme.id, "2032-01-01", "2032-04-01")).rejects.toMatchObject({ field: "from" });
      await expect(stores.usage.series(acme.id, "2032-03-02", "2032-03-01")).rejects.toMatchObject({ field: "from" });
      await expect(stores.usage.series(acme.id, "2032-02-30", "2032-03-01")).rejects.toMatchObject({ field: "from" });

      // Per key over the same days, summed over models: b used more tokens than a there (32 on 03-04 is outside).
      const figures = (n: number) => ({ requests: n, inputTokens: 10 * n, cachedInputTokens: n, outputTokens: 100 * n, spendDollars: n / 1000 });
      expect(await stores.usage.keyTotals(acme.id, "2032-03-01", "2032-03-03", 10)).toEqual({
        keys: [{ keyId: a, name: "a", keyPrefix: expect.any(String), ...figures(13) }, { keyId: b, name: "b", keyPrefix: expect.any(String), ...figures(2) }],
        keysWithUse: 2,
      });
      expect(await stores.usage.keyTotals(acme.id, "2032-03-01", "2032-03-04", 1)).toEqual({ keys: [{ keyId: b, name: "b", keyPrefix: expect.any(String), ...figures(34) }], keysWithUse: 2 });
      expect(await stores.usage.keyTotals(acme.id, "2032-01-01", "2032-01-01", 10)).toEqual({ keys: [], keysWithUse: 0 });
      await expect(stores.usage.keyTotals(acme.id, "2032-01-01", "2032-04-01", 10)).rejects.toMatchObject({ field: "from" });
      await expect(stores.usage.keyTotals(acme.id, "2032-03-01", "2032-03-02", 0)).rejects.toMatchObject({ field: "limit" });
    });
  });
}
