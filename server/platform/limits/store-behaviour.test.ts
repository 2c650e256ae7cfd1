// One behaviour suite run against both limit stores (memory with a driven clock, Redis on real time with short
// windows): bursts, gradual refill, all-or-nothing, adjustments, daily seeds, costs above the limit, concurrency.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { failIfMissing, skipOutsideCi, titled } from "../../../engine/testing/fixtures.js";
import type { LimitBucket, LimitStore, ReserveResult } from "../contract.js";
import { nextUtcMidnightMs, utcDay } from "./daily.js";
import { MemoryLimitStore } from "./memory-store.js";
import { RedisLimitStore } from "./redis-store.js";
import { deleteKeys, redisMissingReason, TEST_REDIS_URL, testKeyPrefix } from "./testing/redis.js";

/** A clock the tests move: the memory store's is driven, Redis's is the real one (so waits really wait). */
interface Clock {
  now(): number;
  advance(ms: number): Promise<void>;
}

interface Harness {
  name: string;
  /** Why the store cannot be tested here (skip outside CI, fail under CI), or undefined. */
  reason: string | undefined;
  /** How much real time may pass unseen between the store's clock and the test's: expected waits may be this much shorter. */
  slackMs: number;
  open(): { store: LimitStore; clock: Clock; cleanup(): Promise<void> };
}

const redisReason = await redisMissingReason();

const harnesses: Harness[] = [
  {
    name: "MemoryLimitStore",
    reason: undefined,
    slackMs: 0,
    open() {
      let now = Date.UTC(2025, 0, 15, 12, 0, 0);
      const store = new MemoryLimitStore();
      return { store, clock: { now: () => now, advance: async (ms) => void (now += ms) }, cleanup: () => store.close() };
    },
  },
  {
    name: "RedisLimitStore",
    reason: redisReason,
    slackMs: 250,
    open() {
      const keyPrefix = testKeyPrefix();
      const store = new RedisLimitStore({ url: TEST_REDIS_URL, keyPrefix });
      const clock: Clock = { now: () => Date.now(), advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
      return { store, clock, cleanup: async () => (await store.close(), await deleteKeys(keyPrefix)) };
    },
  },
];

function window(key: string, limit: number, windowMs: number, cost = 1): LimitBucket {
  return { kind: "window", key, limit, windowMs, cost };
}

function daily(key: string, limit: number, day: string, cost: number, seed: () => Promise<number>): LimitBucket {
  return { kind: "daily", key, limit, day, cost, seed };
}

/** A seed that counts its calls. */
function countingSeed(value: number): { seed: () => Promise<number>; calls: () => number } {
  let calls = 0;
  return { seed: async () => (calls++, value), calls: () => calls };
}

function refused(result: ReserveResult): Extract<ReserveResult, { admitted: false }> {
  expect(result.admitted, JSON.stringify(result)).toBe(false);
  return result as Extract<ReserveResult, { admitted: false }>;
}

describe.each(harnesses)("limit store behaviour: $name", (harness) => {
  describe.skipIf(skipOutsideCi(harness.reason))(titled("shared behaviour", harness.reason), () => {
    let store: LimitStore;
    let clock: Clock;
    let cleanup: (() => Promise<void>) | undefined;
    /** A wait the store reports, which on real time may be up to `slackMs` shorter than computed. */
    const expectWait = (actual: number, expected: number): void => {
      expect(actual).toBeLessThanOrEqual(expected);
      expect(actual).toBeGreaterThanOrEqual(expected - harness.slackMs);
    };

    beforeAll(() => failIfMissing(harness.reason));
    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });
    const open = (): void => {
      ({ store, clock, cleanup } = harness.open());
    };

    it("admits a burst of exactly `limit`, then refuses with the wait for one more unit", async () => {
      open();
      const bucket = window("key:burst", 4, 2000); // T = 500 ms
      const remaining: number[] = [];
      for (let i = 0; i < 4; i++) {
        const result = await store.reserve([bucket], clock.now());
        expect(result.admitted).toBe(true);
        remaining.push(result.buckets[0]!.remaining);
      }
      expect(remaining).toEqual([3, 2, 1, 0]);
      const refusal = refused(await store.reserve([bucket], clock.now()));
      expect(refusal.refusedBy).toBe("key:burst");
      expect(refusal.exceedsLimit).toBe(false);
      expectWait(refusal.retryAfterMs, 500);
      expect(refusal.buckets[0]!.remaining).toBe(0);
      expectWait(refusal.buckets[0]!.resetMs, 2000);
    });

    it("admits exactly `limit` when T is not a whole number of ms, and a million tokens in 1000 reserves of 1000", async () => {
      open();
      const odd = window("key:odd", 7, 1000); // T = 142.857... ms
      const admitted = [];
      for (let i = 0; i < 8; i++) admitted.push((await store.reserve([odd], clock.now())).admitted);
      expect(admitted).toEqual([true, true, true, true, true, true, true, false]);
      const tokens = window("key:tokens", 1_000_000, 3_600_000, 1000); // T = 3.6 ms per token
      const results = await Promise.all(Array.from({ length: 1000 }, () => store.reserve([tokens], clock.now())));
      expect(results.filter((result) => result.admitted)).toHaveLength(1000);
      expect((await store.reserve([tokens], clock.now())).admitted).toBe(false);
    });

    it("refills one unit per emission interval, and a full window later admits `limit`, not twice that", async () => {
      open();
      const bucket = window("key:refill", 4, 2000); // T = 500 ms
      for (let i = 0; i < 4; i++) expect((await store.reserve([bucket], clock.now())).admitted).toBe(true);
      const refusal = refused(await store.reserve([bucket], clock.now()));
      await clock.advance(refusal.retryAfterMs + 20);
      expect((await store.reserve([bucket], clock.now())).admitted).toBe(true);
      refused(await store.reserve([bucket], clock.now()));
      await clock.advance(2100);
      const after = await Promise.all(Array.from({ length: 8 }, () => store.reserve([bucket], clock.now())));
      expect(after.filter((result) => result.admitted)).toHaveLength(4);
    });

    it("takes nothing from any bucket when one refuses (all-or-nothing)", async () => {
      open();
      const today = utcDay(clock.now());
      const full = window("key:full", 1, 60_000);
      const roomy = window("key:roomy", 10, 3_600_000, 5);
      const day = daily("key:day", 100, today, 50, async () => 0);
      expect((await store.reserve([full], clock.now())).admitted).toBe(true);
      const refusal = refused(await store.reserve([roomy, day, full], clock.now()));
      expect(refusal.refusedBy).toBe("key:full");
      expect(refusal.buckets.map((state) => state.remaining)).toEqual([10, 100, 0]);
      // Everything is still there: the whole of both other buckets is admitted in one go.
      const whole = await store.reserve([{ ...roomy, cost: 10 }, { ...day, cost: 100 }], clock.now());
      expect(whole.admitted).toBe(true);
      expect(whole.buckets.map((state) => state.remaining)).toEqual([0, 0]);
    });

    it("adjusts a window back (not before now) and forward (an overdraft that later requests wait out)", async () => {
      open();
      const bucket = window("key:adjust", 1000, 3_600_000, 1000); // T = 3600 ms per unit
      expect((await store.reserve([bucket], clock.now())).admitted).toBe(true);
      await store.adjust([{ bucket, delta: -600 }], clock.now());
      expect((await store.reserve([{ ...bucket, cost: 601 }], clock.now())).admitted).toBe(false);
      const back = await store.reserve([{ ...bucket, cost: 600 }], clock.now());
      expect(back.admitted).toBe(true);
      expect(back.buckets[0]!.remaining).toBe(0);
      await store.adjust([{ bucket, delta: 500 }], clock.now());
      const overdraft = refused(await store.reserve([{ ...bucket, cost: 1 }], clock.now()));
      expectWait(overdraft.retryAfterMs, 501 * 3600); // the 500 over the window plus the one asked for
      expectWait(overdraft.buckets[0]!.resetMs, 1500 * 3600);
      await store.adjust([{ bucket, delta: -1_000_000 }], clock.now());
      const reset = await store.reserve([{ ...bucket, cost: 1000 }], clock.now());
      expect(reset.admitted).toBe(true); // moved back to now, not before it: one window's worth, no more
      refused(await store.reserve([{ ...bucket, cost: 1 }], clock.now()));
    });

    it("adjusts a day's count both ways, never below zero", async () => {
      open();
      const bucket = daily("key:day-adjust", 100, utcDay(clock.now()), 100, async () => 0);
      expect((await store.reserve([bucket], clock.now())).admitted).toBe(true);
      await store.adjust([{ bucket, delta: -30 }], clock.now());
      expect((await store.reserve([{ ...bucket, cost: 31 }], clock.now())).admitted).toBe(false);
      expect((await store.reserve([{ ...bucket, cost: 30 }], clock.now())).admitted).toBe(true);
      await store.adjust([{ bucket, delta: 50 }], clock.now());
      expect(refused(await store.reserve([{ ...bucket, cost: 0 }], clock.now())).buckets[0]!.remaining).toBe(0);
      await store.adjust([{ bucket, delta: -1000 }], clock.now());
      const fresh = await store.reserve([{ ...bucket, cost: 100 }], clock.now());
      expect(fresh.admitted).toBe(true); // back to zero, not below: a whole day's worth and no more
      refused(await store.reserve([{ ...bucket, cost: 1 }], clock.now()));
    });

    it("starts a day at its seed, read once, and refuses past the limit until UTC midnight", async () => {
      open();
      const today = utcDay(clock.now());
      const seed = countingSeed(90);
      const bucket = daily("key:seeded", 100, today, 5, seed.seed);
      const first = await store.reserve([bucket], clock.now());
      expect(first.admitted).toBe(true);
      expect(first.buckets[0]!.remaining).toBe(5);
      expect((await store.reserve([bucket], clock.now())).buckets[0]!.remaining).toBe(0);
      const before = clock.now(); // the store measures the wait at some instant after this
      const refusal = refused(await store.reserve([{ ...bucket, cost: 1 }], clock.now()));
      expect(refusal.exceedsLimit).toBe(false);
      expectWait(refusal.retryAfterMs, nextUtcMidnightMs(today) - before);
      expectWait(refusal.buckets[0]!.resetMs, nextUtcMidnightMs(today) - before);
      expect(seed.calls()).toBe(1);
      // Another day of the same key counts apart, from its own seed.
      const other = countingSeed(0);
      const tomorrow = utcDay(nextUtcMidnightMs(today));
      expect((await store.reserve([daily("key:seeded", 100, tomorrow, 100, other.seed)], clock.now())).admitted).toBe(true);
      expect(other.calls()).toBe(1);
      // A seed already past the limit refuses from the start.
      const over = refused(await store.reserve([daily("key:over", 100, today, 1, async () => 150)], clock.now()));
      expect(over.buckets[0]!.remaining).toBe(0);
    });

    it("refuses a cost above the limit, says so, and takes nothing", async () => {
      open();
      const other = window("key:other", 10, 3_600_000, 3);
      const tooBig = refused(await store.reserve([other, window("key:small", 10, 60_000, 11)], clock.now()));
      expect(tooBig.refusedBy).toBe("key:small");
      expect(tooBig.exceedsLimit).toBe(true);
      expect(Number.isFinite(tooBig.retryAfterMs)).toBe(true);
      const dayTooBig = refused(await store.reserve([daily("key:small-day", 100, utcDay(clock.now()), 101, async () => 0)], clock.now()));
      expect(dayTooBig.exceedsLimit).toBe(true);
      expect((await store.reserve([other], clock.now())).buckets[0]!.remaining).toBe(7);
      // A bucket that cannot admit the cost alone is named before one that only needs a wait.
      const mixed = refused(await store.reserve([{ ...other, cost: 8 }, window("key:big", 10, 60_000, 11)], clock.now()));
      expect(mixed.refusedBy).toBe("key:big");
      expect(mixed.exceedsLimit).toBe(true);
      expect((await store.reserve([{ ...other, cost: 7 }], clock.now())).admitted).toBe(true);
    });

    it("admits exactly 100 of 500 concurrent reserves against a limit of 100, window and daily", async () => {
      open();
      const bucket = window("key:concurrent", 100, 3_600_000);
      const results = await Promise.all(Array.from({ length: 500 }, () => store.reserve([bucket], clock.now())));
      expect(results.filter((result) => result.admitted)).toHaveLength(100);
      const seed = countingSeed(40);
      const day = daily("key:concurrent-day", 100, utcDay(clock.now()), 1, seed.seed);
      const days = await Promise.all(Array.from({ length: 500 }, () => store.reserve([day], clock.now())));
      expect(days.filter((result) => result.admitted)).toHaveLength(60);
      expect(seed.calls()).toBeGreaterThanOrEqual(1);
    });

    it("rejects malformed buckets and a key twice in one reserve, as a caller's mistake", async () => {
      open();
      await expect(store.reserve([window("key:a", 0, 1000)], clock.now())).rejects.toThrow(RangeError);
      await expect(store.reserve([window("key:a", 10, 1000, -1)], clock.now())).rejects.toThrow(RangeError);
      await expect(store.reserve([daily("key:d", 10, "2025-02-30", 1, async () => 0)], clock.now())).rejects.toThrow(RangeError);
      await expect(store.reserve([window("key:a", 10, 1000), window("key:a", 5, 1000)], clock.now())).rejects.toThrow(/twice/);
      await expect(store.adjust([{ bucket: window("key:a", 10, 1000), delta: Number.NaN }], clock.now())).rejects.toThrow(RangeError);
    });
  });
});
