// Repetition, frequency and presence penalties over a window of recent tokens, with llama.cpp's formulas.

import { SamplingInputError } from "./errors.js";
import type { SamplingParams } from "./params.js";

/** The penalty fields of {@link SamplingParams}. */
export type PenaltyParams = Pick<
  SamplingParams,
  "repetitionPenalty" | "frequencyPenalty" | "presencePenalty" | "penaltyLastN"
>;

/** Whether these parameters change any logit at all. */
export function penaltiesActive(params: PenaltyParams): boolean {
  return (
    params.penaltyLastN !== 0 &&
    (params.repetitionPenalty !== 1 || params.frequencyPenalty !== 0 || params.presencePenalty !== 0)
  );
}

/**
 * One token's penalised logit, as llama.cpp's `llama_sampler_penalties_apply` computes it:
 * the repetition penalty divides a positive logit and multiplies a non-positive one, then
 * `count * frequencyPenalty + (count > 0) * presencePenalty` is subtracted. A count of 0 leaves the logit as is.
 */
export function penalizeLogit(logit: number, count: number, params: PenaltyParams): number {
  if (count <= 0) return logit;
  const repeated = logit <= 0 ? logit * params.repetitionPenalty : logit / params.repetitionPenalty;
  return repeated - count * params.frequencyPenalty - params.presencePenalty;
}

/**
 * Counts the tokens in the penalty window (the last `penaltyLastN` of `recentTokens`, all of them for -1)
 * into `counts`, which is cleared first (pass the same map every step to avoid allocating).
 * @throws SamplingInputError if a token id is not an integer in [0, vocabularySize).
 */
export function countWindowTokens(
  recentTokens: readonly number[],
  penaltyLastN: number,
  vocabularySize: number,
  counts: Map<number, number>,
): Map<number, number> {
  counts.clear();
  const start = penaltyLastN < 0 ? 0 : Math.max(0, recentTokens.length - penaltyLastN);
  for (let i = start; i < recentTokens.length; i++) {
    const token = recentTokens[i];
    if (!Number.isInteger(token) || token < 0 || token >= vocabularySize) {
      throw new SamplingInputError(
        "recentTokens",
        `entry ${i} is ${token}, not a token id in [0, ${vocabularySize})`,
      );
    }
    counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  return counts;
}

/**
 * Applies the penalties in place to `logits`, indexed by token id ([vocabularySize]).
 * `counts` comes from {@link countWindowTokens}.
 */
export function applyPenalties(logits: Float32Array, counts: ReadonlyMap<number, number>, params: PenaltyParams): void {
  for (const [token, count] of counts) {
    logits[token] = penalizeLogit(logits[token], count, params);
  }
}
