// The arithmetic of a daily bucket: at most `limit` units per UTC day, counted from the day's seed. Pure functions;
// both stores (memory, and Redis through its script) follow them.
import type { BucketState } from "../contract.js";

const DAY_MS = 86_400_000;

/** How long after its UTC day ends a store keeps the day's counter, so a request begun before midnight can still settle it. */
export const DAILY_SLACK_MS = 3_600_000;
// Stryker disable next-line Regex: the round trip through utcDay() in nextUtcMidnightMs refuses any other text anyway
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day, YYYY-MM-DD, of an instant (what a caller puts in a daily bucket's `day`). */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** The instant (ms since the epoch) of the UTC midnight that ends `day` (YYYY-MM-DD). @throws RangeError on a malformed day. */
export function nextUtcMidnightMs(day: string): number {
  const match = DAY_PATTERN.exec(day);
  const start = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || Number.isNaN(start) || utcDay(start) !== day) throw new RangeError(`not a UTC day (YYYY-MM-DD): ${JSON.stringify(day)}`);
  return start + DAY_MS;
}

/** Whether `cost` more units fit in a day that has used `used` of `limit`. */
export function dailyFits(used: number, limit: number, cost: number): boolean {
  return used + cost <= limit;
}

/** The day's count after an adjustment by `delta` (never below zero). */
export function adjustedUse(used: number, delta: number): number {
  return Math.max(0, used + delta);
}

/** A daily bucket's state for rate-limit headers: units left today, and time until the day ends. */
export function dailyState(key: string, limit: number, day: string, used: number, nowMs: number): BucketState {
  return { key, limit, remaining: Math.max(0, Math.floor(limit - used)), resetMs: Math.max(0, nextUtcMidnightMs(day) - nowMs) };
}
