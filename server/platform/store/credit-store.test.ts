// CreditStore on PGlite and PostgreSQL: concurrent holds never exceed the balance, expired holds stop counting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { CreditStore } from "./credit-store.js";
import { OrganizationStore } from "./organization-store.js";

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`CreditStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let organizations: OrganizationStore;
    let credits: CreditStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      organizations = new OrganizationStore(test.database);
      credits = new CreditStore(test.database);
    });
    afterAll(async () => test?.dispose());

    it("admits exactly 10 of 50 concurrent holds when the balance covers 10", async () => {
      const organization = await organizations.create("Concurrent holds", { billingMode: "prepaid", creditBalanceDollars: 1 });
      // Against PostgreSQL these run on up to 8 connections at once; the row lock serializes them.
      const holds = await Promise.all(Array.from({ length: 50 }, () => credits.hold(organization.id, 0.1, 60_000)));
      const admitted = holds.filter((hold) => hold.admitted);
      expect(admitted).toHaveLength(10);
      expect(new Set(admitted.map((hold) => hold.admitted && hold.holdId)).size).toBe(10);
      expect(await credits.available(organization.id)).toBe(0);
      const refused = holds.find((hold) => !hold.admitted);
      expect(refused).toEqual({ admitted: false, availableDollars: 0 });
      // Releasing one makes room for exactly one more.
      const first = admitted[0]!;
      expect(await credits.release(first.admitted ? first.holdId : "")).toBe(true);
      expect((await credits.hold(organization.id, 0.1, 60_000)).admitted).toBe(true);
      expect((await credits.hold(organization.id, 0.1, 60_000)).admitted).toBe(false);
    });

    it("stops counting expired holds (a process killed while holding leaks nothing for long)", async () => {
      const organization = await organizations.create("Expiring holds", { billingMode: "prepaid", creditBalanceDollars: 1 });
      // No check that the short hold refuses others before it expires: on a loaded machine that races its TTL (the
      // 50-hold test shows unexpired holds count).
      const short = await credits.hold(organization.id, 0.6, 300);
      expect(short.admitted).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await credits.available(organization.id)).toBe(1);
      const later = await credits.hold(organization.id, 0.6, 60_000);
      expect(later).toMatchObject({ admitted: true, availableDollars: 0.4 });
      // The expired hold was deleted on the way.
      const rows = await test.database.query("SELECT id FROM credit_holds WHERE organization_id = $1", [organization.id]);
      expect(rows).toHaveLength(1);
    });

    it("refuses a hold larger than the balance, and bad input by field", async () => {
      const organization = await organizations.create("Small balance", { billingMode: "prepaid", creditBalanceDollars: 0.05 });
      expect(await credits.hold(organization.id, 0.050000001, 60_000)).toEqual({ admitted: false, availableDollars: 0.05 });
      expect((await credits.hold(organization.id, 0.05, 60_000)).admitted).toBe(true);
      await expect(credits.hold(organization.id, 0, 60_000)).rejects.toMatchObject({ field: "dollars" });
      await expect(credits.hold(organization.id, -1, 60_000)).rejects.toMatchObject({ field: "dollars" });
      await expect(credits.hold(organization.id, 1, 0)).rejects.toMatchObject({ field: "ttlMs" });
      await expect(credits.hold("org_missing", 1, 1000)).rejects.toMatchObject({ field: "organizationId", notFound: true });
      await expect(credits.available("org_missing")).rejects.toMatchObject({ field: "organizationId" });
      expect(await credits.release("hold_missing")).toBe(false);
    });
  });
}
