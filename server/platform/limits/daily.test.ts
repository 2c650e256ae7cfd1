// Daily buckets' arithmetic: UTC days and the midnight that ends one (a malformed day refused by name), what fits,
// adjustments that never go below zero, and the state for headers.
import { describe, expect, it } from "vitest";
import { adjustedUse, dailyFits, dailyState, nextUtcMidnightMs, utcDay } from "./daily.js";

describe("daily buckets", () => {
  it("end a day at the next UTC midnight", () => {
    expect(nextUtcMidnightMs("2025-01-15")).toBe(Date.UTC(2025, 0, 16));
    expect(nextUtcMidnightMs("2024-02-29")).toBe(Date.UTC(2024, 2, 1));
    expect(nextUtcMidnightMs("2025-12-31")).toBe(Date.UTC(2026, 0, 1));
    expect(utcDay(Date.UTC(2025, 0, 15, 23, 59, 59, 999))).toBe("2025-01-15");
    expect(utcDay(Date.UTC(2025, 0, 16))).toBe("2025-01-16");
  });

  it("refuse a day that is not an existing YYYY-MM-DD, naming it", () => {
    for (const day of ["", "2025-1-15", "2025-01-15T00:00:00Z", " 2025-01-15", "2025-01-15 ", "x2025-01-15", "2025-02-29", "2025-13-01", "2025-00-10", "20250115"]) {
      expect(() => nextUtcMidnightMs(day), day).toThrow(new RangeError(`not a UTC day (YYYY-MM-DD): ${JSON.stringify(day)}`));
    }
  });

  it("fit a cost up to the limit exactly, and adjust without going below zero", () => {
    expect([dailyFits(90, 100, 10), dailyFits(90, 100, 11), dailyFits(0, 100, 0)]).toEqual([true, false, true]);
    expect([adjustedUse(50, -20), adjustedUse(10, -20), adjustedUse(10, 5)]).toEqual([30, 0, 15]);
  });

  it("state whole units left and the time to midnight, never negative", () => {
    const now = Date.UTC(2025, 0, 15, 18, 0, 0);
    expect(dailyState("tpd", 100, "2025-01-15", 30.5, now)).toEqual({ key: "tpd", limit: 100, remaining: 69, resetMs: 6 * 3_600_000 });
    expect(dailyState("tpd", 100, "2025-01-14", 130, now)).toEqual({ key: "tpd", limit: 100, remaining: 0, resetMs: 0 });
  });
});
