// Tests for the penalty formulas (llama.cpp's) and the penalty window.

import { describe, expect, it } from "vitest";
import { SamplingInputError } from "./errors.js";
import { applyPenalties, countWindowTokens, penaltiesActive, penalizeLogit, type PenaltyParams } from "./penalties.js";

const off: PenaltyParams = { repetitionPenalty: 1, frequencyPenalty: 0, presencePenalty: 0, penaltyLastN: 64 };

describe("penalizeLogit (llama.cpp formulas)", () => {
  it("repetition divides positive logits and multiplies non-positive ones", () => {
    const params = { ...off, repetitionPenalty: 2 };
    expect(penalizeLogit(3, 1, params)).toBe(1.5);
    expect(penalizeLogit(-3, 1, params)).toBe(-6);
    expect(penalizeLogit(0, 1, params)).toBe(0);
    expect(penalizeLogit(3, 5, params)).toBe(1.5); // once, whatever the count
  });

  it("frequency subtracts count * f, presence subtracts p once", () => {
    expect(penalizeLogit(1, 3, { ...off, frequencyPenalty: 0.5 })).toBe(1 - 1.5);
    expect(penalizeLogit(1, 3, { ...off, presencePenalty: 0.25 })).toBe(0.75);
    expect(penalizeLogit(1, 1, { ...off, presencePenalty: 0.25 })).toBe(0.75);
  });

  it("combines them in llama.cpp's order: repetition first, then frequency and presence", () => {
    const params = { ...off, repetitionPenalty: 1.25, frequencyPenalty: 0.5, presencePenalty: 0.25 };
    expect(penalizeLogit(2.5, 2, params)).toBeCloseTo(2.5 / 1.25 - 2 * 0.5 - 0.25, 12);
    expect(penalizeLogit(-1, 2, params)).toBeCloseTo(-1 * 1.25 - 2 * 0.5 - 0.25, 12);
  });

  it("leaves unseen tokens alone", () => {
    expect(penalizeLogit(2, 0, { ...off, repetitionPenalty: 2, frequencyPenalty: 1, presencePenalty: 1 })).toBe(2);
  });
});

describe("countWindowTokens and applyPenalties", () => {
  const recent = [5, 1, 1, 2, 1, 3];

  it("counts only the last penaltyLastN tokens, all of them for -1", () => {
    const counts = new Map<number, number>();
    expect([...countWindowTokens(recent, 3, 10, counts)].sort()).toEqual([[1, 1], [2, 1], [3, 1]]);
    expect([...countWindowTokens(recent, -1, 10, counts)].sort()).toEqual([[1, 3], [2, 1], [3, 1], [5, 1]]);
    expect(countWindowTokens(recent, 0, 10, counts).size).toBe(0);
    expect(countWindowTokens(recent, 100, 10, counts).get(1)).toBe(3);
  });

  it("rejects token ids outside the vocabulary, naming recentTokens", () => {
    expect(() => countWindowTokens([1, 12], -1, 10, new Map())).toThrow(SamplingInputError);
    expect(() => countWindowTokens([1, -1], -1, 10, new Map())).toThrow(/recentTokens: entry 1/);
  });

  it("changes exactly the penalised logits of a row", () => {
    const params = { ...off, repetitionPenalty: 2, frequencyPenalty: 0.5, presencePenalty: 0.25, penaltyLastN: -1 };
    const logits = Float32Array.from([1, 2, -2, 4, 0, 8]);
    applyPenalties(logits, countWindowTokens(recent, -1, 6, new Map()), params);
    expect(Array.from(logits)).toEqual([
      1,
      2 / 2 - 3 * 0.5 - 0.25, // token 1 three times
      -2 * 2 - 0.5 - 0.25,
      4 / 2 - 0.5 - 0.25,
      0,
      8 / 2 - 0.5 - 0.25,
    ]);
  });

  it("knows when nothing would change", () => {
    expect(penaltiesActive(off)).toBe(false);
    expect(penaltiesActive({ ...off, repetitionPenalty: 1.1 })).toBe(true);
    expect(penaltiesActive({ ...off, presencePenalty: 1, penaltyLastN: 0 })).toBe(false);
  });
});
