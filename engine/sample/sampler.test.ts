// Tests for the sampler: greedy, top_k = 1, seeded reproducibility, the drawn distribution, bad inputs.

import { describe, expect, it } from "vitest";
import { argmax } from "../../kernels/sample/argmax.js";
import { SamplingInputError, SamplingParamError } from "./errors.js";
import { SeededRandom } from "./random.js";
import { Sampler, checkDeviceToken } from "./sampler.js";
import { DEFAULT_SAMPLING_PARAMS, type SamplingParams } from "./params.js";
import { logSoftmax, probabilities } from "./softmax.js";

const VOCABULARY = 151_936;

function params(overrides: Partial<SamplingParams>): SamplingParams {
  return { ...DEFAULT_SAMPLING_PARAMS, ...overrides };
}

function randomLogits(size: number, random: SeededRandom, scale = 4): Float32Array {
  return Float32Array.from({ length: size }, () => (random.nextFloat() - 0.5) * 2 * scale);
}

describe("greedy", () => {
  it("argmax picks the largest logit and the lowest id on ties", () => {
    expect(argmax(Float32Array.from([1, 5, 2, 5]))).toBe(1);
    expect(argmax(Float32Array.from([-Infinity, -Infinity]))).toBe(0);
    expect(argmax(Float32Array.from([Number.NaN, -3, Number.NaN]))).toBe(1);
    expect(argmax(new Float32Array(0))).toBe(-1);
  });

  it("temperature 0 returns the argmax of a full-size row", () => {
    const random = new SeededRandom(11);
    const sampler = new Sampler(params({ temperature: 0, topK: 40, topP: 0.5 }));
    for (let step = 0; step < 5; step++) {
      const logits = randomLogits(VOCABULARY, random);
      logits[1000 + step] = 100;
      logits[90_000 + step] = 100;
      expect(sampler.sample(logits, [])).toBe(1000 + step);
    }
  });

  it("top_k = 1 equals greedy at any temperature", () => {
    const random = new SeededRandom(12);
    const greedy = new Sampler(params({ temperature: 0 }));
    for (const temperature of [0.1, 1, 5, 100]) {
      const topOne = new Sampler(params({ temperature, topK: 1, seed: 3 }));
      for (let step = 0; step < 5; step++) {
        const logits = randomLogits(VOCABULARY, random).map(Math.round); // many ties
        expect(topOne.sample(logits, [])).toBe(greedy.sample(logits, []));
      }
    }
  });

  it("top_p = 0 keeps only the most likely token: greedy at any temperature, on the host and for the device", () => {
    const random = new SeededRandom(13);
    const greedy = new Sampler(params({ temperature: 0 }));
    for (const temperature of [0.5, 1, 2]) {
      const topOnly = new Sampler(params({ temperature, topP: 0, seed: 4 }));
      for (let step = 0; step < 5; step++) {
        const logits = randomLogits(VOCABULARY, random).map(Math.round); // many ties
        expect(topOnly.sample(logits, [])).toBe(greedy.sample(logits, []));
      }
      expect(topOnly.deviceSampling()).toMatchObject({ temperature: 0, random: 0 });
    }
  });

  it("applies penalties before the argmax", () => {
    const logits = Float32Array.from([3, 2.5, 1, -1]);
    expect(new Sampler(params({ temperature: 0 })).sample(logits, [0])).toBe(0);
    expect(new Sampler(params({ temperature: 0, repetitionPenalty: 1.5 })).sample(logits, [0])).toBe(1); // 3 / 1.5 = 2
    expect(new Sampler(params({ temperature: 0, presencePenalty: 0.6 })).sample(logits, [1, 0])).toBe(0); // 2.4 vs 1.9
    expect(new Sampler(params({ temperature: 0, frequencyPenalty: 0.3 })).sample(logits, [0, 0, 0, 1])).toBe(1); // 2.1 vs 2.2
    expect(new Sampler(params({ temperature: 0, repetitionPenalty: 2, penaltyLastN: 1 })).sample(logits, [0, 1])).toBe(0);
    expect(Array.from(logits)).toEqual([3, 2.5, 1, -1]); // the caller's row is never modified
  });
});

describe("seeded sampling", () => {
  const chain = params({ temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repetitionPenalty: 1.1, seed: 1234 });

  function run(sampler: Sampler, steps: number, logitsSeed: number): number[] {
    const random = new SeededRandom(logitsSeed);
    const tokens: number[] = [];
    for (let step = 0; step < steps; step++) tokens.push(sampler.sample(randomLogits(VOCABULARY, random, 3), tokens));
    return tokens;
  }

  it("the same seed and logits give the same tokens; another seed does not", () => {
    const first = run(new Sampler(chain), 30, 5);
    expect(run(new Sampler(chain), 30, 5)).toEqual(first);
    expect(run(new Sampler({ ...chain, seed: 1235 }), 30, 5)).not.toEqual(first);
  });

  it("without a seed it draws one and exposes it so the run can be repeated", () => {
    const { seed: _unused, ...unseeded } = chain;
    const sampler = new Sampler(unseeded);
    expect(Number.isInteger(sampler.seed)).toBe(true);
    expect(sampler.params.seed).toBe(sampler.seed);
    const tokens = run(sampler, 20, 6);
    expect(run(new Sampler({ ...unseeded, seed: sampler.seed }), 20, 6)).toEqual(tokens);
  });

  it("the full vocabulary with no truncation is reproducible too", () => {
    const plain = params({ temperature: 1, seed: 99 });
    expect(run(new Sampler(plain), 10, 7)).toEqual(run(new Sampler(plain), 10, 7));
  });
});

describe("distribution", () => {
  /** Reference: full sort, top_k, then top_p and min_p at temperature 1, then softmax(logits / T) over survivors. */
  function expectedDistribution(logits: number[], p: SamplingParams): Map<number, number> {
    let ids = logits.map((_, id) => id).sort((a, b) => logits[b] - logits[a] || a - b);
    if (p.topK > 0) ids = ids.slice(0, p.topK);
    const softmaxOver = (set: number[], temperature: number) => {
      const max = Math.max(...set.map((id) => logits[id]));
      const weights = set.map((id) => Math.exp((logits[id] - max) / temperature));
      const sum = weights.reduce((a, b) => a + b, 0);
      return weights.map((w) => w / sum);
    };
    const nucleus = softmaxOver(ids, 1);
    let cumulative = 0;
    const cut = nucleus.findIndex((probability) => (cumulative += probability) >= p.topP);
    if (cut >= 0) ids = ids.slice(0, cut + 1);
    const best = Math.max(...ids.map((id) => logits[id]));
    ids = ids.filter((id) => Math.exp(logits[id] - best) >= p.minP);
    const final = softmaxOver(ids, p.temperature);
    return new Map(ids.map((id, i) => [id, final[i]]));
  }

  function drawFrequencies(logits: number[], p: SamplingParams, draws: number): number[] {
    const sampler = new Sampler(p);
    const row = Float32Array.from(logits);
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < draws; i++) counts[sampler.sample(row, [])]++;
    return counts.map((count) => count / draws);
  }

  // Sorted: id 3 (3.0), 6 (2.5), 0 (2.0), 1 (1.5), 2 (1.0), 4 (0.5), 7 (0.0), 5 (-1.0).
  const logits = [2.0, 1.5, 1.0, 3.0, 0.5, -1.0, 2.5, 0.0];
  const cases: Array<[string, Partial<SamplingParams>, number[]]> = [
    ["no truncation", { temperature: 1 }, [0, 1, 2, 3, 4, 5, 6, 7]],
    ["top_k 6 at T 1.5", { temperature: 1.5, topK: 6 }, [3, 6, 0, 1, 2, 4]],
    ["top_p 0.9 at T 0.5", { temperature: 0.5, topP: 0.9 }, [3, 6, 0, 1, 2]],
    ["min_p 0.3 at T 2", { temperature: 2, minP: 0.3 }, [3, 6, 0]],
    ["top_k 6, top_p 0.9, min_p 0.25 at T 0.7", { temperature: 0.7, topK: 6, topP: 0.9, minP: 0.25 }, [3, 6, 0]],
    ["top_k 6, top_p 0.85 at T 1", { temperature: 1, topK: 6, topP: 0.85 }, [3, 6, 0, 1]],
  ];

  it.each(cases)("matches softmax(logits / T) after truncation: %s", (_name, overrides, survivors) => {
    const p = params({ ...overrides, seed: 2024 });
    const expected = expectedDistribution(logits, p);
    expect([...expected.keys()].sort()).toEqual([...survivors].sort()); // the case cuts what it says it cuts
    const draws = 100_000;
    const frequencies = drawFrequencies(logits, p, draws);
    frequencies.forEach((frequency, id) => {
      const probability = expected.get(id) ?? 0;
      if (probability === 0) {
        expect(frequency, `token ${id} was truncated`).toBe(0);
      } else {
        const sigma = Math.sqrt((probability * (1 - probability)) / draws);
        expect(Math.abs(frequency - probability), `token ${id}`).toBeLessThan(5 * sigma + 1e-4);
      }
    });
  });
});

describe("inputs", () => {
  it("takes partial parameters, filling the defaults", () => {
    const sampler = new Sampler({ temperature: 0 });
    expect(sampler.params).toMatchObject({ ...DEFAULT_SAMPLING_PARAMS, temperature: 0 });
    expect(sampler.sample(Float32Array.from([0, 2, 1]))).toBe(1);
  });

  it("rejects bad parameters at construction, naming the field", () => {
    expect(() => new Sampler(params({ topP: -0.5 }))).toThrow(SamplingParamError);
    expect(() => new Sampler(params({ topP: -0.5 }))).toThrow(/topP/);
  });

  it("rejects empty rows, all-NaN rows and fully masked rows", () => {
    const sampler = new Sampler(params({ seed: 1 }));
    expect(() => sampler.sample(new Float32Array(0), [])).toThrow(SamplingInputError);
    expect(() => sampler.sample(Float32Array.from([Number.NaN, 1]), [])).toThrow(/logits/);
    expect(() => sampler.sample(Float32Array.from([-Infinity, -Infinity]), [])).toThrow(/logits/);
    expect(() => new Sampler(params({ temperature: 0 })).sample(Float32Array.from([Number.NaN]), [])).toThrow(/NaN/);
    expect(() => new Sampler(params({ temperature: 0 })).sample(Float32Array.from([-Infinity, -Infinity]), [])).toThrow(/masked/);
    expect(() => new Sampler(params({ topP: 0 })).sample(Float32Array.from([Number.NaN, -Infinity]), [])).toThrow(/masked/);
  });

  it("never picks a masked (-Infinity) token", () => {
    const sampler = new Sampler(params({ temperature: 5, seed: 8 }));
    const logits = Float32Array.from([-Infinity, 0, -Infinity, 0.5]);
    for (let i = 0; i < 1000; i++) expect([1, 3]).toContain(sampler.sample(logits, []));
  });

  it("copes with the vocabulary size changing between calls", () => {
    const sampler = new Sampler(params({ temperature: 1, topK: 3, repetitionPenalty: 1.2, seed: 4 }));
    expect(sampler.sample(Float32Array.from([0, 0, 9, 0, 0, 0]), [1])).toBe(2);
    expect(sampler.sample(Float32Array.from([9, 0]), [1])).toBe(0);
  });
});

describe("probability helpers", () => {
  it("probabilities is softmax(logits / T) and logSoftmax its log at T = 1", () => {
    const logits = Float32Array.from([1, 2, 3]);
    const denominator = Math.exp(1) + Math.exp(2) + Math.exp(3);
    const expected = [Math.exp(1), Math.exp(2), Math.exp(3)].map((w) => w / denominator);
    Array.from(probabilities(logits)).forEach((p, i) => expect(p).toBeCloseTo(expected[i], 6));
    Array.from(logSoftmax(logits)).forEach((l, i) => expect(l).toBeCloseTo(Math.log(expected[i]), 6));
    const hot = probabilities(logits, 2);
    expect(hot[2] / hot[0]).toBeCloseTo(Math.exp(1), 5);
    expect(() => probabilities(logits, 0)).toThrow(/temperature/);
  });
});

describe("sampling on the device", () => {
  it("hands out the settings and this token's draw, taken from the same stream sample() uses", () => {
    const params = { temperature: 0.8, topK: 40, topP: 0.9, minP: 0.05, seed: 77 };
    const sampler = new Sampler(params);
    const stream = new SeededRandom(77);
    for (let i = 0; i < 3; i++) {
      expect(sampler.deviceSampling()).toEqual({ temperature: 0.8, topK: 40, topP: 0.9, minP: 0.05, random: stream.nextFloat() });
    }
  });

  it("takes one draw per token as sample() does (none when greedy), so host and device tokens share one stream", () => {
    const logits = Float32Array.from({ length: 50 }, (_, i) => Math.sin(i));
    const greedy = new Sampler({ temperature: 0, seed: 5 });
    expect(greedy.deviceSampling()?.random).toBe(0);
    const a = new Sampler({ temperature: 1, seed: 9 });
    const b = new Sampler({ temperature: 1, seed: 9 });
    a.deviceSampling();
    b.sample(logits);
    // Both consumed exactly one draw: their next tokens agree.
    expect(a.sample(logits)).toBe(b.sample(logits));
  });

  it("leaves requests with penalties to the host (they count the sequence's tokens)", () => {
    expect(new Sampler({ temperature: 0, frequencyPenalty: 0.5 }).deviceSampling()).toBeUndefined();
    expect(new Sampler({ temperature: 1, repetitionPenalty: 1.1 }).deviceSampling()).toBeUndefined();
  });

  it("checks the device's answer: its no-candidate codes throw as sample() does, ids must be in the vocabulary", () => {
    expect(checkDeviceToken(17, 50)).toBe(17);
    expect(() => checkDeviceToken(-1, 50)).toThrow(SamplingInputError);
    expect(() => checkDeviceToken(-2, 50)).toThrow(/no candidate has a finite logit/);
    expect(() => checkDeviceToken(50, 50)).toThrow(/outside the vocabulary/);
  });
});
