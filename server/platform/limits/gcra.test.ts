// Window buckets' arithmetic (GCRA on the backlog): what fits, with its tolerance inclusive; the wait for a refused
// cost; and the whole units a state reports, counting a unit that fits within the tolerance.
import { describe, expect, it } from "vitest";
import { adjustedBacklog, backlogAt, WINDOW_TOLERANCE, windowFits, windowRetryAfterMs, windowState } from "./gcra.js";

describe("window buckets", () => {
  it("let time drain the backlog, never below zero, and count a clock that went back as no time", () => {
    expect(backlogAt(undefined, 5000)).toBe(0);
    expect(backlogAt({ atMs: 1000, backlogMs: 600 }, 1400)).toBe(200);
    expect(backlogAt({ atMs: 1000, backlogMs: 600 }, 9000)).toBe(0);
    expect(backlogAt({ atMs: 1000, backlogMs: 600 }, 500)).toBe(600);
  });

  it("fit a cost up to the window, the tolerance included", () => {
    // 10 per minute: T = 6 s.
    expect(windowFits(54_000, 10, 60_000, 1)).toBe(true);
    expect(windowFits(54_001, 10, 60_000, 1)).toBe(false);
    expect(windowFits(60_000 * (1 + WINDOW_TOLERANCE), 10, 60_000, 0)).toBe(true);
  });

  it("move the backlog by adjustments, never below zero, and wait exactly until a refused cost fits", () => {
    expect(adjustedBacklog(12_000, 10, 60_000, -1)).toBe(6000);
    expect(adjustedBacklog(3000, 10, 60_000, -1)).toBe(0);
    expect(adjustedBacklog(60_000, 10, 60_000, 2)).toBe(72_000);
    expect(windowRetryAfterMs(60_000, 10, 60_000, 1)).toBe(6000);
    expect(windowRetryAfterMs(60_000, 10, 60_000, 0)).toBe(1);
  });

  it("state whole units that fit now, a unit within the tolerance counted, and the time until the bucket is full", () => {
    expect(windowState("rpm", 10, 60_000, 0)).toEqual({ key: "rpm", limit: 10, remaining: 10, resetMs: 0 });
    expect(windowState("rpm", 10, 60_000, 6000.5)).toEqual({ key: "rpm", limit: 10, remaining: 8, resetMs: 6001 });
    expect(windowState("rpm", 10, 60_000, 72_000)).toEqual({ key: "rpm", limit: 10, remaining: 0, resetMs: 72_000 });
    // 3 of 1000 units free, short by a rounding error far below the tolerance (1e-9 of the limit): still 3.
    expect(windowState("tpm", 1000, 60_000, 59_820 + 1e-7).remaining).toBe(3);
  });
});
