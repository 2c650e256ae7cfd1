// Tests for top-k selection and the top_p / min_p truncations against full-sort references.

import { describe, expect, it } from "vitest";
import { CandidateSet } from "./candidates.js";
import { SeededRandom } from "./random.js";
import { NucleusSelector } from "./nucleus.js";
import { truncateMinP, truncateTopP } from "./truncation.js";

/** Random logits with many exact ties (values on a coarse grid). */
function tiedLogits(size: number, seed: number): Float32Array {
  const random = new SeededRandom(seed);
  return Float32Array.from({ length: size }, () => Math.floor(random.nextFloat() * 200) / 10 - 10);
}

/** Reference order: full sort, logit descending, id ascending on ties. */
function sortedIds(logits: Float32Array): number[] {
  return Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b);
}

function live(candidates: CandidateSet): number[] {
  return Array.from(candidates.ids.subarray(0, candidates.size));
}

describe("CandidateSet.selectTop", () => {
  it("equals the first k of a full sort, ties broken by lower id", () => {
    const logits = tiedLogits(151_936, 1);
    const reference = sortedIds(logits);
    const candidates = new CandidateSet(0);
    for (const k of [1, 2, 40, 1000, 151_936]) {
      candidates.selectTop(logits, k);
      expect(candidates.sorted).toBe(true);
      expect(live(candidates)).toEqual(reference.slice(0, k));
      expect(Array.from(candidates.logits.subarray(0, k))).toEqual(reference.slice(0, k).map((id) => logits[id]));
    }
  });

  it("clamps k to the vocabulary and reuses its buffers", () => {
    const candidates = new CandidateSet(0);
    candidates.selectTop(Float32Array.from([0, 3, 3, 1]), 10);
    expect(live(candidates)).toEqual([1, 2, 3, 0]);
    const ids = candidates.ids;
    candidates.selectTop(Float32Array.from([5, 4, 6]), 2);
    expect(candidates.ids).toBe(ids);
    expect(live(candidates)).toEqual([2, 0]);
  });
});

describe("truncation", () => {
  function referenceNucleus(logits: Float32Array, ids: number[], topP: number): number[] {
    const max = logits[ids[0]]; // ids are sorted best first
    const weights = ids.map((id) => Math.exp(logits[id] - max));
    const sum = weights.reduce((a, b) => a + b, 0);
    let cumulative = 0;
    for (let i = 0; i < ids.length; i++) {
      cumulative += weights[i] / sum;
      if (cumulative >= topP) return ids.slice(0, i + 1);
    }
    return ids;
  }

  it("NucleusSelector gives the full-sort nucleus as a set, peaked, flat, tied or masked", () => {
    const nucleus = new NucleusSelector();
    const candidates = new CandidateSet(0);
    const peaked = tiedLogits(151_936, 2).map((x) => x * 3);
    const flat = tiedLogits(20_000, 3).map((x) => x / 10);
    const equal = new Float32Array(1000);
    const masked = tiedLogits(5000, 4).map((x, i) => (i % 3 === 0 ? -Infinity : x));
    const wide = tiedLogits(5000, 5).map((x, i) => (i % 7 === 0 ? x * 100 : x)); // spans more than the histogram
    for (const logits of [peaked, flat, equal, masked, wide, Float32Array.from([1, 2])]) {
      const reference = sortedIds(logits);
      for (const topP of [0.1, 0.5, 0.9, 0.999]) {
        nucleus.select(logits, topP, candidates);
        const expected = referenceNucleus(logits, reference, topP).sort((a, b) => a - b);
        expect(live(candidates).sort((a, b) => a - b)).toEqual(expected);
        const logitsMatch = live(candidates).every((id, i) => candidates.logits[i] === logits[id]);
        expect(logitsMatch).toBe(true);
      }
    }
  });

  it("truncateTopP renormalises over the candidates it is given", () => {
    const logits = Float32Array.from([0, Math.log(2), Math.log(3), Math.log(4), -50]);
    const candidates = new CandidateSet(0);
    candidates.selectTop(logits, 4); // ids 3, 2, 1, 0 with probabilities 0.4, 0.3, 0.2, 0.1
    truncateTopP(candidates, 0.65);
    expect(live(candidates)).toEqual([3, 2]);
    candidates.selectTop(logits, 4);
    truncateTopP(candidates, 0.05);
    expect(live(candidates)).toEqual([3]); // always at least one
  });

  it("truncateMinP keeps tokens with p >= minP * p_max, in order", () => {
    const logits = Float32Array.from([Math.log(0.05), Math.log(0.5), Math.log(0.1), Math.log(0.35)]);
    const candidates = new CandidateSet(0);
    candidates.fillAll(logits);
    truncateMinP(candidates, 0.19); // threshold 0.095
    expect(live(candidates)).toEqual([1, 2, 3]);
    truncateMinP(candidates, 1);
    expect(live(candidates)).toEqual([1]);
  });
});
