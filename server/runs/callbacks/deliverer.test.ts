// CallbackDeliverer on PGlite and PostgreSQL against a receiver on 127.0.0.1 that verifies every request with the
// `standardwebhooks` package: signed deliveries, retries after a 500 and a timeout, giving up, a killed deliverer's
// claim taken over after its lease, two deliverers never sending one attempt twice, and a clean stop.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import type { Database } from "../../platform/contract.js";
import { openDatabase } from "../../platform/db/open-database.js";
import { newWebhookSecret, WebhookSecretStore } from "../../platform/store/webhook-secret-store.js";
import { OrganizationStore } from "../../platform/store/organization-store.js";
import { TEST_BACKENDS, type TestDatabase } from "../../platform/testing/test-databases.js";
import type { BackoffPolicy } from "./backoff.js";
import type { RunCallbackPayload } from "./callback-payload.js";
import { organizationSecretResolver } from "./callback-secrets.js";
import { CallbackStore, type ClaimedCallback, enqueueCallback, LOST_ATTEMPT_ERROR } from "./callback-store.js";
import { CallbackDeliverer, type CallbackDelivererOptions } from "./deliverer.js";
import { insertEndedMachineRun, insertEndedRun } from "./testing/ended-runs.js";
import { loopbackOnlyPostForTests } from "./testing/loopback-transport.js";
import { type ReceiverScript, startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds (polling every 10 ms), failing after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const FAST: Partial<BackoffPolicy> = { baseMs: 30, factor: 2, capMs: 200, jitter: 0, giveUpAfterMs: 60_000 };
const payloadOf = (runId: string): RunCallbackPayload => ({ runId, status: "failed", error: { message: "the model stopped" }, usage: { inputTokens: 10, outputTokens: 2, durationMs: 900 } });

describe("the test-only loopback transport", () => {
  it("posts to 127.0.0.1 and nowhere else", async () => {
    const signal = new AbortController().signal;
    const request = { headers: {}, body: "{}", timeoutMs: 1000, signal };
    await expect(loopbackOnlyPostForTests({ ...request, url: "http://localhost:1/x" })).rejects.toThrow(/only posts to http:\/\/127\.0\.0\.1/);
    await expect(loopbackOnlyPostForTests({ ...request, url: "https://127.0.0.1:1/x" })).rejects.toThrow(/only posts/);
  });
});

describe("CallbackDeliverer without a database", () => {
  it("survives a failing store, reports each failure, and stops", async () => {
    const errors: unknown[] = [];
    const store = { claimDue: async () => { throw new Error("database unavailable"); } } as unknown as CallbackStore;
    const deliverer = new CallbackDeliverer({ store, post: loopbackOnlyPostForTests, secretFor: async () => newWebhookSecret(), pollIntervalMs: 10, onError: (error) => errors.push(error) });
    deliverer.start();
    await waitFor("three reported failures", () => errors.length >= 3);
    await deliverer.stop();
    expect(String(errors[0])).toContain("database unavailable");
  });

  it("names a bad option", () => {
    const base = { store: {} as CallbackStore, post: loopbackOnlyPostForTests, secretFor: async () => "" };
    expect(() => new CallbackDeliverer({ ...base, concurrency: 0 })).toThrow(/concurrency/);
    expect(() => new CallbackDeliverer({ ...base, timeoutMs: 1000, leaseMs: 1000 })).toThrow(/leaseMs/);
  });
});

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`CallbackDeliverer on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let organizationId: string;
    let secret: string;
    const serviceSecret = newWebhookSecret();
    /** Secrets by run id, for the receiver: the organization's, or the service's for machine runs. */
    const secretOfRun = new Map<string, string>();
    const cleanups: Array<() => Promise<void>> = [];
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      organizationId = (await new OrganizationStore(test.database).create("Receiving")).id;
      secret = await new WebhookSecretStore(test.database).webhookSecretOf(organizationId);
    });
    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });
    afterAll(async () => test?.dispose());

    async function receiver(script?: ReceiverScript): Promise<WebhookReceiver> {
      const started = await startWebhookReceiver((body) => secretOfRun.get(JSON.parse(body).runId) ?? "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", script);
      cleanups.push(() => started.close());
      return started;
    }

    function deliverer(options: Partial<CallbackDelivererOptions> & { backoff?: Partial<BackoffPolicy>; database?: Database } = {}): CallbackDeliverer {
      const database = options.database ?? test.database;
      const started = new CallbackDeliverer({
        store: new CallbackStore(database, options.backoff ?? FAST),
        post: loopbackOnlyPostForTests,
        secretFor: organizationSecretResolver(database, serviceSecret),
        pollIntervalMs: 20,
        timeoutMs: 2000,
        ...options,
      });
      started.start();
      cleanups.push(() => started.stop());
      return started;
    }

    /** An ended run of the organization with its delivery to `url`, committed. */
    async function endedRun(url: string, machine = false): Promise<{ runId: string; webhookId: string }> {
      const runId = machine ? await insertEndedMachineRun(test.database) : await insertEndedRun(test.database, organizationId);
      secretOfRun.set(runId, machine ? serviceSecret : secret);
      const { webhookId } = await test.database.transaction((tx) => enqueueCallback(tx, { runId, url, payload: payloadOf(runId) }));
      return { runId, webhookId };
    }

    const store = () => new CallbackStore(test.database, FAST);

    it("sends a signed callback as soon as notify() says one was enqueued; the receiver verifies it", async () => {
      const hooks = await receiver();
      const sender = deliverer({ pollIntervalMs: 60_000 });
      await sleep(50); // the loop's first look found nothing: only notify() can wake it within the test
      const { runId, webhookId } = await endedRun(hooks.url);
      sender.notify();
      await waitFor("the delivery", async () => (await store().deliveryOf(runId))?.status === "delivered");
      expect(hooks.received).toHaveLength(1);
      const [request] = hooks.received;
      expect(request!.verifyError).toBeUndefined();
      expect(request!.verified).toEqual(payloadOf(runId));
      expect(request!.headers["content-type"]).toBe("application/json");
      expect(request!.headers["webhook-id"]).toBe(webhookId);
      expect(Math.abs(Number(request!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(5);
      expect((await store().deliveryOf(runId))!.attempts).toMatchObject([{ attempt: 1, statusCode: 204, error: null }]);
    });

    it("retries a receiver that fails twice (a 500, then no answer) and delivers the third attempt, same id and body each time", async () => {
      const hooks = await receiver((index) => (index === 0 ? 500 : index === 1 ? "hang" : 200));
      deliverer({ timeoutMs: 300, leaseMs: 2000 });
      const { runId, webhookId } = await endedRun(hooks.url);
      await waitFor("the third attempt's success", async () => (await store().deliveryOf(runId))?.status === "delivered");
      const delivery = await store().deliveryOf(runId);
      expect(delivery!.attempts.map(({ attempt, statusCode, error }) => ({ attempt, statusCode, error }))).toEqual([
        { attempt: 1, statusCode: 500, error: null },
        { attempt: 2, statusCode: null, error: "no response within 300 ms" },
        { attempt: 3, statusCode: 200, error: null },
      ]);
      expect(delivery!.attempts[1]!.durationMs).toBeGreaterThanOrEqual(290);
      expect(hooks.received).toHaveLength(3);
      for (const request of hooks.received) {
        expect(request.verifyError).toBeUndefined();
        expect(request.headers["webhook-id"]).toBe(webhookId);
        expect(request.body).toBe(hooks.received[0]!.body);
      }
    });

    it("gives up when the window since the first attempt has passed", async () => {
      const hooks = await receiver(() => 500);
      // A 1 s window of attempts 40-80 ms apart: several attempts even on a loaded machine, where one takes 200 ms.
      deliverer({ backoff: { baseMs: 40, factor: 2, capMs: 80, jitter: 0, giveUpAfterMs: 1000 } });
      const { runId } = await endedRun(hooks.url);
      await waitFor("giving up", async () => (await store().deliveryOf(runId))?.status === "gave_up");
      const delivery = await store().deliveryOf(runId);
      expect(delivery!.attempts.length).toBeGreaterThanOrEqual(3);
      expect(delivery!.attempts.every((attempt) => attempt.statusCode === 500)).toBe(true);
      const [first, last] = [delivery!.attempts[0]!, delivery!.attempts.at(-1)!];
      // The last attempt started when the window ended (not before), and none after.
      expect(last.at.getTime() - first.at.getTime()).toBeGreaterThanOrEqual(999);
      expect(hooks.received).toHaveLength(delivery!.attempts.length);
      await sleep(150);
      expect(hooks.received).toHaveLength(delivery!.attempts.length);
    });

    it("delivers, after its lease, a callback a killed deliverer claimed and never recorded", async () => {
      const hooks = await receiver();
      const { runId } = await endedRun(hooks.url);
      // The "killed" deliverer: it claimed (the lease is taken) and died before sending or recording anything.
      const killed = (await store().claimDue(100, 400)).find((claim) => claim.runId === runId);
      expect(killed?.attempt).toBe(1);
      const attempts: ClaimedCallback[] = [];
      deliverer({ onAttempt: (claim) => attempts.push(claim) });
      await sleep(200);
      expect(hooks.received).toHaveLength(0);
      await waitFor("the delivery after the lease", async () => (await store().deliveryOf(runId))?.status === "delivered");
      expect(hooks.received).toHaveLength(1);
      expect(hooks.received[0]!.verifyError).toBeUndefined();
      expect((await store().deliveryOf(runId))!.attempts).toMatchObject([
        { attempt: 1, statusCode: null, error: LOST_ATTEMPT_ERROR },
        { attempt: 2, statusCode: 204 },
      ]);
    });

    it("signs a machine run's callback with the service-wide secret, and records an attempt that has no secret", async () => {
      const hooks = await receiver();
      const withService = deliverer();
      const { runId } = await endedRun(hooks.url, true);
      await waitFor("the machine run's delivery", async () => (await store().deliveryOf(runId))?.status === "delivered");
      expect(hooks.received[0]!.verifyError).toBeUndefined();
      // Stopped first: running beside the next one, it could claim the next run and sign it with the service secret.
      await withService.stop();

      const noService = deliverer({ secretFor: organizationSecretResolver(test.database) });
      const unsigned = await endedRun(hooks.url, true);
      noService.notify();
      await waitFor("the failed attempt", async () => ((await store().deliveryOf(unsigned.runId))?.attempts.length ?? 0) >= 1);
      expect((await store().deliveryOf(unsigned.runId))!.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringContaining("no service-wide webhook secret") });
    });

    it("lets stop() finish the attempts under way", async () => {
      const hooks = await receiver(async () => {
        await sleep(200);
        return 200;
      });
      const sender = deliverer();
      const { runId } = await endedRun(hooks.url);
      await waitFor("the request to arrive", () => hooks.received.length === 1);
      await sender.stop();
      expect((await store().deliveryOf(runId))!.status).toBe("delivered");
    });

    it("never sends one attempt twice from two deliverers on one database", async () => {
      const hooks = await receiver(async () => {
        await sleep(5);
        return 200;
      });
      // Two processes: on PostgreSQL, a second connection pool to the same schema; on PGlite (one process per data
      // dir), two deliverers on one instance.
      let second = test.database;
      if ("url" in test.where) {
        const where = test.where;
        second = await openDatabase({ url: where.url, schema: where.schema, poolSize: 4 });
        cleanups.unshift(() => second.close());
      }
      const runs = await Promise.all(Array.from({ length: 30 }, () => endedRun(hooks.url)));
      // Counted for these runs only: an earlier test's delivery without a secret is still being retried.
      const ours = new Set(runs.map((run) => run.runId));
      const byDeliverer = [0, 0];
      deliverer({ concurrency: 4, onAttempt: (claim) => ours.has(claim.runId) && byDeliverer[0]!++ });
      deliverer({ concurrency: 4, database: second, onAttempt: (claim) => ours.has(claim.runId) && byDeliverer[1]!++ });
      await waitFor("every delivery", async () => {
        const [row] = await test.database.query<{ count: string | number }>(
          "SELECT count(*) FROM run_callbacks WHERE delivered_at IS NOT NULL AND run_id = ANY(SELECT jsonb_array_elements_text($1::jsonb))",
          [JSON.stringify(runs.map((run) => run.runId))],
        );
        return Number(row!.count) === runs.length;
      });
      const ids = hooks.received.map((request) => request.headers["webhook-id"]);
      expect(ids).toHaveLength(runs.length);
      expect(new Set(ids)).toEqual(new Set(runs.map((run) => run.webhookId)));
      expect(hooks.received.every((request) => request.verifyError === undefined)).toBe(true);
      const [{ count }] = (await test.database.query<{ count: string | number }>(
        "SELECT count(*) FROM callback_attempts WHERE run_id = ANY(SELECT jsonb_array_elements_text($1::jsonb))",
        [JSON.stringify(runs.map((run) => run.runId))],
      )) as [{ count: string | number }];
      expect(Number(count)).toBe(runs.length);
      expect(byDeliverer[0]! + byDeliverer[1]!).toBe(runs.length);
    });
  });
}
