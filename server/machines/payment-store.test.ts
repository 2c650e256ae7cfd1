// The payments journal's transitions that checkout's tests reach only through timing, on PGlite and PostgreSQL: a
// failed payment settled later with its proof (its run created once), a lease renewed as a settlement starts, and
// the failed payments looked at again on chain (after a wait, within the window, while still valid or barely expired).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { TEST_BACKENDS, type TestDatabase } from "../platform/testing/test-databases.js";
import type { RunSpec } from "../runs/contract.js";
import { RunStore } from "../runs/run-store.js";
import { type NewPayment, PaymentStore } from "./payment-store.js";

const SPEC: RunSpec = { engine: "tim", content: ["What is loom?"], resources: [], skills: [], tools: [], timeoutSeconds: 60 };
const HASH = `0x${"ab".repeat(32)}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A payment of a fresh authorization, valid until `validBefore` (default: an hour from now). */
function payment(validBefore = Math.floor(Date.now() / 1000) + 3600): NewPayment {
  return {
    kind: "machine_search", x402Version: 2, network: "eip155:8453", asset: `0x${"11".repeat(20)}`, payTo: `0x${"22".repeat(20)}`,
    payer: `0x${"33".repeat(20)}`, nonce: `0x${randomBytes(32).toString("hex")}`, amount: 100_000n, validBefore,
    payloadDigest: "0".repeat(64), payload: { x402Version: 2 }, requirements: { scheme: "exact" }, runRequest: SPEC,
  };
}

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`payments journal on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let payments: PaymentStore;
    let runs: RunStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      payments = new PaymentStore(test.database);
      runs = new RunStore(test.database);
    });
    afterAll(async () => test?.dispose());

    async function reserved(validBefore?: number) {
      const reservation = await payments.reserve(payment(validBefore), 60_000);
      if (!("reserved" in reservation)) throw new Error("not reserved");
      return reservation.reserved;
    }

    it("settles a failed payment when the charge's proof comes in, creating its run once", async () => {
      const row = await reserved();
      expect(await payments.fail(row.id, "reverted (test)")).toMatchObject({ status: "failed" });
      // Without the transfer's hash there is no proof: it stays failed.
      expect(await payments.settle(row.id, undefined)).toMatchObject({ status: "failed" });
      expect(await runs.get(row.runId)).toBeUndefined();
      expect(await payments.settle(row.id, HASH.toUpperCase().replace("0X", "0x"))).toMatchObject({ status: "settled", transaction: HASH, runId: row.runId });
      expect(await runs.get(row.runId)).toMatchObject({ status: "queued", kind: "machine_search", spec: SPEC });
      // Again (a late settler): as it stands, no second run; a later fail() does not undo it.
      expect(await payments.settle(row.id, `0x${"cd".repeat(32)}`)).toMatchObject({ status: "settled", transaction: HASH });
      expect(await payments.fail(row.id, "late (test)")).toMatchObject({ status: "settled" });
    });

    it("renews a settling payment's lease, and reports a finished one as it stands", async () => {
      const row = await reserved();
      const before = await test.database.query<{ lease: string }>("SELECT lease_expires_at::text AS lease FROM payments WHERE id = $1", [row.id]);
      await pause(20);
      expect(await payments.renew(row.id, 600_000)).toMatchObject({ status: "settling" });
      const after = await test.database.query<{ later: boolean }>("SELECT lease_expires_at > $2::timestamptz + interval '500 seconds' AS later FROM payments WHERE id = $1", [row.id, before[0]!.lease]);
      expect(after[0]!.later).toBe(true);
      await payments.fail(row.id, "refused (test)");
      expect(await payments.renew(row.id, 600_000)).toMatchObject({ status: "failed", error: "refused (test)" });
    });

    it("takes failed payments to look at again: after a wait, while valid or expired within the margin, each once a wait", async () => {
      const now = Math.floor(Date.now() / 1000);
      const valid = await reserved();
      const barelyExpired = await reserved(now - 30);
      const longExpired = await reserved(now - 3600);
      const farFuture = await reserved(2 ** 62); // no overflow past 2^53 or in milliseconds
      const settling = await reserved();
      for (const row of [valid, barelyExpired, longExpired, farFuture]) await payments.fail(row.id, "failed (test)");
      const mine = (rows: Array<{ id: string }>) => rows.map((row) => row.id).filter((id) => [valid, barelyExpired, longExpired, farFuture, settling].some((row) => row.id === id)).sort();
      // Not before the wait.
      expect(mine(await payments.takeFailedToRecheck(100, 60_000, 3600_000, 120))).toEqual([]);
      await pause(250);
      expect(mine(await payments.takeFailedToRecheck(100, 200, 3600_000, 120))).toEqual([valid.id, barelyExpired.id, farFuture.id].sort());
      // Looked at just now: not again until the wait is over.
      expect(mine(await payments.takeFailedToRecheck(100, 200, 3600_000, 120))).toEqual([]);
      await pause(250);
      // Outside the window (created longer ago than it): never.
      expect(mine(await payments.takeFailedToRecheck(100, 200, 100, 120))).toEqual([]);
      expect(await payments.takeFailedToRecheck(1, 200, 3600_000, 120)).toHaveLength(1); // at most `limit`
    });
  });
}
