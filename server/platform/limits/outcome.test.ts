// A reserve's result from its counters: every bucket's state, and for a refusal the bucket to name: one whose limit
// the cost alone exceeds before any other, else the one with the longest wait (the first of equal waits).
import { describe, expect, it } from "vitest";
import type { LimitBucket, ReserveResult } from "../contract.js";
import { nextUtcMidnightMs } from "./daily.js";
import { reserveResult } from "./outcome.js";

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const window = (key: string, limit: number, cost = 1): LimitBucket => ({ kind: "window", key, limit, windowMs: 60_000, cost });
const daily = (key: string, limit: number, cost: number): LimitBucket => ({ kind: "daily", key, limit, day: "2025-01-15", cost, seed: async () => 0 });
const refusal = (result: ReserveResult) => {
  expect(result.admitted).toBe(false);
  return result as Extract<ReserveResult, { admitted: false }>;
};

describe("reserveResult", () => {
  it("admits when every cost fit, with each bucket's state", () => {
    expect(reserveResult([window("rpm", 10), daily("tpd", 100, 5)], [{ value: 6000, fits: true }, { value: 25, fits: true }], NOW)).toEqual({
      admitted: true,
      buckets: [
        { key: "rpm", limit: 10, remaining: 9, resetMs: 6000 },
        { key: "tpd", limit: 100, remaining: 75, resetMs: nextUtcMidnightMs("2025-01-15") - NOW },
      ],
    });
  });

  it("waits for a window until the cost fits, for a day until midnight UTC", () => {
    // 10 per minute, T = 6 s: a full window (backlog 60 s) fits one more unit in 6 s.
    expect(refusal(reserveResult([window("rpm", 10)], [{ value: 60_000, fits: false }], NOW))).toMatchObject({ refusedBy: "rpm", retryAfterMs: 6000, exceedsLimit: false });
    expect(refusal(reserveResult([daily("tpd", 100, 5)], [{ value: 98, fits: false }], NOW))).toMatchObject({
      refusedBy: "tpd", retryAfterMs: nextUtcMidnightMs("2025-01-15") - NOW, exceedsLimit: false,
    });
  });

  it("says a cost above the limit exceeds it (no wait admits it), and a cost equal to the limit does not", () => {
    expect(refusal(reserveResult([window("tpm", 100, 101)], [{ value: 30_000, fits: false }], NOW))).toMatchObject({ retryAfterMs: 30_000, exceedsLimit: true });
    expect(refusal(reserveResult([window("tpm", 100, 100)], [{ value: 30_000, fits: false }], NOW))).toMatchObject({ retryAfterMs: 30_000, exceedsLimit: false });
    expect(refusal(reserveResult([daily("tpd", 100, 101)], [{ value: 0, fits: false }], NOW))).toMatchObject({ exceedsLimit: true });
  });

  it("names the refusing bucket with the longest wait, whichever comes first, and the first of equal waits", () => {
    const buckets = [window("short", 10), window("fits", 10), window("long", 10)];
    const counters = [{ value: 60_000, fits: false }, { value: 0, fits: true }, { value: 90_000, fits: false }];
    expect(refusal(reserveResult(buckets, counters, NOW))).toMatchObject({ refusedBy: "long", retryAfterMs: 36_000 });
    expect(refusal(reserveResult([...buckets].reverse(), [...counters].reverse(), NOW))).toMatchObject({ refusedBy: "long", retryAfterMs: 36_000 });
    const same = { value: 60_000, fits: false };
    expect(refusal(reserveResult([window("a", 10), window("b", 10)], [same, same], NOW)).refusedBy).toBe("a");
  });

  it("names a bucket whose limit the cost exceeds before any with a longer wait", () => {
    const exceeded = window("tpm", 100, 500);
    const waiting = window("rpm", 10);
    const counters = [{ value: 0, fits: false }, { value: 600_000, fits: false }];
    expect(refusal(reserveResult([exceeded, waiting], counters, NOW))).toMatchObject({ refusedBy: "tpm", exceedsLimit: true });
    expect(refusal(reserveResult([waiting, exceeded], [...counters].reverse(), NOW))).toMatchObject({ refusedBy: "tpm", exceedsLimit: true });
  });
});
