// The retry schedule: exponential, capped, jittered within its fraction; bad policies named by field.
import { describe, expect, it } from "vitest";
import { DEFAULT_CALLBACK_BACKOFF, retryDelayMs, validateBackoffPolicy } from "./backoff.js";

describe("retryDelayMs", () => {
  const noJitter = { ...DEFAULT_CALLBACK_BACKOFF, jitter: 0 };

  it("doubles from the base and stops at the cap", () => {
    const waits = [1, 2, 3, 4, 9, 10, 30].map((attempt) => retryDelayMs(noJitter, attempt));
    expect(waits).toEqual([10_000, 20_000, 40_000, 80_000, 2_560_000, 3_600_000, 3_600_000]);
  });

  it("draws the jitter fraction at random: between half and all of the wait at 0.5", () => {
    expect(retryDelayMs(DEFAULT_CALLBACK_BACKOFF, 3, () => 0)).toBe(40_000);
    expect(retryDelayMs(DEFAULT_CALLBACK_BACKOFF, 3, () => 0.999_999)).toBe(20_000);
    for (let i = 0; i < 100; i++) {
      const wait = retryDelayMs(DEFAULT_CALLBACK_BACKOFF, 2);
      expect(wait).toBeGreaterThanOrEqual(10_000);
      expect(wait).toBeLessThanOrEqual(20_000);
    }
  });

  it("works in milliseconds for tests", () => {
    expect(retryDelayMs({ baseMs: 5, factor: 3, capMs: 40, jitter: 0, giveUpAfterMs: 100 }, 3)).toBe(40);
  });
});

describe("validateBackoffPolicy", () => {
  it("fills in the defaults and names a bad field", () => {
    expect(validateBackoffPolicy({ baseMs: 1 })).toEqual({ ...DEFAULT_CALLBACK_BACKOFF, baseMs: 1 });
    expect(() => validateBackoffPolicy({ factor: 0.5 })).toThrow(/backoff\.factor/);
    expect(() => validateBackoffPolicy({ jitter: 2 })).toThrow(/backoff\.jitter/);
    expect(() => validateBackoffPolicy({ giveUpAfterMs: Number.NaN })).toThrow(/backoff\.giveUpAfterMs/);
  });
});
