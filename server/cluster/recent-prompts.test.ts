// What routing remembers of recent requests: the leading blocks more than half of them share (none until two are
// remembered), each worker's count, and the window forgetting its oldest.
import { describe, expect, it } from "vitest";
import { RecentPrompts } from "./recent-prompts.js";

describe("RecentPrompts", () => {
  it("counts the leading blocks more than half of the remembered prompts share, none until two are remembered", () => {
    const recent = new RecentPrompts<string>(4);
    recent.record(["t", "t1", "t1q"], "a");
    expect(recent.commonBlocks(["t", "t1", "t1r"])).toBe(0); // one prompt cannot tell a template from a tenant
    recent.record(["t", "t2", "t2q"], "b");
    expect(recent.commonBlocks(["t", "t1", "t1r"])).toBe(1); // "t1" in 1 of 2: not more than half
    recent.record(["t", "t1", "t1s"], "a");
    expect(recent.commonBlocks(["t", "t1", "t1r"])).toBe(2); // "t1" in 2 of 3
    expect(recent.commonBlocks(["u", "t1"])).toBe(0); // a chain breaks at its first unshared block
    expect(recent.commonBlocks([])).toBe(0);
  });

  it("says how many remembered requests went to each worker, and forgets the oldest past its size", () => {
    const recent = new RecentPrompts<string>(3);
    recent.record(["x"], "a");
    recent.record(["y"], "a");
    recent.record(["y"], "b");
    expect([recent.routedTo("a"), recent.routedTo("b"), recent.routedTo("c")]).toEqual([2, 1, 0]);
    recent.record(["z"], "c");
    expect([recent.routedTo("a"), recent.routedTo("b"), recent.routedTo("c")]).toEqual([1, 1, 1]);
    expect(recent.commonBlocks(["x"])).toBe(0); // forgotten with its request
    recent.record(["z"], "c");
    recent.record(["z"], "c");
    expect(recent.commonBlocks(["y"])).toBe(0);
    expect(recent.commonBlocks(["z", "z2"])).toBe(1); // in all 3 remembered
  });
});
