// The step pacer: a full batch while nothing decodes; while requests decode, a budget that the measured step cost
// says fits the target, never below a minimum chunk; and off at target 0.
import { describe, expect, it } from "vitest";
import { StepPacer } from "./step-pacer.js";

describe("StepPacer", () => {
  it("gives prefill the whole batch when nothing decodes, and always when pacing is off", () => {
    const pacer = new StepPacer({ targetMs: 200, maxTokens: 512 });
    expect(pacer.budget(0)).toBe(512);
    const off = new StepPacer({ targetMs: 0, maxTokens: 512 });
    off.record(512, 0, 5000);
    expect(off.budget(8)).toBe(512);
  });

  it("starts with a modest chunk while requests decode, then sizes steps to the target from what it measured", () => {
    const pacer = new StepPacer({ targetMs: 200, maxTokens: 512, minChunkTokens: 16 });
    expect(pacer.budget(4)).toBe(4 + 16);
    pacer.record(4, 4, 20); // a decode-only step: 20 ms fixed
    pacer.record(512, 0, 20 + 512 * 2); // prefill at 2 ms per token
    // (200 - 20) / 2 = 90 prefill tokens beside the 4 decodes.
    expect(pacer.budget(4)).toBe(94);
    // A rising cost (a longer context) is taken at once: the next step shrinks to fit.
    pacer.record(94, 4, 20 + 90 * 8);
    expect(pacer.budget(4)).toBe(4 + 22); // 180 ms / 8 ms
    // A falling one is averaged in.
    pacer.record(94, 4, 20 + 90 * 2);
    expect(pacer.budget(4)).toBeGreaterThan(4 + 22);
    expect(pacer.budget(4)).toBeLessThan(4 + 90);
  });

  it("lets prefill add as much as decoding takes where decoding alone passes the target, never less than the minimum chunk nor more than the batch", () => {
    const pacer = new StepPacer({ targetMs: 10, maxTokens: 256, minChunkTokens: 32 });
    pacer.record(8, 8, 50); // decoding alone already takes longer than the target
    pacer.record(264, 8, 50 + 256 * 1);
    expect(pacer.budget(8)).toBe(8 + 50); // 50 ms of prefill at 1 ms per token: the step at most doubles
    const slow = new StepPacer({ targetMs: 10, maxTokens: 256, minChunkTokens: 32 });
    slow.record(8, 8, 5);
    slow.record(264, 8, 5 + 256 * 3);
    expect(slow.budget(8)).toBe(8 + 32);
    const fast = new StepPacer({ targetMs: 1000, maxTokens: 256 });
    fast.record(256, 0, 10);
    expect(fast.budget(2)).toBe(256);
  });

  it("refuses a negative or non-finite target", () => {
    expect(() => new StepPacer({ targetMs: -1, maxTokens: 64 })).toThrow(/stepTargetMs/);
    expect(() => new StepPacer({ targetMs: Number.NaN, maxTokens: 64 })).toThrow(/stepTargetMs/);
  });

  it("sizes background decode steps to a target from the decode steps measured", () => {
    const pacer = new StepPacer({ targetMs: 200, maxTokens: 512 });
    expect(pacer.sequencesWithin(20, 64)).toBe(64);
    pacer.record(8, 8, 48); // 6 ms per sequence
    expect(pacer.sequencesWithin(20, 64)).toBe(3);
    expect(pacer.sequencesWithin(1, 64)).toBe(1);
    pacer.record(100, 4, 500); // prefill steps say nothing about it
    expect(pacer.sequencesWithin(20, 64)).toBe(3);
    expect(pacer.sequencesWithin(20, 2)).toBe(2);
  });
});
