// The memory store on a driven clock: windows slide (a fixed-window counter admits twice the limit across a window
// boundary, GCRA does not), days reset at UTC midnight exactly, idle counters are dropped, a clock going back
// credits nothing, and a failed seed is read again next time.
import { describe, expect, it } from "vitest";
import type { LimitBucket } from "../contract.js";
import { nextUtcMidnightMs } from "./daily.js";
import { MemoryLimitStore } from "./memory-store.js";

/** The fixed-window counter a gateway commonly uses (one counter per floor(now / window)): the behaviour to avoid. */
class FixedWindowCounter {
  private windowStart = Number.NaN;
  private used = 0;
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}
  take(nowMs: number): boolean {
    const start = Math.floor(nowMs / this.windowMs) * this.windowMs;
    if (start !== this.windowStart) [this.windowStart, this.used] = [start, 0];
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }
}

const MINUTE = 60_000;

describe("MemoryLimitStore on a driven clock", () => {
  it("slides: a fixed window admits 2x the limit across its boundary, GCRA admits the limit plus the rate", async () => {
    const boundary = Date.UTC(2025, 0, 15, 12, 1, 0); // a minute boundary
    const bucket: LimitBucket = { kind: "window", key: "rpm", limit: 100, windowMs: MINUTE, cost: 1 }; // T = 600 ms
    const fixed = new FixedWindowCounter(100, MINUTE);
    const store = new MemoryLimitStore();
    let fixedAdmitted = 0;
    let slidingAdmitted = 0;
    // 150 requests just before the boundary and 150 just after, 2 ms apart in all.
    for (const at of [boundary - 1, boundary + 1]) {
      for (let i = 0; i < 150; i++) {
        if (fixed.take(at)) fixedAdmitted++;
        if ((await store.reserve([bucket], at)).admitted) slidingAdmitted++;
      }
    }
    expect(fixedAdmitted).toBe(200);
    expect(slidingAdmitted).toBe(100);
    // After the burst, one request per emission interval: 600 ms after the burst's start admits exactly one more.
    expect((await store.reserve([bucket], boundary - 1 + 599)).admitted).toBe(false);
    expect((await store.reserve([bucket], boundary - 1 + 600)).admitted).toBe(true);
    expect((await store.reserve([bucket], boundary - 1 + 600)).admitted).toBe(false);
    // Over any window the total stays at most limit + window / T... here one minute later: 100 more in all, not 200.
    let nextMinute = 0;
    for (let i = 0; i < 300; i++) if ((await store.reserve([bucket], boundary - 1 + MINUTE)).admitted) nextMinute++;
    expect(nextMinute).toBe(99);
  });

  it("resets a day at UTC midnight exactly: refused at 23:59:59.999 with 1 ms to wait, admitted at 00:00 on the new day's key", async () => {
    const store = new MemoryLimitStore();
    const midnight = nextUtcMidnightMs("2025-01-15");
    const today: LimitBucket = { kind: "daily", key: "tpd", limit: 1000, day: "2025-01-15", cost: 1000, seed: async () => 0 };
    expect((await store.reserve([today], midnight - 10_000)).admitted).toBe(true);
    const late = await store.reserve([{ ...today, cost: 1 }], midnight - 1);
    expect(late).toMatchObject({ admitted: false, retryAfterMs: 1, buckets: [{ remaining: 0, resetMs: 1 }] });
    const tomorrow: LimitBucket = { ...today, day: "2025-01-16" };
    const fresh = await store.reserve([tomorrow], midnight);
    expect(fresh).toMatchObject({ admitted: true, buckets: [{ remaining: 0, resetMs: 86_400_000 }] });
  });

  it("drops window counters once full again and days an hour after they end", async () => {
    const store = new MemoryLimitStore();
    const start = Date.UTC(2025, 0, 15, 23, 0, 0);
    await store.reserve(
      [
        { kind: "window", key: "w", limit: 10, windowMs: MINUTE, cost: 5 },
        { kind: "daily", key: "d", limit: 10, day: "2025-01-15", cost: 5, seed: async () => 0 },
      ],
      start,
    );
    expect(store.size).toBe(2);
    await store.adjust([], start + MINUTE); // the window's tat (start + 30 s) has passed
    expect(store.size).toBe(1);
    await store.adjust([], nextUtcMidnightMs("2025-01-15") + 3_600_000 - 1);
    expect(store.size).toBe(1); // still within the slack after the day
    await store.adjust([], nextUtcMidnightMs("2025-01-15") + 3_600_000 + 10_000); // the next sweep, 10 s on
    expect(store.size).toBe(0);
  });

  it("credits nothing when the clock goes back", async () => {
    const store = new MemoryLimitStore();
    const now = Date.UTC(2025, 0, 15, 12, 0, 0);
    const bucket: LimitBucket = { kind: "window", key: "w", limit: 2, windowMs: 1000, cost: 1 }; // T = 500 ms
    expect((await store.reserve([bucket], now)).admitted).toBe(true);
    // 5 s back: counted as no time passed, and the bucket stays timed from `now`, not from 5 s earlier.
    expect((await store.reserve([bucket], now - 5000)).admitted).toBe(true);
    expect((await store.reserve([bucket], now - 5000)).admitted).toBe(false);
    expect((await store.reserve([bucket], now)).admitted).toBe(false);
    expect((await store.reserve([bucket], now + 499)).admitted).toBe(false);
    expect((await store.reserve([bucket], now + 500)).admitted).toBe(true);
  });

  it("rejects with the seed's error and reads the seed again on the next reserve", async () => {
    const store = new MemoryLimitStore();
    let calls = 0;
    const bucket: LimitBucket = {
      kind: "daily",
      key: "d",
      limit: 10,
      day: "2025-01-15",
      cost: 1,
      seed: async () => {
        calls++;
        if (calls === 1) throw new Error("database down");
        return 3;
      },
    };
    const now = Date.UTC(2025, 0, 15, 12);
    await expect(store.reserve([bucket], now)).rejects.toThrow("database down");
    expect(await store.reserve([bucket], now)).toMatchObject({ admitted: true, buckets: [{ remaining: 6 }] });
    await expect(store.reserve([{ ...bucket, key: "bad", seed: async () => Number.NaN }], now)).rejects.toThrow(RangeError);
  });

  it("rejects a time that is not a finite number", async () => {
    const store = new MemoryLimitStore();
    await expect(store.reserve([], Number.NaN)).rejects.toThrow(RangeError);
    await expect(store.adjust([], Number.POSITIVE_INFINITY)).rejects.toThrow(RangeError);
  });

  it("refuses calls after close", async () => {
    const store = new MemoryLimitStore();
    await store.close();
    await expect(store.reserve([], 0)).rejects.toThrow(/closed/);
  });

  it("drops a window counter given back to empty at once, and leaves alone a day it does not hold", async () => {
    const now = Date.UTC(2025, 0, 15, 12, 0, 0);
    const store = new MemoryLimitStore();
    const bucket: LimitBucket = { kind: "window", key: "refunded", limit: 10, windowMs: MINUTE, cost: 2 };
    await store.reserve([bucket], now);
    expect(store.size).toBe(1);
    await store.adjust([{ bucket, delta: -2 }], now);
    expect(store.size).toBe(0);
    const day: LimitBucket = { kind: "daily", key: "unseen", limit: 100, day: "2025-01-15", cost: 1, seed: async () => 0 };
    await store.adjust([{ bucket: day, delta: -5 }], now);
    expect(store.size).toBe(0);
    await store.close();
  });

  it("sweeps idle counters at most every 10 s, and a day's counter from the instant its hour of slack ends", async () => {
    const start = Date.UTC(2025, 0, 15, 12, 0, 0);
    const store = new MemoryLimitStore();
    const window = (key: string): LimitBucket => ({ kind: "window", key, limit: 10, windowMs: 1000, cost: 1 }); // 100 ms backlog each
    await store.reserve([window("a")], start);
    // Idle since 4.9 s, but the last sweep was 5 s ago: kept until the next.
    await store.reserve([window("b")], start + 5000);
    expect(store.size).toBe(2);
    await store.reserve([window("c")], start + 10_000);
    expect(store.size).toBe(1);

    const day: LimitBucket = { kind: "daily", key: "tpd", limit: 100, day: "2025-01-15", cost: 1, seed: async () => 0 };
    const dropAt = nextUtcMidnightMs("2025-01-15") + 3_600_000;
    await store.reserve([day], start + 20_000);
    // A sweep at dropAt - 10 s keeps it; the next is due at dropAt exactly, when the counter goes.
    await store.adjust([], dropAt - 10_000);
    expect(store.size).toBe(1);
    await store.adjust([], dropAt);
    expect(store.size).toBe(0);
  });

  it("refuses a time that is not a finite number, naming it", async () => {
    const store = new MemoryLimitStore();
    const bucket: LimitBucket = { kind: "window", key: "k", limit: 10, windowMs: MINUTE, cost: 1 };
    await expect(store.reserve([bucket], Number.NaN)).rejects.toThrow(new RangeError("nowMs must be a finite number, got NaN"));
    await expect(store.adjust([{ bucket, delta: 1 }], Number.POSITIVE_INFINITY)).rejects.toThrow(new RangeError("nowMs must be a finite number, got Infinity"));
    await store.close();
  });
});
