// Routing a step's tokens to experts: the top k by softmax probability, highest first (ties to the lower index),
// weights renormalised to sum to 1 in f32, and every token-slot grouped under its expert in token order.
import { describe, expect, it } from "vitest";
import { routeTokens } from "./moe-routing.js";

/** The same routing in f64, for comparison. */
function reference(logits: number[], k: number): { experts: number[]; weights: number[] } {
  const max = Math.max(...logits);
  const exps = logits.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  const probs = exps.map((e) => e / sum);
  const experts = probs.map((_, i) => i).sort((a, b) => probs[b]! - probs[a]! || a - b).slice(0, k);
  const selected = experts.reduce((a, e) => a + probs[e]!, 0);
  return { experts, weights: experts.map((e) => probs[e]! / selected) };
}

describe("routeTokens", () => {
  it("picks each token's top k experts, highest first, with renormalised weights", () => {
    const rows = [[0.1, 2.5, -1, 0.7, 2.4, 0, 0, -3], [5, 4, 3, 2, 1, 0, -1, -2], [0, 0, 0, 1, 0, 0, 0, 0]];
    const routing = routeTokens(Float32Array.from(rows.flat()), 3, 8, 2, true);
    rows.forEach((row, t) => {
      const expected = reference(row, 2);
      expect(Array.from(routing.experts.subarray(t * 2, t * 2 + 2))).toEqual(expected.experts);
      routing.weights.subarray(t * 2, t * 2 + 2).forEach((w, s) => expect(w).toBeCloseTo(expected.weights[s]!, 6));
      expect(routing.weights[t * 2]! + routing.weights[t * 2 + 1]!).toBeCloseTo(1, 6);
    });
    // Token 2: expert 3 first, then the tie among the rest goes to expert 0.
    expect(Array.from(routing.experts.subarray(4, 6))).toEqual([3, 0]);
  });

  it("groups rows by expert in ascending expert order, rows in token order", () => {
    const routing = routeTokens(Float32Array.from([1, 0, 3, 2, /* */ 0, 1, 2, 3, /* */ 3, 2, 1, 0]), 3, 4, 2, true);
    // Token 0: experts 2, 3; token 1: 3, 2; token 2: 0, 1.
    expect([...routing.groups.entries()]).toEqual([[0, [4]], [1, [5]], [2, [0, 3]], [3, [1, 2]]]);
  });

  it("keeps the softmax probabilities when not renormalising, and takes every expert when k is the count", () => {
    const routing = routeTokens(Float32Array.from([0, Math.log(3)]), 1, 2, 2, false);
    expect(Array.from(routing.experts)).toEqual([1, 0]);
    expect(routing.weights[0]).toBeCloseTo(0.75, 6);
    expect(routing.weights[1]).toBeCloseTo(0.25, 6);
  });

  it("softmax-weight gating (gpt-oss): the top k by logit, weighted by a softmax over those k alone", () => {
    // Softmax over all four would give expert 0 less than half; over the chosen two it is e^2 / (e^2 + e^1).
    const routing = routeTokens(Float32Array.from([2, 1, 0.5, 0.9]), 1, 4, 2, false, "softmax_weight");
    expect(Array.from(routing.experts)).toEqual([0, 1]);
    expect(routing.weights[0]).toBeCloseTo(Math.exp(2) / (Math.exp(2) + Math.exp(1)), 6);
    expect(routing.weights[1]).toBeCloseTo(Math.exp(1) / (Math.exp(2) + Math.exp(1)), 6);
    // A logit far below the others never takes weight it does not have: the weights are the k's own softmax.
    const wide = routeTokens(Float32Array.from([-50, 30, 29, -60]), 1, 4, 3, false, "softmax_weight");
    expect(Array.from(wide.experts)).toEqual([1, 2, 0]);
    expect(wide.weights[0]! + wide.weights[1]! + wide.weights[2]!).toBeCloseTo(1, 6);
    expect(wide.weights[2]).toBeLessThan(1e-30);
  });
});
