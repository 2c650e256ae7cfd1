// Turns one reserve's per-bucket counters into the ReserveResult both stores return: every bucket's state for the
// rate-limit headers, and for a refusal the bucket that refused and how long to wait.
import type { BucketState, LimitBucket, ReserveResult } from "../contract.js";
import { dailyState, nextUtcMidnightMs } from "./daily.js";
import { windowRetryAfterMs, windowState } from "./gcra.js";

/** One bucket's counter as a reserve left it: the backlog in ms (window) or the day's use (daily), and whether the cost fit. */
export interface BucketCounter {
  value: number;
  fits: boolean;
}

/** The header-facing state of a bucket whose counter holds `value`. */
export function bucketState(bucket: LimitBucket, value: number, nowMs: number): BucketState {
  return bucket.kind === "window"
    ? windowState(bucket.key, bucket.limit, bucket.windowMs, value)
    : dailyState(bucket.key, bucket.limit, bucket.day, value, nowMs);
}

/** For a bucket that refused its cost: how long until it would admit it, and whether no wait can (cost above the limit). */
function refusal(bucket: LimitBucket, value: number, nowMs: number): { retryAfterMs: number; exceedsLimit: boolean } {
  if (bucket.cost > bucket.limit) return { retryAfterMs: bucketState(bucket, value, nowMs).resetMs, exceedsLimit: true };
  if (bucket.kind === "daily") return { retryAfterMs: Math.max(0, nextUtcMidnightMs(bucket.day) - nowMs), exceedsLimit: false };
  return { retryAfterMs: windowRetryAfterMs(value, bucket.limit, bucket.windowMs, bucket.cost), exceedsLimit: false };
}

/**
 * The result of one reserve. `counters[i]` belongs to `buckets[i]`: after the reserve when every cost fit (admitted),
 * untouched otherwise. A refusal names the refusing bucket with the longest wait, one whose limit the cost alone
 * exceeds first.
 */
export function reserveResult(buckets: readonly LimitBucket[], counters: readonly BucketCounter[], nowMs: number): ReserveResult {
  const states = buckets.map((bucket, index) => bucketState(bucket, counters[index]!.value, nowMs));
  let refused: { key: string; retryAfterMs: number; exceedsLimit: boolean } | undefined;
  buckets.forEach((bucket, index) => {
    if (counters[index]!.fits) return;
    const candidate = { key: bucket.key, ...refusal(bucket, counters[index]!.value, nowMs) };
    const better =
      refused === undefined ||
      (candidate.exceedsLimit && !refused.exceedsLimit) ||
      (candidate.exceedsLimit === refused.exceedsLimit && candidate.retryAfterMs > refused.retryAfterMs);
    if (better) refused = candidate;
  });
  if (refused === undefined) return { admitted: true, buckets: states };
  return { admitted: false, refusedBy: refused.key, retryAfterMs: refused.retryAfterMs, exceedsLimit: refused.exceedsLimit, buckets: states };
}
