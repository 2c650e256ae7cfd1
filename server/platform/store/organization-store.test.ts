// OrganizationStore on PGlite and PostgreSQL: defaults of a new organization, patches and their validation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import { DEFAULT_ORGANIZATION_LIMITS, PlatformInputError } from "../contract.js";
import { TEST_BACKENDS, type TestDatabase } from "../testing/test-databases.js";
import { OrganizationStore } from "./organization-store.js";

/** The field a rejected promise's PlatformInputError names. */
async function fieldOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PlatformInputError);
  return (error as PlatformInputError).field;
}

for (const backend of TEST_BACKENDS) {
  describe.skipIf(skipOutsideCi(backend.reason))(titled(`OrganizationStore on ${backend.name}`, backend.reason), () => {
    let test: TestDatabase;
    let organizations: OrganizationStore;
    beforeAll(async () => {
      failIfMissing(backend.reason);
      test = await backend.open();
      organizations = new OrganizationStore(test.database);
    });
    afterAll(async () => test?.dispose());

    it("creates an organization with the default limits and nothing else set", async () => {
      const created = await organizations.create("Acme");
      expect(created.id).toMatch(/^org_[0-9a-f]{24}$/);
      expect(created).toMatchObject({
        name: "Acme",
        billingMode: null,
        plan: { label: null, status: null, isUnlimitedComp: false },
        dailyAllowance: null,
        creditBalanceDollars: 0,
        closedBeta: false,
        limits: DEFAULT_ORGANIZATION_LIMITS,
        prices: {},
      });
      expect(created.limits).toEqual({ requestsPerMinute: 100, tokensPerMinute: 1_000_000, tokensPerDay: 10_000_000 });
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(await organizations.get(created.id)).toEqual(created);
      expect(await organizations.get("org_missing")).toBeUndefined();
    });

    it("creates with fields and lists oldest first", async () => {
      const first = await organizations.create("First", { billingMode: "prepaid", creditBalanceDollars: 12.5, closedBeta: true });
      const second = await organizations.create("Second");
      expect(first).toMatchObject({ billingMode: "prepaid", creditBalanceDollars: 12.5, closedBeta: true });
      const ids = (await organizations.list()).map((organization) => organization.id);
      expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
    });

    it("applies a patch field by field and keeps what it does not name", async () => {
      const organization = await organizations.create("Patched");
      const updated = await organizations.update(organization.id, {
        planLabel: "Pro",
        planStatus: "active",
        isUnlimitedComp: true,
        billingMode: "subscription",
        allowanceBasis: "tokens",
        allowanceAmount: 500_000,
        allowanceHardCap: true,
        requestsPerMinute: 5,
        tokensPerDay: null,
        prices: { "smollm2-135m": { inputPerMillion: 0.1, outputPerMillion: 0.4 }, "*": { inputPerMillion: 1, outputPerMillion: 2 } },
      });
      expect(updated).toMatchObject({
        name: "Patched",
        billingMode: "subscription",
        plan: { label: "Pro", status: "active", isUnlimitedComp: true },
        dailyAllowance: { basis: "tokens", amount: 500_000, hardCap: true },
        limits: { requestsPerMinute: 5, tokensPerMinute: 1_000_000 },
      });
      expect(updated.limits.tokensPerDay).toBeUndefined();
      const repriced = await organizations.update(organization.id, { prices: { "*": null, "other": { inputPerMillion: 3, outputPerMillion: 3 } } });
      expect(repriced.prices).toEqual({ "smollm2-135m": { inputPerMillion: 0.1, outputPerMillion: 0.4 }, other: { inputPerMillion: 3, outputPerMillion: 3 } });
      const cleared = await organizations.update(organization.id, { allowanceBasis: null, billingMode: null });
      expect(cleared.dailyAllowance).toBeNull();
      expect(cleared.billingMode).toBeNull();
      expect(await organizations.get(organization.id)).toEqual(cleared);
    });

    it("sets and adds credits exactly to the micro-dollar", async () => {
      const organization = await organizations.create("Credits");
      await organizations.update(organization.id, { creditBalanceDollars: 10.000001 });
      const added = await organizations.update(organization.id, { addCreditsDollars: 0.000002 });
      expect(added.creditBalanceDollars).toBe(10.000003);
      const [row] = await test.database.query<{ credit_balance: string }>("SELECT credit_balance::text FROM organizations WHERE id = $1", [organization.id]);
      expect(row!.credit_balance).toBe("10.000003000");
    });

    it("refuses bad fields, naming each, and changes nothing", async () => {
      const organization = await organizations.create("Strict");
      const id = organization.id;
      expect(await fieldOf(organizations.create(""))).toBe("name");
      expect(await fieldOf(organizations.create("   "))).toBe("name");
      expect(await fieldOf(organizations.create("x".repeat(256)))).toBe("name");
      expect(await fieldOf(organizations.update(id, { billingMode: "monthly" as never }))).toBe("billingMode");
      expect(await fieldOf(organizations.update(id, { requestsPerMinute: 0 }))).toBe("requestsPerMinute");
      expect(await fieldOf(organizations.update(id, { tokensPerMinute: 1.5 }))).toBe("tokensPerMinute");
      expect(await fieldOf(organizations.update(id, { creditBalanceDollars: -1 }))).toBe("creditBalanceDollars");
      expect(await fieldOf(organizations.update(id, { creditBalanceDollars: Number.NaN }))).toBe("creditBalanceDollars");
      expect(await fieldOf(organizations.update(id, { closedBeta: "yes" as never }))).toBe("closedBeta");
      expect(await fieldOf(organizations.update(id, { allowanceBasis: "credit" }))).toBe("allowanceAmount");
      expect(await fieldOf(organizations.update(id, { allowanceAmount: 5 }))).toBe("allowanceBasis");
      expect(await fieldOf(organizations.update(id, { allowanceBasis: "tokens", allowanceAmount: 2.5 }))).toBe("allowanceAmount");
      expect(await fieldOf(organizations.update(id, { prices: { m: { inputPerMillion: -1, outputPerMillion: 1 } } }))).toBe("prices.m.inputPerMillion");
      expect(await fieldOf(organizations.update(id, { prices: { m: { inputPerMillion: 1 } as never } }))).toBe("prices.m.outputPerMillion");
      expect(await fieldOf(organizations.update(id, { planLabels: "x" } as never))).toBe("planLabels");
      const missing = await organizations.update("org_missing", { closedBeta: true }).then(() => undefined, (e: unknown) => e);
      expect(missing).toMatchObject({ field: "organizationId", notFound: true });
      expect(await organizations.get(id)).toEqual(organization);
    });
  });
}
