import { describe, expect, it } from "vitest";
import { formatRatio, formatSpread, pairedRatio, spread } from "./speed-spread.js";

describe("speed spread", () => {
  it("summarises repeats as median with min and max", () => {
    expect(spread([30, 10, 20, 50])).toEqual({ median: 25, min: 10, max: 50 });
    expect(formatSpread(spread([3, 1, 2]))).toBe("2.0 (1.0-3.0)");
    expect(formatSpread(spread([]))).toBe("-");
  });

  it("pairs ratios by round: a machine-wide slowdown in one round leaves the ratio's range narrow", () => {
    // Round 2 ran at half speed for both engines.
    const ratio = pairedRatio([100, 50, 110], [200, 100, 200]);
    expect(ratio.median).toBeCloseTo(100 / 200);
    expect(ratio.min).toBeCloseTo(0.5);
    expect(ratio.max).toBeCloseTo(0.55);
    expect(formatRatio(ratio)).toBe("0.50x (0.50-0.55)");
  });
});
