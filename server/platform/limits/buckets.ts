// What both limit stores check before they touch a counter (a bucket's fields, no key twice in one reserve), and the
// name each bucket's counter is stored under: a window's key alone, a day's key with its UTC day.
import type { LimitBucket } from "../contract.js";
import { nextUtcMidnightMs } from "./daily.js";

/**
 * The name of a bucket's counter inside a store (before any store prefix): `window:KEY` for a window bucket,
 * `daily:KEY:YYYY-MM-DD` for a daily one, so each UTC day counts apart and an old day's counter simply expires.
 */
export function storedKey(bucket: LimitBucket): string {
  return bucket.kind === "window" ? `window:${bucket.key}` : `daily:${bucket.key}:${bucket.day}`;
}

/** Throws a RangeError naming the bucket when one of its fields cannot be counted (a caller's mistake, not a refusal). */
export function checkBucket(bucket: LimitBucket): void {
  const fail = (why: string): never => {
    throw new RangeError(`limit bucket ${JSON.stringify(bucket.key)}: ${why}`);
  };
  if (typeof bucket.key !== "string" || bucket.key.length === 0) fail("key must be a non-empty string");
  if (!Number.isFinite(bucket.limit) || bucket.limit <= 0) fail(`limit must be a positive number, got ${bucket.limit}`);
  if (!Number.isFinite(bucket.cost) || bucket.cost < 0) fail(`cost must be a number >= 0, got ${bucket.cost}`);
  if (bucket.kind === "window") {
    if (!Number.isFinite(bucket.windowMs) || bucket.windowMs <= 0) fail(`windowMs must be a positive number, got ${bucket.windowMs}`);
  } else if (bucket.kind === "daily") {
    nextUtcMidnightMs(bucket.day); // throws on a malformed day
    if (typeof bucket.seed !== "function") fail("seed must be a function");
  } else {
    fail(`unknown kind ${JSON.stringify((bucket as { kind: unknown }).kind)}`);
  }
}

/** Checks every bucket of one reserve, and that no counter appears twice (its cost would be checked twice, once each). */
export function checkReserve(buckets: readonly LimitBucket[]): void {
  const seen = new Set<string>();
  for (const bucket of buckets) {
    checkBucket(bucket);
    const name = storedKey(bucket);
    if (seen.has(name)) throw new RangeError(`limit bucket ${JSON.stringify(bucket.key)} appears twice in one reserve`);
    seen.add(name);
  }
}

/** Checks every adjustment: a valid bucket and a finite delta (the same counter may appear more than once). */
export function checkAdjustments(adjustments: ReadonlyArray<{ bucket: LimitBucket; delta: number }>): void {
  for (const { bucket, delta } of adjustments) {
    checkBucket(bucket);
    if (!Number.isFinite(delta)) throw new RangeError(`limit bucket ${JSON.stringify(bucket.key)}: delta must be a finite number, got ${delta}`);
  }
}
