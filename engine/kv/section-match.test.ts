import { describe, expect, it } from "vitest";
import { matchSections } from "./section-match.js";

/** n distinct tokens starting at `from`. */
const run = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

describe("matchSections", () => {
  const A = run(100, 20);
  const B = run(200, 15);
  const C = run(300, 30);
  const D = run(400, 10);

  it("no pruning is a plain prefix match", () => {
    expect(matchSections([...A, ...B, ...C, ...D], [...A, ...B, ...C], 8, 1000)).toEqual({ prefixLength: 65, suffixLength: 0, suffixSource: 0 });
  });

  it("one pruned span reuses A in place and C from after B", () => {
    expect(matchSections([...A, ...C, ...D], [...A, ...B, ...C], 8, 1000)).toEqual({ prefixLength: 20, suffixLength: 30, suffixSource: 35 });
  });

  it("two pruned spans fall back to the prefix", () => {
    const C1 = run(300, 12);
    const B2 = run(500, 5);
    const C2 = run(600, 12);
    const match = matchSections([...A, ...C1, ...C2, ...D], [...A, ...B, ...C1, ...B2, ...C2], 8, 1000);
    expect(match).toMatchObject({ prefixLength: 20, suffixLength: 0, rejected: "two-pruned-spans" });
  });

  it("a C at or below the threshold is not reused, above it is", () => {
    const at = matchSections([...A, ...run(300, 8), ...D], [...A, ...B, ...run(300, 8)], 8, 1000);
    expect(at).toMatchObject({ prefixLength: 20, suffixLength: 0, rejected: "suffix-at-or-below-threshold" });
    const above = matchSections([...A, ...run(300, 9), ...D], [...A, ...B, ...run(300, 9)], 8, 1000);
    expect(above).toMatchObject({ prefixLength: 20, suffixLength: 9 });
  });

  it("never reuses more than maxReuse tokens, and a capped C must still beat the threshold", () => {
    expect(matchSections([...A, ...C], [...A, ...B, ...C], 8, 45)).toMatchObject({ prefixLength: 20, suffixLength: 25 });
    expect(matchSections([...A, ...C], [...A, ...B, ...C], 8, 25)).toMatchObject({ prefixLength: 20, suffixLength: 0 });
    expect(matchSections([...A, ...B], [...A, ...B], 8, 10)).toMatchObject({ prefixLength: 10, suffixLength: 0 });
  });

  it("picks the longest C, the earliest on ties", () => {
    const chain = [...A, ...B, ...C.slice(0, 10), 999, ...C];
    expect(matchSections([...A, ...C], chain, 8, 1000)).toMatchObject({ prefixLength: 20, suffixLength: 30, suffixSource: 46 });
  });

  it("handles empty and disjoint inputs", () => {
    expect(matchSections([], [1, 2, 3], 8, 10)).toMatchObject({ prefixLength: 0, suffixLength: 0 });
    expect(matchSections([1, 2, 3], [], 8, 10)).toMatchObject({ prefixLength: 0, suffixLength: 0 });
    expect(matchSections(run(0, 20), run(50, 20), 8, 100)).toMatchObject({ prefixLength: 0, suffixLength: 0 });
  });
});
