// The usage snapshot of spec 2.6 from an organization and its rows: shapes, the consumedToday definition, percent
// past 100, the unavailable shape, and the next UTC midnight.
import { describe, expect, it } from "vitest";
import type { Organization, UsageRow } from "./contract.js";
import { usageSnapshot } from "./usage-snapshot.js";

const NOW = Date.UTC(2026, 10, 25, 15, 30); // 2026-11-25T15:30Z
const organization = (patch: Partial<Organization> = {}): Organization => ({
  id: "org_1", name: "Acme", billingMode: "subscription", plan: { label: "Team", status: "active", isUnlimitedComp: false },
  dailyAllowance: { basis: "tokens", amount: 1000, hardCap: false }, creditBalanceDollars: 12.5, closedBeta: true,
  limits: {}, prices: { "m-priced": { inputPerMillion: 1, outputPerMillion: 2 } }, createdAt: new Date(NOW), ...patch,
});
const row = (model: string, inputTokens: number, outputTokens: number, spendDollars = 0, keyId = "key_a"): UsageRow => ({
  organizationId: "org_1", keyId, model, day: "2026-11-25", requests: 1, inputTokens, cachedInputTokens: 0, outputTokens, spendDollars,
});

describe("usage snapshot", () => {
  it("sums input and output tokens per model over every key, leaving out models without tokens", () => {
    const snapshot = usageSnapshot(organization(), [row("a", 100, 50), row("a", 10, 5, 0, "key_b"), row("b", 0, 0)], NOW);
    expect(snapshot).toEqual({
      billingMode: "subscription",
      plan: { label: "Team", status: "active", isUnlimitedComp: false, dailyAllowance: { basis: "tokens", percent: 16.5, resetAt: "2026-11-26T00:00:00.000Z" } },
      credits: { balanceDollars: 12.5, overageThisPeriodDollars: 0 },
      models: [{ slug: "a", consumedToday: 165 }],
    });
  });

  it("reports a percent above 100 when the day's use passed the allowance", () => {
    expect(usageSnapshot(organization(), [row("a", 1500, 600)], NOW).plan.dailyAllowance).toMatchObject({ basis: "tokens", percent: 210 });
  });

  it("values a credit-sized allowance at the spend recorded, and says unavailable when a model has no price", () => {
    const credit = organization({ dailyAllowance: { basis: "credit", amount: 0.001, hardCap: true } });
    expect(usageSnapshot(credit, [row("m-priced", 100, 100, 0.0003)], NOW).plan.dailyAllowance).toEqual({ basis: "credit", percent: 30, resetAt: "2026-11-26T00:00:00.000Z" });
    const unpriced = usageSnapshot(credit, [row("m-priced", 100, 100, 0.0003), row("m-free", 5, 5)], NOW).plan.dailyAllowance;
    expect(unpriced).toEqual({ basis: "unavailable", resetAt: "2026-11-26T00:00:00.000Z" });
    expect(unpriced).not.toHaveProperty("percent");
  });

  it("has no allowance for unlimited plans, organizations without one, and no plan", () => {
    expect(usageSnapshot(organization({ plan: { label: "Comp", status: "active", isUnlimitedComp: true } }), [], NOW).plan.dailyAllowance).toBeNull();
    expect(usageSnapshot(organization({ dailyAllowance: null }), [], NOW).plan.dailyAllowance).toBeNull();
    const none = usageSnapshot(organization({ billingMode: null, plan: { label: null, status: null, isUnlimitedComp: false }, dailyAllowance: null }), [], NOW);
    expect(none.billingMode).toBeNull();
    expect(none.plan).toEqual({ label: null, status: null, isUnlimitedComp: false, dailyAllowance: null });
    expect(none.models).toEqual([]);
  });

  it("resets at the next UTC midnight, also one millisecond before it", () => {
    const lastMs = Date.UTC(2026, 10, 25, 23, 59, 59, 999);
    expect(usageSnapshot(organization(), [], lastMs).plan.dailyAllowance).toMatchObject({ resetAt: "2026-11-26T00:00:00.000Z" });
    expect(usageSnapshot(organization(), [], Date.UTC(2026, 10, 26)).plan.dailyAllowance).toMatchObject({ resetAt: "2026-11-27T00:00:00.000Z" });
  });
});
