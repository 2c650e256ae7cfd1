// The arithmetic of a window bucket: the generic cell rate algorithm (GCRA). A bucket admits `limit` units per
// `windowMs`, one unit every emission interval T = windowMs / limit. Its state is the theoretical arrival time (tat):
// a cost c is admitted iff max(tat, now) + c·T - now <= windowMs, which allows a burst of `limit` and then the rate,
// over any window, with no fixed boundary to burst across twice.
//
// NOTE: both stores keep tat as (atMs, backlogMs) with tat = atMs + backlogMs, and do the arithmetic on the backlog
// (tat - now, at most a window plus any overdraft) rather than on tat itself: at 1.7e12 ms a double's step is 2.4e-4
// ms, which summed over a burst of a million one-token reserves would drift by a whole request; the backlog stays
// exact to about 1e-11 ms. Pure functions; the Redis script repeats them in Lua, and one test suite runs both.
import type { BucketState } from "../contract.js";

/** Relative slack on the admission test, so that `limit` reserves of one unit land exactly on the window. */
export const WINDOW_TOLERANCE = 1e-9;

/** A window bucket's stored state: tat = atMs + backlogMs. */
export interface WindowCounter {
  atMs: number;
  backlogMs: number;
}

/** The backlog (tat - now, never negative) of a counter at `nowMs`; zero for a counter never seen. A clock that went back counts as no time passed. */
export function backlogAt(counter: WindowCounter | undefined, nowMs: number): number {
  if (counter === undefined) return 0;
  return Math.max(0, counter.backlogMs - Math.max(0, nowMs - counter.atMs));
}

/** How far `units` move tat: units · T, computed as units · windowMs / limit (one rounding). */
export function emissionMs(units: number, limit: number, windowMs: number): number {
  return (units * windowMs) / limit;
}

/** Whether `cost` fits on top of `backlogMs`: backlog + cost·T <= windowMs. */
export function windowFits(backlogMs: number, limit: number, windowMs: number, cost: number): boolean {
  return backlogMs + emissionMs(cost, limit, windowMs) <= windowMs * (1 + WINDOW_TOLERANCE);
}

/** The backlog after an adjustment by `delta` units: negative moves tat back (never before now), positive forward without bound. */
export function adjustedBacklog(backlogMs: number, limit: number, windowMs: number, delta: number): number {
  return Math.max(0, backlogMs + emissionMs(delta, limit, windowMs));
}

/** Milliseconds until `cost` fits, for a refused cost that is not above the limit. */
export function windowRetryAfterMs(backlogMs: number, limit: number, windowMs: number, cost: number): number {
  return Math.max(1, Math.ceil(backlogMs + emissionMs(cost, limit, windowMs) - windowMs - 1e-6));
}

/** A window bucket's state: whole units that fit now, and time until tat (the bucket is full again). */
export function windowState(key: string, limit: number, windowMs: number, backlogMs: number): BucketState {
  const fitting = Math.floor(((windowMs - backlogMs) * limit) / windowMs + WINDOW_TOLERANCE * limit);
  return { key, limit, remaining: Math.min(limit, Math.max(0, fitting)), resetMs: Math.max(0, Math.ceil(backlogMs - 1e-6)) };
}
