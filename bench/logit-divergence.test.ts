import { describe, expect, it } from "vitest";
import { entropy, klDivergence, logSoftmax, topToken } from "./logit-divergence.js";

describe("logit divergence", () => {
  it("computes log softmax at temperature 1, stable for large logits", () => {
    const logits = [0, Math.log(3)]; // probabilities 1/4 and 3/4
    expect(Array.from(logSoftmax(logits))).toEqual([expect.closeTo(Math.log(0.25), 12), expect.closeTo(Math.log(0.75), 12)]);
    const shifted = logSoftmax([1000, 1000 + Math.log(3)]);
    expect(shifted[0]).toBeCloseTo(Math.log(0.25), 12);
    expect(shifted[1]).toBeCloseTo(Math.log(0.75), 12);
  });

  it("gives KL(P || Q) = sum P log(P / Q), in nats, in that direction", () => {
    const p = [0, Math.log(3)]; // (1/4, 3/4)
    const q = [0, 0]; // (1/2, 1/2)
    const pq = 0.25 * Math.log(0.25 / 0.5) + 0.75 * Math.log(0.75 / 0.5);
    const qp = 0.5 * Math.log(0.5 / 0.25) + 0.5 * Math.log(0.5 / 0.75);
    expect(klDivergence(p, q)).toBeCloseTo(pq, 12);
    expect(klDivergence(q, p)).toBeCloseTo(qp, 12);
    expect(pq).not.toBeCloseTo(qp, 3); // the direction matters, so a swapped formula fails above
  });

  it("is 0 for equal distributions, whatever their shift, and catches a float32-sized difference", () => {
    const row = Float32Array.from({ length: 151936 }, (_, i) => Math.sin(i) * 3);
    expect(klDivergence(row, row)).toBe(0);
    expect(klDivergence(row, row.map((x) => x + 7))).toBeLessThan(1e-12);
    const nudged = Float32Array.from(row);
    nudged[5] += 0.01;
    expect(klDivergence(row, nudged)).toBeGreaterThan(1e-12);
  });

  it("treats -Infinity logits as probability 0 on either side", () => {
    // P = (0, 1/2, 1/2): its zero term adds nothing (not NaN), the others give log(1/2 / Q).
    expect(klDivergence([-Infinity, 0, 0], [5, 0, 0])).toBeCloseTo(Math.log(0.5 * (Math.exp(5) + 2)), 10);
    expect(klDivergence([0, 0, 0], [-Infinity, 0, 0])).toBe(Infinity); // Q's zero where P is not
    expect(() => logSoftmax([Number.NaN, 0])).toThrow(RangeError);
  });

  it("gives the entropy in nats", () => {
    expect(entropy([2, 2, 2, 2])).toBeCloseTo(Math.log(4), 12);
    expect(entropy([0, Math.log(3), -Infinity])).toBeCloseTo(-(0.25 * Math.log(0.25) + 0.75 * Math.log(0.75)), 12);
  });

  it("picks the lowest index on ties", () => {
    expect(topToken([1, 3, 3, 2])).toBe(1);
  });
});
