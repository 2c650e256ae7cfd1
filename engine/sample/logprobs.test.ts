// The log-probability math: log-softmax in float64, the top tokens by partial selection (order, ties, masked and NaN
// logits), and the checks of `top`.
import { describe, expect, it } from "vitest";
import { MAX_TOP_LOGPROBS, checkTopLogprobs, logSumExp, tokenLogprob, topTokens } from "./logprobs.js";

/** The reference: log-softmax by a plain float64 sum over the row. */
function reference(logits: number[]): number[] {
  const max = Math.max(...logits);
  const sum = logits.reduce((s, l) => s + Math.exp(l - max), 0);
  return logits.map((l) => l - max - Math.log(sum));
}

/** Deterministic pseudo-random logits. */
function randomLogits(count: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 20 - 10;
  });
}

describe("tokenLogprob", () => {
  it("equals a plain log-softmax, and its probabilities sum to 1", () => {
    const logits = randomLogits(5000, 7);
    const expected = reference([...logits]);
    for (const token of [0, 17, 4999]) expect(tokenLogprob(logits, token, 0).logprob).toBeCloseTo(expected[token], 12);
    expect(Array.from(logits, (_, i) => Math.exp(tokenLogprob(logits, i, 0).logprob)).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });

  it("stays finite for logits far from 0 (the sum starts from the largest)", () => {
    const logits = Float32Array.from([1000, 999, 998]);
    const result = tokenLogprob(logits, 2, 3);
    expect(result.logprob).toBeCloseTo(-2 - Math.log(1 + Math.exp(-1) + Math.exp(-2)), 12);
    expect(result.top.map((entry) => entry.token)).toEqual([0, 1, 2]);
  });

  it("lists the top tokens most likely first, the lower id first on ties, as many as asked", () => {
    const logits = Float32Array.from([1, 3, 2, 3, 0, 2]);
    const result = tokenLogprob(logits, 4, 4);
    expect(result.top.map((entry) => entry.token)).toEqual([1, 3, 2, 5]);
    const expected = reference([...logits]);
    for (const entry of result.top) expect(entry.logprob).toBeCloseTo(expected[entry.token], 12);
    expect(result.token).toBe(4);
    expect(tokenLogprob(logits, 4, 0).top).toEqual([]);
    expect(topTokens(logits, 10)).toEqual([1, 3, 2, 5, 0, 4]);
  });

  it("selects the same top tokens as a full sort on a large row", () => {
    const logits = randomLogits(151_936, 3);
    logits[100] = logits[200] = 50; // a tie at the top
    const sorted = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b);
    expect(topTokens(logits, MAX_TOP_LOGPROBS)).toEqual(sorted.slice(0, MAX_TOP_LOGPROBS));
    expect(topTokens(logits, 2)).toEqual([100, 200]);
  });

  it("gives masked (-Infinity) tokens -Infinity and ranks them last, the others normalised without them", () => {
    const logits = Float32Array.from([Number.NEGATIVE_INFINITY, 0, Number.NEGATIVE_INFINITY, 0]);
    expect(tokenLogprob(logits, 1, 4)).toEqual({
      token: 1, logprob: -Math.log(2),
      top: [{ token: 1, logprob: -Math.log(2) }, { token: 3, logprob: -Math.log(2) }, { token: 0, logprob: Number.NEGATIVE_INFINITY }, { token: 2, logprob: Number.NEGATIVE_INFINITY }],
    });
    expect(tokenLogprob(logits, 0, 0).logprob).toBe(Number.NEGATIVE_INFINITY);
  });

  it("counts NaN logits as no probability: -Infinity for them, last in the ranking, the rest unaffected", () => {
    const logits = Float32Array.from([Number.NaN, 2, 1, Number.NaN]);
    const result = tokenLogprob(logits, 0, 4);
    expect(result.logprob).toBe(Number.NEGATIVE_INFINITY);
    expect(result.top.map((entry) => entry.token)).toEqual([1, 2, 0, 3]);
    expect(result.top[0].logprob).toBeCloseTo(reference([2, 1])[0], 12);
    expect(logSumExp(Float32Array.from([Number.NaN, Number.NaN]))).toBe(Number.NEGATIVE_INFINITY);
    expect(tokenLogprob(Float32Array.from([Number.NaN, Number.NEGATIVE_INFINITY]), 1, 1).top).toEqual([{ token: 0, logprob: Number.NEGATIVE_INFINITY }]);
  });
});

describe("checkTopLogprobs", () => {
  it("takes integers 0..20 and names the field of anything else", () => {
    expect(checkTopLogprobs(undefined, "logprobs")).toBeUndefined();
    expect(checkTopLogprobs({ top: 0 }, "logprobs")).toEqual({ top: 0 });
    expect(checkTopLogprobs({ top: 20 }, "promptLogprobs")).toEqual({ top: 20 });
    for (const bad of [{ top: 21 }, { top: -1 }, { top: 1.5 }, { top: "3" }, {}, null, 5]) {
      expect(() => checkTopLogprobs(bad, "logprobs"), JSON.stringify(bad)).toThrow(expect.objectContaining({ field: "logprobs.top" }));
    }
  });
});
