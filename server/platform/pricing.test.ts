// What tokens cost, with every expected figure worked out by hand in its comment (never with the product's own
// arithmetic): input and output at their own prices, rounded up to the nano-dollar on both sides of each boundary, and
// one request's usage increment.
import { describe, expect, it } from "vitest";
import type { Organization } from "./contract.js";
import { costDollars, priceOf, usageIncrementOf } from "./pricing.js";

const organization = (prices: Organization["prices"]): Organization => ({
  id: "org_1", name: "Acme", billingMode: "prepaid", plan: { label: null, status: null, isUnlimitedComp: false },
  dailyAllowance: null, creditBalanceDollars: 10, closedBeta: false, limits: {}, prices, pool: null, createdAt: new Date(0),
});

describe("priceOf", () => {
  const cheap = { inputPerMillion: 0.1, outputPerMillion: 0.4 };
  const fallback = { inputPerMillion: 1, outputPerMillion: 2 };
  it("takes the model's own entry, else the \"*\" entry, else none", () => {
    expect(priceOf(organization({ "smollm2-135m": cheap, "*": fallback }), "smollm2-135m")).toEqual(cheap);
    expect(priceOf(organization({ "smollm2-135m": cheap, "*": fallback }), "other")).toEqual(fallback);
    expect(priceOf(organization({ "smollm2-135m": cheap }), "other")).toBeUndefined();
  });
});

describe("costDollars", () => {
  it("prices input tokens at the input price and output tokens at the output price", () => {
    // 1000 input at $0.50/M = 500 micro-dollars; 200 output at $1.50/M = 300 micro-dollars; 800 micro-dollars = $0.0008.
    expect(costDollars({ inputPerMillion: 0.5, outputPerMillion: 1.5 }, 1000, 200)).toBe(0.0008);
    // Each side alone, at prices three times apart: 1000 input at $1/M = $0.001; 1000 output at $3/M = $0.003.
    expect(costDollars({ inputPerMillion: 1, outputPerMillion: 3 }, 1000, 0)).toBe(0.001);
    expect(costDollars({ inputPerMillion: 1, outputPerMillion: 3 }, 0, 1000)).toBe(0.003);
    // A million of each: $3.50 + $17.25 = $20.75.
    expect(costDollars({ inputPerMillion: 3.5, outputPerMillion: 17.25 }, 1_000_000, 1_000_000)).toBe(20.75);
    // Nothing used costs nothing; a free model costs nothing.
    expect(costDollars({ inputPerMillion: 3.5, outputPerMillion: 17.25 }, 0, 0)).toBe(0);
    expect(costDollars({ inputPerMillion: 0, outputPerMillion: 0 }, 5000, 5000)).toBe(0);
  });

  it("rounds up to the nano-dollar: an exact nano-dollar stays, any fraction above it takes the next", () => {
    // 1 token at $0.30/M = 0.3 micro-dollars = 300 nano-dollars exactly: $0.000000300.
    expect(costDollars({ inputPerMillion: 0.3, outputPerMillion: 0 }, 1, 0)).toBe(3e-7);
    // 1 token at $0.300001/M = 300.001 nano-dollars: up to 301, $0.000000301 (not 300: never under-charged).
    expect(costDollars({ inputPerMillion: 0.300001, outputPerMillion: 0 }, 1, 0)).toBe(3.01e-7);
    // The same boundary on the output side.
    expect(costDollars({ inputPerMillion: 0, outputPerMillion: 0.3 }, 0, 1)).toBe(3e-7);
    expect(costDollars({ inputPerMillion: 0, outputPerMillion: 0.300001 }, 0, 1)).toBe(3.01e-7);
    // A tenth of a nano-dollar (1 token at $0.0001/M) is one nano-dollar; 0.999 of one is one too.
    expect(costDollars({ inputPerMillion: 0.0001, outputPerMillion: 0 }, 1, 0)).toBe(1e-9);
    expect(costDollars({ inputPerMillion: 0.000999, outputPerMillion: 0 }, 1, 0)).toBe(1e-9);
    // 1,001 tokens at $0.001/M = 1,001 nano-dollars exactly.
    expect(costDollars({ inputPerMillion: 0.001, outputPerMillion: 0 }, 1001, 0)).toBe(1.001e-6);
    // Fractions of a nano-dollar on both sides add before rounding: 1 input at $1,234.567891/M = 1,234,567.891 nano,
    // 1 output at $4,321.987654/M = 4,321,987.654 nano; together 5,556,555.545 nano, up to 5,556,556 = $0.005556556.
    expect(costDollars({ inputPerMillion: 1234.567891, outputPerMillion: 4321.987654 }, 1, 1)).toBe(0.005556556);
  });

  it("does not round float noise up by a whole nano-dollar", () => {
    // 1000 input at $0.0001/M (100 nano) + 1000 output at $0.0002/M (200 nano) = 300 nano-dollars, which binary
    // floating point computes as 300.00000000000006: still $0.000000300.
    expect(costDollars({ inputPerMillion: 0.0001, outputPerMillion: 0.0002 }, 1000, 1000)).toBe(3e-7);
    // 3 tokens at $0.70/M = 2,100 nano-dollars (2,099.9999999999995 in floating point): $0.0000021.
    expect(costDollars({ inputPerMillion: 0.7, outputPerMillion: 0 }, 3, 0)).toBe(2.1e-6);
  });
});

describe("usageIncrementOf", () => {
  const ids = { organizationId: "org_1", keyId: "key_1" };
  const usage = { promptTokens: 1000, cachedTokens: 600, completionTokens: 200 };
  const NOW = Date.UTC(2031, 4, 2, 23, 59, 59); // 2031-05-02T23:59:59Z

  it("is one request of the usage on the UTC day, its spend at the model's price (cached prompt tokens at the input price)", () => {
    const priced = organization({ m: { inputPerMillion: 0.5, outputPerMillion: 1.5 } });
    // 1000 prompt tokens (600 of them cached, same price) at $0.50/M = $0.0005; 200 output at $1.50/M = $0.0003.
    expect(usageIncrementOf(ids, priced, "m", usage, NOW)).toEqual({
      organizationId: "org_1", keyId: "key_1", model: "m", day: "2031-05-02", requests: 1,
      inputTokens: 1000, cachedInputTokens: 600, outputTokens: 200, spendDollars: 0.0008,
    });
  });

  it("spends nothing for a model without a price, or without the organization", () => {
    const unpriced = organization({ other: { inputPerMillion: 0.5, outputPerMillion: 1.5 } });
    expect(usageIncrementOf(ids, unpriced, "m", usage, NOW)).toMatchObject({ inputTokens: 1000, outputTokens: 200, spendDollars: 0 });
    expect(usageIncrementOf(ids, undefined, "m", usage, NOW)).toMatchObject({ inputTokens: 1000, outputTokens: 200, spendDollars: 0 });
  });
});
