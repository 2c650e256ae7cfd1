// The platform admission's two ends beside settle(), on a real platform (PGlite and PostgreSQL): release() gives back
// the limits and the credit hold of a request that never ran, and settleWith() lets a caller commit the usage record
// (its credit hold with it) in its own transaction, have it recorded through the usage writer, or give the admission
// back; a commit that throws still has the usage recorded: each admission's usage is recorded at most once, and never
// lost. Also: a prepaid request priced at $0 holds nothing, and with the limit store down and --limits-fail-open a
// prepaid request still holds its credit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import type { AdmissionRequest } from "../http/accounting.js";
import { ProtocolError } from "../protocol/internal.js";
import { closedLoopbackPort } from "../testing/closed-port.js";
import { type Platform, openPlatform } from "./platform.js";
import { type UsageRecord, recordUsageIn } from "./store/usage-writer.js";
import { type FreshPlatform, TEST_BACKENDS, freshPlatform } from "./testing/test-databases.js";

const nano = (dollars: number) => Math.round(dollars * 1e9);
/** $1 a thousand input tokens, $2 a thousand output tokens. */
const PRICE = { inputPerMillion: 1000, outputPerMillion: 2000 };
const USED = { promptTokens: 10, cachedTokens: 0, completionTokens: 5 };

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`the platform admission's release and settleWith on ${backend.name}`, backend.reason), () => {
    let fresh: FreshPlatform;
    let platform: Platform;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      fresh = await freshPlatform(backend);
      platform = await openPlatform({ ...fresh.options, cacheMs: 0 });
    }, 60_000);
    afterAll(async () => {
      await platform?.close();
      await fresh?.remove();
    });

    /** A prepaid organization of `dollars` and `rpm`, and a request of 10 prompt and at most 20 output tokens by its key. */
    async function prepaid(name: string, dollars: number, rpm: number): Promise<{ id: string; request: AdmissionRequest }> {
      const organization = await platform.stores.organizations.create(name, { billingMode: "prepaid", creditBalanceDollars: dollars, prices: { "*": PRICE }, requestsPerMinute: rpm });
      const { record } = await platform.stores.keys.create(organization.id, "inference", name);
      const principal = { keyId: record.id, organizationId: organization.id, key: record };
      return { id: organization.id, request: { principal, format: "openai", model: "m", inputTokens: async () => 10, maxOutputTokens: () => 20 } };
    }
    const available = async (id: string) => nano(await platform.stores.credits.available(id));
    const balance = async (id: string) => nano((await platform.stores.organizations.get(id))!.creditBalanceDollars);
    const requests = async (id: string) => (await platform.stores.usage.rows(id)).reduce((sum, row) => sum + row.requests, 0);

    it("release() gives back the request's limits and its credit hold, and records nothing", async () => {
      const { id, request } = await prepaid("released", 1, 1);
      const admission = await platform.accountant.admit(request);
      // Held: 10 x $0.001 + 20 x $0.002.
      expect(await available(id)).toBe(nano(1) - nano(0.05));
      await expect(platform.accountant.admit(request)).rejects.toThrow(ProtocolError);
      await admission.release();
      expect(await available(id)).toBe(nano(1));
      // The one request a minute is free again.
      const again = await platform.accountant.admit(request);
      await again.release();
      expect(await requests(id)).toBe(0);
      expect(await balance(id)).toBe(nano(1));
    });

    it("settleWith() commits the record in the caller's transaction, its hold dropped with it, once", async () => {
      const { id, request } = await prepaid("committed", 1, 100);
      const admission = await platform.accountant.admit(request);
      const committed: UsageRecord[] = [];
      await admission.settleWith(USED, async (record) => {
        committed.push(record);
        await platform.database.transaction((tx) => recordUsageIn(tx, [record]));
        return "committed";
      });
      expect(committed).toHaveLength(1);
      expect(committed[0]).toMatchObject({ organizationId: id, requests: 1, inputTokens: 10, outputTokens: 5, creditHoldId: expect.any(String) });
      expect(await requests(id)).toBe(1);
      // 10 x $0.001 + 5 x $0.002 taken, and no hold left.
      expect(await balance(id)).toBe(nano(1) - nano(0.02));
      expect(await available(id)).toBe(await balance(id));
    });

    it("settleWith() records the usage through the usage writer when the caller did not commit it", async () => {
      const { id, request } = await prepaid("not committed", 1, 100);
      const admission = await platform.accountant.admit(request);
      await admission.settleWith(USED, async () => "record");
      expect(await requests(id)).toBe(1);
      expect(await balance(id)).toBe(nano(1) - nano(0.02));
      expect(await available(id)).toBe(await balance(id));
    });

    it("settleWith() records the usage through the usage writer when the caller's commit throws, and rethrows", async () => {
      const { id, request } = await prepaid("commit throws", 1, 100);
      const admission = await platform.accountant.admit(request);
      const failure = new Error("the step's transaction failed");
      await expect(admission.settleWith(USED, async (record) => {
        // Rolled back: the caller's transaction wrote the record, then failed.
        await platform.database.transaction(async (tx) => {
          await recordUsageIn(tx, [record]);
          throw failure;
        });
        return "committed";
      })).rejects.toBe(failure);
      expect(await requests(id)).toBe(1);
      expect(await balance(id)).toBe(nano(1) - nano(0.02));
      expect(await available(id)).toBe(await balance(id));
    });

    it("settleWith() gives the admission back when the caller releases it: nothing recorded, hold and limits freed", async () => {
      const { id, request } = await prepaid("released by commit", 1, 1);
      const admission = await platform.accountant.admit(request);
      await admission.settleWith(USED, async () => "release");
      expect(await requests(id)).toBe(0);
      expect(await balance(id)).toBe(nano(1));
      expect(await available(id)).toBe(nano(1));
      // The one request a minute is free again.
      await (await platform.accountant.admit(request)).release();
    });

    it("admits a prepaid request priced at $0 without a hold, even on a balance of 0, and records it at $0", async () => {
      const organization = await platform.stores.organizations.create("free model", { billingMode: "prepaid", creditBalanceDollars: 0, prices: { "*": { inputPerMillion: 0, outputPerMillion: 0 } } });
      const { record } = await platform.stores.keys.create(organization.id, "inference", "free");
      const request: AdmissionRequest = { principal: { keyId: record.id, organizationId: organization.id, key: record }, format: "openai", model: "m", inputTokens: async () => 10, maxOutputTokens: () => 20 };
      const admission = await platform.accountant.admit(request);
      const [holds] = await platform.database.query<{ n: unknown }>("SELECT count(*) AS n FROM credit_holds WHERE organization_id = $1", [organization.id]);
      expect(Number(holds!.n)).toBe(0);
      await admission.settle(USED);
      expect(await requests(organization.id)).toBe(1);
      expect(await balance(organization.id)).toBe(0);
    });
  });

  describe.skipIf(skipOutsideCi(backend.reason))(titled(`--limits-fail-open with the limit store down on ${backend.name}`, backend.reason), () => {
    let fresh: FreshPlatform;
    let platform: Platform;

    beforeAll(async () => {
      failIfMissing(backend.reason);
      fresh = await freshPlatform(backend, { redisUrl: `redis://127.0.0.1:${await closedLoopbackPort()}`, failOpen: true });
      platform = await openPlatform({ ...fresh.options, cacheMs: 0 });
    }, 60_000);
    afterAll(async () => {
      await platform?.close();
      await fresh?.remove();
    });

    const requestOf = async (name: string, dollars: number): Promise<{ id: string; request: AdmissionRequest }> => {
      const organization = await platform.stores.organizations.create(name, { billingMode: "prepaid", creditBalanceDollars: dollars, prices: { "*": PRICE } });
      const { record } = await platform.stores.keys.create(organization.id, "inference", name);
      return { id: organization.id, request: { principal: { keyId: record.id, organizationId: organization.id, key: record }, format: "openai", model: "m", inputTokens: async () => 10, maxOutputTokens: () => 20 } };
    };

    it("skips only the limits: a spent prepaid balance is still refused, and a funded one still holds the request's cost", async () => {
      const spent = await requestOf("spent while redis is down", 0);
      await expect(platform.accountant.admit(spent.request)).rejects.toMatchObject({ kind: "insufficient_quota" });
      const funded = await requestOf("funded while redis is down", 1);
      const admission = await platform.accountant.admit(funded.request);
      expect(nano(await platform.stores.credits.available(funded.id))).toBe(nano(1) - nano(0.05));
      await admission.settle(USED);
      expect(nano((await platform.stores.organizations.get(funded.id))!.creditBalanceDollars)).toBe(nano(1) - nano(0.02));
      expect(nano(await platform.stores.credits.available(funded.id))).toBe(nano(1) - nano(0.02));
    });
  });
}
