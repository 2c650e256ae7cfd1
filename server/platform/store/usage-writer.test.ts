// UsageWriter and UsageStore on PGlite and PostgreSQL: group commit sums exactly in fewer transactions than records,
// prepaid spend and credit holds settle in the same commit, and a failed batch rejects its own waiters only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { seededRandom as random } from "../../../engine/testing/seeded-random.js";
import { type Database, DatabaseUnavailableError, type KeyRecord, type Organization, PlatformInputError, type Sql, type UsageIncrement } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { CreditStore } from "./credit-store.js";
import { KeyStore } from "./key-store.js";
import { OrganizationStore } from "./organization-store.js";
import { UsageStore } from "./usage-store.js";
import { type BatchRead, recordUsageIn, UsageWriter } from "./usage-writer.js";

/**
 * The real database, counting the commits made through it: each transaction, and each statement run on its own
 * (autocommit; the writer commits a batch as one statement).
 */
function countingTransactions(database: Database): { database: Database; transactions: () => number } {
  let transactions = 0;
  return {
    database: {
      kind: database.kind,
      query: (text, params) => {
        transactions++;
        return database.query(text, params);
      },
      queryPrepared: (statement, params) => {
        transactions++;
        return database.queryPrepared(statement, params);
      },
      transaction: (work) => {
        transactions++;
        return database.transaction(work);
      },
      close: () => database.close(),
    },
    transactions: () => transactions,
  };
}

/**
 * The real database, whose batch statements first fail with `failures` in turn (as a deadlock, 40P01, arrives from
 * the driver: an error with its SQLSTATE in `code`), counting the attempts.
 */
function failingFirst(database: Database, failures: Error[]): { database: Database; attempts: () => number } {
  let attempts = 0;
  return {
    database: {
      kind: database.kind,
      query: (text, params) => database.query(text, params),
      transaction: (work) => database.transaction(work),
      close: () => database.close(),
      queryPrepared: (statement, params) => {
        const failure = failures[attempts++];
        return failure ? Promise.reject(failure) : database.queryPrepared(statement, params);
      },
    },
    attempts: () => attempts,
  };
}

const sqlError = (message: string, code?: string): Error => Object.assign(new Error(message), code === undefined ? {} : { code });

const DAY = "2031-03-04";

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`UsageWriter on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let organizations: OrganizationStore;
    let keys: KeyStore;
    let usage: UsageStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      organizations = new OrganizationStore(test.database);
      keys = new KeyStore(test.database);
      usage = new UsageStore(test.database);
    });
    afterAll(async () => test?.dispose());

    async function organizationWithKeys(name: string, fields = {}): Promise<{ organization: Organization; keys: KeyRecord[] }> {
      const organization = await organizations.create(name, fields);
      const a = await keys.create(organization.id, "inference", "a");
      const b = await keys.create(organization.id, "inference", "b");
      return { organization, keys: [a.record, b.record] };
    }

    it("commits 200 concurrent records as exact sums, in fewer transactions than records", async () => {
      const subscription = await organizationWithKeys("Group commit", { billingMode: "subscription" });
      const prepaid = await organizationWithKeys("Group commit prepaid", { billingMode: "prepaid", creditBalanceDollars: 1000 });
      const counted = countingTransactions(test.database);
      const writer = new UsageWriter(counted.database);
      const next = random(15);
      const increments: UsageIncrement[] = [];
      for (let i = 0; i < 200; i++) {
        const { organization, keys: pair } = i % 2 === 0 ? subscription : prepaid;
        const prepaidOne = organization.id === prepaid.organization.id;
        const input = Math.floor(next() * 5000);
        increments.push({
          organizationId: organization.id,
          keyId: pair[Math.floor(next() * 2)]!.id,
          model: next() < 0.5 ? "smollm2-135m" : "stories260k",
          day: next() < 0.8 ? DAY : "2031-03-05",
          requests: 1,
          inputTokens: input,
          cachedInputTokens: Math.floor(input * next()),
          outputTokens: Math.floor(next() * 800),
          spendDollars: prepaidOne ? Math.round(next() * 1e6) / 1e9 : 0,
        });
      }
      const before = new Date();
      await Promise.all(increments.map((increment) => writer.record(increment)));
      expect(counted.transactions()).toBeGreaterThan(0);
      expect(counted.transactions()).toBeLessThan(increments.length / 10);

      // Every (organization, key, model, day) row equals the sum of its increments, to the token.
      const expected = new Map<string, { requests: number; inputTokens: number; cachedInputTokens: number; outputTokens: number; spend: bigint }>();
      for (const increment of increments) {
        const key = [increment.organizationId, increment.keyId, increment.model, increment.day].join("|");
        const sum = expected.get(key) ?? { requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, spend: 0n };
        sum.requests += increment.requests;
        sum.inputTokens += increment.inputTokens;
        sum.cachedInputTokens += increment.cachedInputTokens;
        sum.outputTokens += increment.outputTokens;
        sum.spend += BigInt(Math.round(increment.spendDollars * 1e9));
        expected.set(key, sum);
      }
      const rows = [...(await usage.rows(subscription.organization.id)), ...(await usage.rows(prepaid.organization.id))];
      expect(rows).toHaveLength(expected.size);
      for (const row of rows) {
        const sum = expected.get([row.organizationId, row.keyId, row.model, row.day].join("|"))!;
        expect(row).toMatchObject({ requests: sum.requests, inputTokens: sum.inputTokens, cachedInputTokens: sum.cachedInputTokens, outputTokens: sum.outputTokens });
        expect(Math.round(row.spendDollars * 1e9)).toBe(Number(sum.spend));
      }
      // The prepaid balance lost exactly the spend, in nano-dollars; the subscription balance nothing.
      const totalSpend = [...expected.values()].reduce((total, sum) => total + sum.spend, 0n);
      const [balance] = await test.database.query<{ nano: string }>(
        "SELECT (credit_balance * 1000000000)::bigint::text AS nano FROM organizations WHERE id = $1",
        [prepaid.organization.id],
      );
      expect(BigInt(balance!.nano)).toBe(1000n * 1_000_000_000n - totalSpend);
      expect((await organizations.get(subscription.organization.id))!.creditBalanceDollars).toBe(0);

      // Reads: per-model totals of a day, consumed tokens (input + output) per organization and per key.
      const day = increments.filter((increment) => increment.organizationId === subscription.organization.id && increment.day === DAY);
      const perModel = await usage.today(subscription.organization.id, DAY);
      expect(perModel.map((model) => model.model)).toEqual([...new Set(day.map((increment) => increment.model))].sort());
      for (const model of perModel) {
        const ofModel = day.filter((increment) => increment.model === model.model);
        expect(model.requests).toBe(ofModel.length);
        expect(model.outputTokens).toBe(ofModel.reduce((total, increment) => total + increment.outputTokens, 0));
      }
      expect((await usage.consumed(subscription.organization.id, DAY)).tokens).toBe(day.reduce((total, increment) => total + increment.inputTokens + increment.outputTokens, 0));
      const keyId = subscription.keys[0]!.id;
      expect((await usage.consumed(subscription.organization.id, DAY, keyId)).tokens).toBe(
        day.filter((increment) => increment.keyId === keyId).reduce((total, increment) => total + increment.inputTokens + increment.outputTokens, 0),
      );
      expect(await usage.consumed(subscription.organization.id, "2031-01-01")).toEqual({ tokens: 0, spendDollars: 0 });
      // The organization-wide rows (migration 9's trigger) equal usage_daily's sums exactly, both ways.
      const sums = `SELECT organization_id, day, model, sum(requests) AS requests, sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
        sum(output_tokens) AS output_tokens, sum(spend) AS spend FROM usage_daily GROUP BY organization_id, day, model`;
      const rollup = "SELECT organization_id, day, model, requests, input_tokens, cached_input_tokens, output_tokens, spend FROM usage_by_organization";
      expect(await test.database.query(`(${sums}) EXCEPT (${rollup})`)).toEqual([]);
      expect(await test.database.query(`(${rollup}) EXCEPT (${sums})`)).toEqual([]);
      const series = await usage.series(subscription.organization.id, DAY, DAY);
      expect(series).toEqual(perModel.map((model) => ({ day: DAY, ...model })));
      expect(await usage.today(subscription.organization.id, "2031-01-01")).toEqual([]);

      // Last use came with the batches: no write per request, and not before the records began.
      for (const record of await keys.list(subscription.organization.id)) {
        expect(record.lastUsedAt).not.toBeNull();
        expect(record.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
      }
      await writer.close();
    });

    it("takes prepaid spend from the balance and drops the request's credit hold in the same commit", async () => {
      const { organization, keys: [key] } = await organizationWithKeys("Holds", { billingMode: "prepaid", creditBalanceDollars: 1 });
      const credits = new CreditStore(test.database);
      const hold = await credits.hold(organization.id, 0.25, 60_000);
      if (!hold.admitted) throw new Error("the hold was refused");
      expect(await credits.available(organization.id)).toBe(0.75);
      const writer = new UsageWriter(test.database);
      await writer.record({
        organizationId: organization.id, keyId: key!.id, model: "m", day: DAY, requests: 1, inputTokens: 10, cachedInputTokens: 0, outputTokens: 5,
        spendDollars: 0.1, creditHoldId: hold.holdId,
      });
      expect((await organizations.get(organization.id))!.creditBalanceDollars).toBe(0.9);
      expect(await credits.available(organization.id)).toBe(0.9);
      expect(await test.database.query("SELECT id FROM credit_holds WHERE organization_id = $1", [organization.id])).toEqual([]);
    });

    it("reads the batch's keys and organizations back as the stores read them (as of the commit's start); a reader that throws fails nothing", async () => {
      const fields = {
        billingMode: "prepaid", creditBalanceDollars: 12.345678, tokensPerMinute: 5000, allowanceBasis: "tokens", allowanceAmount: 100_000,
        allowanceHardCap: true, prices: { m: { inputPerMillion: 0.15, outputPerMillion: 0.6 } },
      } as const;
      const { organization } = await organizationWithKeys("Read back", fields);
      const created = await keys.create(organization.id, "inference", "limited", { limits: { requestsPerMinute: 7 }, allowedModels: ["m"] });
      const other = await organizationWithKeys("Read back, the other");
      const reads: BatchRead[] = [];
      const writer = new UsageWriter(test.database, (read) => reads.push(read));
      const before = Date.now();
      const increment = (organizationId: string, keyId: string): UsageIncrement => ({
        organizationId, keyId, model: "m", day: DAY, requests: 1, inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, spendDollars: 0.000001,
      });
      await Promise.all([writer.record(increment(organization.id, created.record.id)), writer.record(increment(other.organization.id, other.keys[0]!.id))]);
      const keysRead = reads.flatMap((read) => read.keys);
      const organizationsRead = reads.flatMap((read) => read.organizations);
      expect(keysRead.map(({ record }) => record.id).sort()).toEqual([created.record.id, other.keys[0]!.id].sort());
      expect(organizationsRead.map(({ id }) => id).sort()).toEqual([organization.id, other.organization.id].sort());
      for (const read of reads) expect(read.readAt).toBeGreaterThanOrEqual(before);
      // The same records the stores give (the key as it was before the commit moved its last use).
      const key = keysRead.find(({ record }) => record.id === created.record.id)!;
      expect(key.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(key.record).toEqual({ ...(await keys.findByDigest(key.digest))!, lastUsedAt: null });
      expect(key.record).toMatchObject({ limits: { requestsPerMinute: 7 }, allowedModels: ["m"], createdAt: created.record.createdAt });
      const organizationRead = organizationsRead.find(({ id }) => id === organization.id)!;
      expect(organizationRead).toEqual({ ...(await organizations.get(organization.id))!, creditBalanceDollars: 12.345678 });
      expect(organizationRead).toMatchObject({ dailyAllowance: { basis: "tokens", amount: 100_000, hardCap: true }, prices: fields.prices });

      const throwing = new UsageWriter(test.database, () => {
        throw new Error("a reader that throws");
      });
      await throwing.record(increment(organization.id, created.record.id));
      expect((await organizations.get(organization.id))!.creditBalanceDollars).toBe(12.345676);
    });

    it("rejects every waiter of a failing batch with DatabaseUnavailableError, applies none of it, and commits the next", async () => {
      const { organization, keys: [key] } = await organizationWithKeys("Failing batch");
      const writer = new UsageWriter(test.database);
      const increment = (keyId: string, outputTokens: number): UsageIncrement => ({
        organizationId: organization.id, keyId, model: "m", day: DAY, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens, spendDollars: 0,
      });
      // The first record starts a batch at once; the next two wait for it and share the second batch, which fails on
      // the key that does not exist (a foreign key violation).
      const first = writer.record(increment(key!.id, 1));
      const bad = writer.record(increment("key_missing", 10));
      const sharing = writer.record(increment(key!.id, 100));
      const [firstResult, badResult, sharingResult] = await Promise.allSettled([first, bad, sharing]);
      expect(firstResult.status).toBe("fulfilled");
      for (const result of [badResult, sharingResult]) {
        expect(result.status).toBe("rejected");
        expect((result as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseUnavailableError);
        // The driver's own error: PostgreSQL's foreign key violation.
        expect(((result as PromiseRejectedResult).reason as Error).cause).toMatchObject({ code: "23503" });
      }
      await writer.record(increment(key!.id, 1000));
      const rows = await usage.rows(organization.id, DAY);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ requests: 2, outputTokens: 1001 });
    });

    it("refuses a malformed increment alone, naming its field, without failing the others", async () => {
      const { organization, keys: [key] } = await organizationWithKeys("Malformed");
      const writer = new UsageWriter(test.database);
      const good: UsageIncrement = { organizationId: organization.id, keyId: key!.id, model: "m", day: DAY, requests: 1, inputTokens: 3, cachedInputTokens: 0, outputTokens: 4, spendDollars: 0 };
      const results = await Promise.allSettled([
        writer.record(good),
        writer.record({ ...good, outputTokens: -1 }),
        writer.record({ ...good, day: "2031-02-30" }),
        writer.record({ ...good, inputTokens: 1.5 }),
        writer.record({ ...good, spendDollars: Number.NaN }),
        writer.record({ ...good, organizationId: "" }),
        writer.record({ ...good, keyId: " " }),
        writer.record({ ...good, model: 7 as unknown as string }),
        writer.record({ ...good, creditHoldId: "" }),
        writer.record(good),
      ]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", ...Array(8).fill("rejected"), "fulfilled"]);
      expect(results.slice(1, 9).map((result) => ((result as PromiseRejectedResult).reason as PlatformInputError).field)).toEqual(
        ["outputTokens", "day", "inputTokens", "spendDollars", "organizationId", "keyId", "model", "creditHoldId"],
      );
      expect((await usage.rows(organization.id))[0]).toMatchObject({ requests: 2, inputTokens: 6, outputTokens: 8 });
    });

    it("retries a batch PostgreSQL rolled back (class 40) up to three attempts, and no other failure", async () => {
      const { organization, keys: [key] } = await organizationWithKeys("Retries");
      const increment: UsageIncrement = { organizationId: organization.id, keyId: key!.id, model: "m", day: DAY, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, spendDollars: 0 };
      const deadlock = () => sqlError("deadlock detected", "40P01");
      const twice = failingFirst(test.database, [deadlock(), sqlError("could not serialize access", "40001")]);
      await new UsageWriter(twice.database).record(increment);
      expect(twice.attempts()).toBe(3);
      expect((await usage.rows(organization.id))[0]).toMatchObject({ requests: 1 });

      const always = failingFirst(test.database, [deadlock(), deadlock(), deadlock(), deadlock()]);
      const error = await new UsageWriter(always.database).record(increment).then(() => undefined, (e: unknown) => e);
      expect(always.attempts()).toBe(3);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).message).toBe("usage was not recorded: deadlock detected");
      expect((await usage.rows(organization.id))[0]).toMatchObject({ requests: 1 });

      // Another SQLSTATE (a foreign key, 23503; one ending in 40), or none: the first failure is the answer.
      for (const failure of [sqlError("violates foreign key", "23503"), sqlError("other", "XX040"), sqlError("connection lost")]) {
        const once = failingFirst(test.database, [failure, failure]);
        await expect(new UsageWriter(once.database).record(increment)).rejects.toThrow(new DatabaseUnavailableError(`usage was not recorded: ${failure.message}`));
        expect(once.attempts(), failure.message).toBe(1);
      }
      const unavailable = new DatabaseUnavailableError("the database is down");
      const passed = failingFirst(test.database, [unavailable]);
      expect(await new UsageWriter(passed.database).record(increment).then(() => undefined, (e: unknown) => e)).toBe(unavailable);
    });

    it("adds usage inside the caller's transaction: committed with it, rolled back with it, checked first", async () => {
      const { organization, keys: [key] } = await organizationWithKeys("In a transaction", { billingMode: "prepaid", creditBalanceDollars: 1 });
      const increment: UsageIncrement = { organizationId: organization.id, keyId: key!.id, model: "m", day: DAY, requests: 1, inputTokens: 7, cachedInputTokens: 0, outputTokens: 3, spendDollars: 0.25 };
      const at = new Date("2031-03-04T12:00:00.000Z");
      await test.database.transaction((tx) => recordUsageIn(tx, [increment, { ...increment, outputTokens: 5 }], at));
      expect((await usage.rows(organization.id))[0]).toMatchObject({ requests: 2, inputTokens: 14, outputTokens: 8 });
      expect((await organizations.get(organization.id))!.creditBalanceDollars).toBe(0.5);
      expect((await keys.get(organization.id, key!.id))!.lastUsedAt).toEqual(at);
      await expect(test.database.transaction(async (tx) => {
        await recordUsageIn(tx, [increment]);
        throw new Error("the run's step failed");
      })).rejects.toThrow("the run's step failed");
      expect((await usage.rows(organization.id))[0]).toMatchObject({ requests: 2 });
      // Nothing to add: not a statement. A malformed increment: refused before any.
      const statements: string[] = [];
      const counting = { query: (text: string, params?: unknown[]) => (statements.push(text), test.database.query(text, params)) } as Sql;
      await recordUsageIn(counting, []);
      await expect(recordUsageIn(counting, [increment, { ...increment, keyId: "" }])).rejects.toMatchObject({ field: "keyId" });
      expect(statements).toEqual([]);
    });

    it("flush() waits for what was recorded; close() refuses later records", async () => {
      const { organization, keys: [key] } = await organizationWithKeys("Flush");
      const writer = new UsageWriter(test.database);
      const increment: UsageIncrement = { organizationId: organization.id, keyId: key!.id, model: "m", day: DAY, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, spendDollars: 0 };
      const pending = Array.from({ length: 20 }, () => writer.record(increment));
      await writer.flush();
      expect((await usage.rows(organization.id))[0]?.requests).toBe(20);
      await Promise.all(pending);
      // close() waits for the batch committing and the records queued behind it.
      const queued = Array.from({ length: 5 }, () => writer.record(increment));
      await writer.close();
      expect((await usage.rows(organization.id))[0]?.requests).toBe(25);
      await Promise.all(queued);
      await expect(writer.record(increment)).rejects.toThrow("the usage writer is closed");
    });
  });

  describe.skipIf(skipOutsideCi(backend.reason))(titled(`UsageWriter on a closed ${backend.name} database`, backend.reason), () => {
    it("rejects with DatabaseUnavailableError", async () => {
      failIfMissing(backend.reason);
      const test = await backend.open();
      try {
        const organization = await new OrganizationStore(test.database).create("Closed");
        const { record } = await new KeyStore(test.database).create(organization.id, "inference", "k");
        const writer = new UsageWriter(test.database);
        await test.database.close();
        const error = await writer
          .record({ organizationId: organization.id, keyId: record.id, model: "m", day: DAY, requests: 1, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, spendDollars: 0 })
          .then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(DatabaseUnavailableError);
      } finally {
        await test.dispose();
      }
    });
  });
}
