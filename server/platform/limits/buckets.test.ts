// What both limit stores check before touching a counter: each field of a bucket (refused by name with a RangeError),
// no counter twice in one reserve, finite adjustments; and the name each bucket's counter is stored under.
import { describe, expect, it } from "vitest";
import type { LimitBucket } from "../contract.js";
import { checkAdjustments, checkBucket, checkReserve, storedKey } from "./buckets.js";

const window = (patch: Partial<Extract<LimitBucket, { kind: "window" }>> = {}): LimitBucket => ({ kind: "window", key: "org:1:rpm", limit: 10, windowMs: 60_000, cost: 1, ...patch });
const daily = (patch: Partial<Extract<LimitBucket, { kind: "daily" }>> = {}): LimitBucket => ({
  kind: "daily", key: "org:1:tpd", limit: 1000, day: "2025-01-15", cost: 10, seed: async () => 0, ...patch,
});

describe("limit buckets", () => {
  it("store a window under window:KEY and a day under daily:KEY:DAY", () => {
    expect(storedKey(window())).toBe("window:org:1:rpm");
    expect(storedKey(daily())).toBe("daily:org:1:tpd:2025-01-15");
  });

  it("accept well-formed buckets, a cost of 0 included", () => {
    for (const bucket of [window(), window({ cost: 0 }), window({ limit: 0.5, windowMs: 1 }), daily(), daily({ cost: 0 })]) {
      expect(() => checkBucket(bucket), JSON.stringify(bucket)).not.toThrow();
    }
  });

  it("refuse each malformed field with a RangeError naming the bucket and the field", () => {
    const refusals: Array<[unknown, string]> = [
      [window({ key: "" }), 'limit bucket "": key must be a non-empty string'],
      [window({ key: 42 as unknown as string }), "limit bucket 42: key must be a non-empty string"],
      [window({ limit: 0 }), 'limit bucket "org:1:rpm": limit must be a positive number, got 0'],
      [window({ limit: -1 }), 'limit bucket "org:1:rpm": limit must be a positive number, got -1'],
      [window({ limit: Number.POSITIVE_INFINITY }), 'limit bucket "org:1:rpm": limit must be a positive number, got Infinity'],
      [window({ cost: -1 }), 'limit bucket "org:1:rpm": cost must be a number >= 0, got -1'],
      [window({ cost: Number.NaN }), 'limit bucket "org:1:rpm": cost must be a number >= 0, got NaN'],
      [window({ windowMs: 0 }), 'limit bucket "org:1:rpm": windowMs must be a positive number, got 0'],
      [window({ windowMs: -60_000 }), 'limit bucket "org:1:rpm": windowMs must be a positive number, got -60000'],
      [window({ windowMs: Number.NaN }), 'limit bucket "org:1:rpm": windowMs must be a positive number, got NaN'],
      [daily({ day: "2025-1-15" }), 'not a UTC day (YYYY-MM-DD): "2025-1-15"'],
      [daily({ seed: 5 as unknown as () => Promise<number> }), 'limit bucket "org:1:tpd": seed must be a function'],
      [{ ...window(), kind: "hourly" }, 'limit bucket "org:1:rpm": unknown kind "hourly"'],
    ];
    for (const [bucket, message] of refusals) {
      let thrown: unknown;
      try {
        checkBucket(bucket as LimitBucket);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, message).toBeInstanceOf(RangeError);
      expect((thrown as Error).message).toBe(message);
    }
  });

  it("refuse a reserve naming one counter twice, but not one key as a window and as a day, or two days of one key", () => {
    expect(() => checkReserve([window(), window({ limit: 20 })])).toThrow(new RangeError('limit bucket "org:1:rpm" appears twice in one reserve'));
    expect(() => checkReserve([daily(), daily({ cost: 1 })])).toThrow(/"org:1:tpd" appears twice/);
    expect(() => checkReserve([window({ key: "k" }), daily({ key: "k" }), daily({ key: "k", day: "2025-01-16" })])).not.toThrow();
    expect(() => checkReserve([window(), daily({ cost: -1 })])).toThrow(/cost must be a number >= 0/);
  });

  it("take adjustments of one counter more than once, each with a finite delta", () => {
    expect(() => checkAdjustments([{ bucket: window(), delta: -1 }, { bucket: window(), delta: 2.5 }, { bucket: daily(), delta: 0 }])).not.toThrow();
    for (const delta of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => checkAdjustments([{ bucket: window(), delta }])).toThrow(new RangeError(`limit bucket "org:1:rpm": delta must be a finite number, got ${delta}`));
    }
    expect(() => checkAdjustments([{ bucket: window({ windowMs: 0 }), delta: 1 }])).toThrow(/windowMs must be a positive number/);
  });
});
