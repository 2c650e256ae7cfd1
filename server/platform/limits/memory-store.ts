// The limit store of a single loom process: counters in two Maps, each reserve checked and taken in one synchronous
// step (no await between the check and the take), so concurrent reserves in this process cannot interleave.
import type { LimitBucket, LimitStore, ReserveResult } from "../contract.js";
import { checkAdjustments, checkReserve, storedKey } from "./buckets.js";
import { adjustedUse, DAILY_SLACK_MS, dailyFits, nextUtcMidnightMs } from "./daily.js";
import { adjustedBacklog, backlogAt, emissionMs, type WindowCounter, windowFits } from "./gcra.js";
import { type BucketCounter, reserveResult } from "./outcome.js";
import { SeedReads } from "./seeds.js";

/** How often (in the callers' time) idle window counters and ended days are dropped. */
const SWEEP_EVERY_MS = 10_000;

interface DailyCounter {
  used: number;
  /** When the counter is dropped: its day's end plus {@link DAILY_SLACK_MS}. */
  dropAtMs: number;
}

/**
 * Limit counters in this process's memory, timed by the `nowMs` each call passes (tests can drive time). A window
 * counter disappears once its bucket is full again; a day's counter an hour after the day ends.
 */
export class MemoryLimitStore implements LimitStore {
  private readonly windows = new Map<string, WindowCounter>();
  private readonly days = new Map<string, DailyCounter>();
  private readonly seeds = new SeedReads();
  private nextSweepMs = Number.NEGATIVE_INFINITY;
  private closed = false;

  /**
   * Takes every bucket's cost, or none. A daily counter seen for the first time starts at its `await seed()` (one
   * call shared by concurrent reserves); a seed that throws rejects the reserve with that error.
   * @throws RangeError on a malformed bucket, a key twice or a non-finite `nowMs`; Error after {@link close}.
   */
  async reserve(buckets: readonly LimitBucket[], nowMs: number): Promise<ReserveResult> {
    this.checkOpen();
    MemoryLimitStore.checkNow(nowMs);
    checkReserve(buckets);
    const seeded = new Map<string, number>();
    await Promise.all(
      buckets.map(async (bucket) => {
        const name = storedKey(bucket);
        if (bucket.kind === "daily" && !this.days.has(name)) seeded.set(name, await this.seeds.read(name, bucket.seed));
      }),
    );
    // NOTE: from here to the return there is no await: the check and the take are one step for this process.
    this.checkOpen();
    this.sweep(nowMs);
    const counters: BucketCounter[] = buckets.map((bucket) => {
      const name = storedKey(bucket);
      if (bucket.kind === "window") {
        const backlog = backlogAt(this.windows.get(name), nowMs);
        return { value: backlog, fits: windowFits(backlog, bucket.limit, bucket.windowMs, bucket.cost) };
      }
      let day = this.days.get(name);
      if (day === undefined) {
        // Set only if absent: a concurrent reserve may have seeded it first, and then its value stands.
        day = { used: seeded.get(name)!, dropAtMs: nextUtcMidnightMs(bucket.day) + DAILY_SLACK_MS };
        this.days.set(name, day);
      }
      return { value: day.used, fits: dailyFits(day.used, bucket.limit, bucket.cost) };
    });
    if (counters.every((counter) => counter.fits)) {
      buckets.forEach((bucket, index) => {
        const counter = counters[index]!;
        if (bucket.kind === "window") {
          counter.value += emissionMs(bucket.cost, bucket.limit, bucket.windowMs);
          this.setWindow(storedKey(bucket), counter.value, nowMs);
        } else {
          counter.value += bucket.cost;
          this.days.get(storedKey(bucket))!.used = counter.value;
        }
      });
    }
    return reserveResult(buckets, counters, nowMs);
  }

  /**
   * Moves counters by `delta` units each, never refused: a window's tat moves back (not before now) or forward (past
   * the window: later requests wait it out); a day's count changes (not below zero). A day's counter this store does
   * not hold is left alone: the usage table, read by the next seed, already counts what the request used.
   */
  async adjust(adjustments: ReadonlyArray<{ bucket: LimitBucket; delta: number }>, nowMs: number): Promise<void> {
    this.checkOpen();
    MemoryLimitStore.checkNow(nowMs);
    checkAdjustments(adjustments);
    this.sweep(nowMs);
    for (const { bucket, delta } of adjustments) {
      const name = storedKey(bucket);
      if (bucket.kind === "window") {
        this.setWindow(name, adjustedBacklog(backlogAt(this.windows.get(name), nowMs), bucket.limit, bucket.windowMs, delta), nowMs);
      } else {
        const day = this.days.get(name);
        if (day !== undefined) day.used = adjustedUse(day.used, delta);
      }
    }
  }

  /** How many counters this store holds (window and daily): for tests and metrics. */
  get size(): number {
    return this.windows.size + this.days.size;
  }

  /** Drops every counter; later calls throw. */
  async close(): Promise<void> {
    this.closed = true;
    this.windows.clear();
    this.days.clear();
  }

  private setWindow(name: string, backlogMs: number, nowMs: number): void {
    if (backlogMs <= 0) {
      this.windows.delete(name);
      return;
    }
    const previous = this.windows.get(name);
    // A clock that went back does not move `at` back: the time between would otherwise be credited twice.
    this.windows.set(name, { atMs: Math.max(nowMs, previous?.atMs ?? nowMs), backlogMs });
  }

  /** Every {@link SWEEP_EVERY_MS}: drops window counters whose tat has passed and days past their slack. */
  private sweep(nowMs: number): void {
    if (nowMs < this.nextSweepMs) return;
    this.nextSweepMs = nowMs + SWEEP_EVERY_MS;
    for (const [name, counter] of this.windows) if (backlogAt(counter, nowMs) <= 0) this.windows.delete(name);
    for (const [name, day] of this.days) if (day.dropAtMs <= nowMs) this.days.delete(name);
  }

  private checkOpen(): void {
    if (this.closed) throw new Error("MemoryLimitStore is closed");
  }

  private static checkNow(nowMs: number): void {
    if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be a finite number, got ${nowMs}`);
  }
}
