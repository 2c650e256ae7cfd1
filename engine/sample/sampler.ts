// The sampler: turns one row of logits into a token id with llama.cpp's default chain, reproducibly from a seed.

import { argmax } from "../../kernels/sample/argmax.js";
import { CandidateSet } from "./candidates.js";
import { NucleusSelector } from "./nucleus.js";
import { SamplingInputError } from "./errors.js";
import { applyPenalties, countWindowTokens, penaltiesActive } from "./penalties.js";
import { randomSeed, SeededRandom } from "./random.js";
import { type SamplingParams, validateSamplingParams } from "./params.js";
import { truncateMinP, truncateTopP } from "./truncation.js";

/**
 * One token's sampling settings for a backend that samples on the device (sample.wgsl), with its draw already taken
 * from the request's stream. The device applies the same chain to the same logits, so the distribution is the
 * sampler's; greedy picks the same token, while a draw at temperature > 0 may land on another token of it (the
 * device walks candidates in id order, the host best first).
 */
export interface DeviceSampling {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  /** Uniform in [0, 1) from the seeded stream; 0 (and no draw taken) when greedy. */
  random: number;
}

/** Whether the chain reduces to the argmax: temperature 0, or a nucleus that keeps only the most likely token. */
function greedy(params: Readonly<SamplingParams>): boolean {
  return params.temperature === 0 || params.topP === 0;
}

/**
 * Picks tokens for one sequence. Keep one per sequence: it owns the random stream and the scratch buffers
 * (allocated on the first call and whenever the vocabulary size changes, then reused).
 *
 * Chain (llama.cpp's default order): penalties -> top_k -> top_p -> min_p -> temperature -> softmax -> draw.
 * Temperature 0 is greedy: the argmax of the penalised logits, lowest id on ties, drawing no random number. So is
 * topP 0, which keeps only the most likely token.
 */
export class Sampler {
  /** The validated parameters, with `seed` set to the one in use (a frozen copy). */
  readonly params: Readonly<SamplingParams>;
  /** The seed of the random stream: the one given, or the fresh one drawn; pass it back to repeat a run. */
  readonly seed: number;

  private readonly random: SeededRandom;
  private readonly penalize: boolean;
  private readonly counts = new Map<number, number>();
  private readonly candidates = new CandidateSet(0);
  private readonly nucleus = new NucleusSelector();
  /** Penalised copy of the logits, [vocabularySize]. */
  private penalized = new Float32Array(0);
  /** Unnormalised probabilities of the candidates, [vocabularySize]. */
  private weights = new Float64Array(0);

  /**
   * @param params missing fields take the defaults (`DEFAULT_SAMPLING_PARAMS`).
   * @throws SamplingParamError naming the first bad field of `params`.
   */
  constructor(params: Partial<SamplingParams>) {
    const validated = validateSamplingParams(params);
    this.seed = validated.seed ?? randomSeed();
    this.params = Object.freeze({ ...validated, seed: this.seed });
    this.random = new SeededRandom(this.seed);
    this.penalize = penaltiesActive(validated);
  }

  /**
   * Picks the next token.
   * @param logits one row of logits by token id, [vocabularySize]; never modified.
   * @param recentTokens the sequence so far (prompt and generated), oldest first; penalties look at its tail.
   * @throws SamplingInputError if the logits are empty or hold no finite candidate, or a recent token is out of range.
   */
  sample(logits: Float32Array, recentTokens: readonly number[] = []): number {
    const vocabularySize = logits.length;
    if (vocabularySize === 0) throw new SamplingInputError("logits", "the row is empty");
    const source = this.penalize ? this.applyPenalties(logits, recentTokens) : logits;
    const { temperature, topK, topP, minP } = this.params;

    if (greedy(this.params)) {
      const token = argmax(source);
      if (token < 0) throw new SamplingInputError("logits", "every logit is NaN");
      // A row masked to nothing (a constraint that allows no token) has no answer, greedy or not.
      if (source[token] === Number.NEGATIVE_INFINITY) throw new SamplingInputError("logits", "every token is masked (-Infinity)");
      return token;
    }

    const candidates = this.candidates;
    if (topK > 0 && topK < vocabularySize) {
      candidates.selectTop(source, topK);
      truncateTopP(candidates, topP);
    } else if (topP < 1) {
      this.nucleus.select(source, topP, candidates);
    } else {
      candidates.fillAll(source);
    }
    truncateMinP(candidates, minP);
    return this.draw(temperature);
  }

  /**
   * This token's settings for sampling on the device, taking its draw from the stream as {@link sample} would; undefined
   * when the chain needs the host (penalties count the sequence's tokens).
   */
  deviceSampling(): DeviceSampling | undefined {
    if (this.penalize) return undefined;
    const { temperature, topK, topP, minP } = this.params;
    if (greedy(this.params)) return { temperature: 0, topK, topP: 1, minP, random: 0 };
    return { temperature, topK, topP, minP, random: this.random.nextFloat() };
  }

  /** Copies the logits into the scratch row and penalises the tokens in the window. */
  private applyPenalties(logits: Float32Array, recentTokens: readonly number[]): Float32Array {
    if (this.penalized.length !== logits.length) this.penalized = new Float32Array(logits.length);
    this.penalized.set(logits);
    countWindowTokens(recentTokens, this.params.penaltyLastN, logits.length, this.counts);
    applyPenalties(this.penalized, this.counts, this.params);
    return this.penalized;
  }

  /** softmax(candidate logits / temperature), then one draw from the stream. */
  private draw(temperature: number): number {
    const { ids, logits, size } = this.candidates;
    if (this.weights.length < size) this.weights = new Float64Array(this.candidates.ids.length);
    const weights = this.weights;
    let max = -Infinity;
    for (let i = 0; i < size; i++) if (logits[i] > max) max = logits[i];
    let sum = 0;
    for (let i = 0; i < size; i++) {
      const weight = Math.exp((logits[i] - max) / temperature);
      weights[i] = weight;
      sum += weight;
    }
    // NOTE: NaN logits, or all -Infinity (every token masked), leave no distribution to draw from.
    if (!(sum > 0 && Number.isFinite(sum))) {
      throw new SamplingInputError("logits", "no candidate has a finite logit (NaN, or every token masked)");
    }
    const target = this.random.nextFloat() * sum;
    let cumulative = 0;
    let last = 0;
    for (let i = 0; i < size; i++) {
      if (weights[i] === 0) continue;
      cumulative += weights[i];
      last = i;
      if (target < cumulative) return ids[i];
    }
    return ids[last]; // rounding left target >= the summed weights: take the last token with weight
  }
}

/**
 * Checks a token the device sampled with {@link Sampler.deviceSampling}'s settings: the kernel answers -1 when every
 * logit is NaN and -2 when no candidate has a finite weight, the cases where {@link Sampler.sample} throws.
 * @throws SamplingInputError as sample() would, or when the token is outside the vocabulary.
 */
export function checkDeviceToken(token: number, vocabularySize: number): number {
  if (token === -1) throw new SamplingInputError("logits", "every logit is NaN");
  if (token === -2) throw new SamplingInputError("logits", "no candidate has a finite logit (NaN, or every token masked)");
  if (!Number.isInteger(token) || token < 0 || token >= vocabularySize) throw new SamplingInputError("logits", `the device sampled token ${token}, outside the vocabulary`);
  return token;
}
