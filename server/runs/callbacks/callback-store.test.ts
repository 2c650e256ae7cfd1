// CallbackStore on PGlite and PostgreSQL: enqueued with the run's end (or not at all), claimed under a lease, each
// attempt logged, then delivered, retried after the backoff, taken again after a lapsed lease, or given up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { PlatformInputError } from "../../platform/contract.js";
import { OrganizationStore } from "../../platform/store/organization-store.js";
import { TEST_BACKENDS, type TestDatabase } from "../../platform/testing/test-databases.js";
import type { RunCallbackPayload } from "./callback-payload.js";
import { CallbackStore, enqueueCallback, LOST_ATTEMPT_ERROR } from "./callback-store.js";
import { insertEndedRun } from "./testing/ended-runs.js";

const URL = "http://127.0.0.1:9/hooks";
// Backoffs, leases and windows are hundreds of milliseconds, not tens: with test files running in parallel on a
// loaded machine, the queries between two steps can take tens of milliseconds.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const payloadOf = (runId: string): RunCallbackPayload => ({ runId, status: "succeeded", result: { answer: "42" }, usage: { inputTokens: 3, outputTokens: 4, durationMs: 5 } });

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`CallbackStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let organizationId: string;
    let store: CallbackStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      organizationId = (await new OrganizationStore(test.database).create("Callbacks")).id;
      store = new CallbackStore(test.database, { baseMs: 400, factor: 2, capMs: 1000, jitter: 0, giveUpAfterMs: 60_000 });
    });
    afterAll(async () => test?.dispose());

    /** An ended run with a committed delivery. */
    async function enqueued(): Promise<string> {
      const runId = await insertEndedRun(test.database, organizationId);
      await test.database.transaction((tx) => enqueueCallback(tx, { runId, url: URL, payload: payloadOf(runId) }));
      return runId;
    }

    /** Claims until `runId` comes (other tests' rows may be due too), releasing nothing. */
    async function claim(runId: string, leaseMs = 60_000) {
      const claims = await store.claimDue(100, leaseMs);
      return claims.find((candidate) => candidate.runId === runId);
    }

    it("records the delivery with the transaction that ends the run, and not without it", async () => {
      const runId = await insertEndedRun(test.database, organizationId);
      const rolledBack = await test.database.transaction(async (tx) => {
        await enqueueCallback(tx, { runId, url: URL, payload: payloadOf(runId) });
        throw new Error("the run's end failed");
      }).then(() => undefined, (error: Error) => error.message);
      expect(rolledBack).toBe("the run's end failed");
      expect(await store.deliveryOf(runId)).toBeUndefined();

      const first = await test.database.transaction((tx) => enqueueCallback(tx, { runId, url: URL, payload: payloadOf(runId) }));
      expect(first).toEqual({ webhookId: expect.stringMatching(/^msg_[0-9a-f]{32}$/), enqueued: true });
      const again = await test.database.transaction((tx) => enqueueCallback(tx, { runId, url: `${URL}/other`, payload: { ...payloadOf(runId), result: "changed" } }));
      expect(again).toEqual({ webhookId: first.webhookId, enqueued: false });
      const [row] = await test.database.query("SELECT url, payload FROM run_callbacks WHERE run_id = $1", [runId]);
      expect(row).toEqual({ url: URL, payload: `{"runId":"${runId}","status":"succeeded","result":{"answer":"42"},"usage":{"inputTokens":3,"outputTokens":4,"durationMs":5}}` });
      expect(await store.deliveryOf(runId)).toMatchObject({ runId, url: URL, webhookId: first.webhookId, status: "pending", attempts: [], deliveredAt: null, gaveUpAt: null });
    });

    it("refuses a bad URL or payload, naming the field", async () => {
      const runId = await insertEndedRun(test.database, organizationId);
      const attempt = (delivery: Parameters<typeof enqueueCallback>[1]) =>
        test.database.transaction((tx) => enqueueCallback(tx, delivery)).then(() => undefined, (error: unknown) => error);
      const badUrl = await attempt({ runId, url: "ftp://example.com/x", payload: payloadOf(runId) });
      expect(badUrl).toBeInstanceOf(PlatformInputError);
      expect(badUrl).toMatchObject({ field: "url" });
      expect(await attempt({ runId, url: "not a url", payload: payloadOf(runId) })).toMatchObject({ field: "url" });
      expect(String(await attempt({ runId, url: URL, payload: payloadOf("run_other") }))).toMatch(/payload\.runId/);
      expect(String(await attempt({ runId, url: URL, payload: { ...payloadOf(runId), usage: { inputTokens: -1, outputTokens: 0, durationMs: 0 } } }))).toMatch(/payload\.usage\.inputTokens/);
      expect(String(await attempt({ runId, url: URL, payload: { runId, status: "failed", usage: { inputTokens: 0, outputTokens: 0, durationMs: 0 } } as never }))).toMatch(/payload\.error/);
      expect(await store.deliveryOf(runId)).toBeUndefined();
    });

    it("claims a due delivery once while its lease holds, then retries a failure after the backoff and marks a 2xx delivered", async () => {
      const runId = await enqueued();
      const first = await claim(runId);
      expect(first).toMatchObject({ runId, organizationId, url: URL, attempt: 1, webhookId: expect.stringMatching(/^msg_/) });
      expect(first!.payload).toContain(`"runId":"${runId}"`);
      expect(await claim(runId)).toBeUndefined();
      expect((await store.deliveryOf(runId))!.status).toBe("delivering");

      const failed = await store.recordAttempt(first!, { statusCode: 500, error: null, durationMs: 12 });
      expect(failed.status).toBe("retrying");
      const pending = await store.deliveryOf(runId);
      expect(pending!.status).toBe("pending");
      // The first wait is the base, 400 ms (no jitter here), counted on the database's clock.
      const [{ now }] = (await test.database.query<{ now: Date }>("SELECT now()")) as [{ now: Date }];
      expect(pending!.nextAttemptAt!.getTime() - now.getTime()).toBeLessThanOrEqual(400);
      expect(await claim(runId)).toBeUndefined();
      await sleep(600);
      const second = await claim(runId);
      expect(second).toMatchObject({ attempt: 2, webhookId: first!.webhookId, payload: first!.payload });
      expect(await store.recordAttempt(second!, { statusCode: 204, error: null, durationMs: 3 })).toEqual({ status: "delivered" });

      const delivery = await store.deliveryOf(runId);
      expect(delivery).toMatchObject({ status: "delivered", nextAttemptAt: null, gaveUpAt: null });
      expect(delivery!.deliveredAt).toBeInstanceOf(Date);
      expect(delivery!.attempts.map(({ attempt, statusCode, error, durationMs }) => ({ attempt, statusCode, error, durationMs }))).toEqual([
        { attempt: 1, statusCode: 500, error: null, durationMs: 12 },
        { attempt: 2, statusCode: 204, error: null, durationMs: 3 },
      ]);
      expect(delivery!.attempts[0]!.at.getTime()).toBeLessThanOrEqual(delivery!.attempts[1]!.at.getTime());
      await sleep(50);
      expect(await claim(runId)).toBeUndefined();
    });

    it("takes a claim whose lease lapsed unrecorded again, logging the lost attempt; its late outcome replaces that entry", async () => {
      const runId = await enqueued();
      const killed = await claim(runId, 500);
      expect(killed!.attempt).toBe(1);
      expect(await claim(runId)).toBeUndefined();
      await sleep(800);
      const retaken = await claim(runId);
      expect(retaken).toMatchObject({ attempt: 2, webhookId: killed!.webhookId });
      expect((await store.deliveryOf(runId))!.attempts).toMatchObject([{ attempt: 1, statusCode: null, error: LOST_ATTEMPT_ERROR }]);

      // The first claim was only stalled: its failure is logged, but the schedule is the second claim's.
      expect(await store.recordAttempt(killed!, { statusCode: null, error: "no response within 10 ms", durationMs: 130 })).toEqual({ status: "superseded" });
      expect((await store.deliveryOf(runId))!.status).toBe("delivering");
      expect(await store.recordAttempt(retaken!, { statusCode: 200, error: null, durationMs: 2 })).toEqual({ status: "delivered" });
      expect((await store.deliveryOf(runId))!.attempts).toMatchObject([
        { attempt: 1, statusCode: null, error: "no response within 10 ms", durationMs: 130 },
        { attempt: 2, statusCode: 200, error: null },
      ]);
    });

    it("starts the last attempt when the window ends, and gives up on its failure", async () => {
      const windowed = new CallbackStore(test.database, { baseMs: 10_000, factor: 2, capMs: 10_000, jitter: 0, giveUpAfterMs: 1500 });
      const runId = await enqueued();
      const first = await claim(runId);
      expect(await windowed.recordAttempt(first!, { statusCode: 503, error: null, durationMs: 1 })).toMatchObject({ status: "retrying" });
      const delivery = await windowed.deliveryOf(runId);
      // Not 10 s later: the window's end (1.5 s after the first attempt) comes first.
      expect(delivery!.nextAttemptAt!.getTime() - delivery!.attempts[0]!.at.getTime()).toBeLessThanOrEqual(1501);
      await sleep(2000);
      const last = await claim(runId);
      expect(last!.attempt).toBe(2);
      expect(await windowed.recordAttempt(last!, { statusCode: null, error: "connection refused", durationMs: 1 })).toEqual({ status: "gave_up" });
      const givenUp = await windowed.deliveryOf(runId);
      expect(givenUp).toMatchObject({ status: "gave_up", nextAttemptAt: null, deliveredAt: null });
      expect(givenUp!.gaveUpAt).toBeInstanceOf(Date);
      await sleep(20);
      expect(await claim(runId)).toBeUndefined();
    });

    it("logs nothing for a delivery whose run was deleted during its attempt", async () => {
      const runId = await enqueued();
      const claimed = await claim(runId);
      await test.database.query("DELETE FROM runs WHERE id = $1", [runId]);
      expect(await store.recordAttempt(claimed!, { statusCode: 200, error: null, durationMs: 1 })).toEqual({ status: "superseded" });
      expect(await store.deliveryOf(runId)).toBeUndefined();
    });

    it("never hands one delivery to two concurrent claimers", async () => {
      const runIds = new Set(await Promise.all(Array.from({ length: 12 }, () => enqueued())));
      const batches = await Promise.all(Array.from({ length: 6 }, () => store.claimDue(3, 60_000)));
      const claimed = batches.flat().filter((claimed) => runIds.has(claimed.runId)).map((claimed) => claimed.runId);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.length).toBeGreaterThan(0);
    });
  });
}
