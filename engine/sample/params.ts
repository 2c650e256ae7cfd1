// The sampling parameters of one request (plain data), their defaults, and their validation.

import { SamplingParamError } from "./errors.js";

/**
 * How to pick the next token from the logits. Field meanings follow llama.cpp's samplers.
 *
 * NOTE: the chain order is fixed (llama.cpp's default): penalties -> top_k -> top_p -> min_p -> temperature -> draw.
 */
export interface SamplingParams {
  /** Divides the logits before the draw; 0 means greedy (argmax, lowest id on ties). */
  temperature: number;
  /**
   * Nucleus sampling: keep the smallest set of most likely tokens whose probability reaches topP; 1 = off; 0 keeps
   * only the most likely token (as llama.cpp's min_keep of 1 does), which makes the draw greedy.
   */
  topP: number;
  /** Keep only the topK most likely tokens; 0 = off. */
  topK: number;
  /** Drop tokens whose probability is below minP times the most likely token's; 0 = off. */
  minP: number;
  /** Subtracted from a token's logit once per occurrence in the penalty window; 0 = off. */
  frequencyPenalty: number;
  /** Subtracted from a token's logit if it occurs at all in the penalty window; 0 = off. */
  presencePenalty: number;
  /** Divides positive logits and multiplies non-positive ones of tokens in the penalty window; 1 = off. */
  repetitionPenalty: number;
  /** How many of the most recent tokens the penalties look at; -1 = all of them, 0 = penalties off. */
  penaltyLastN: number;
  /** Seed for the random draw; absent = a random seed (which the sampler exposes so a run can be repeated). */
  seed?: number;
}

/** Neutral defaults: plain softmax sampling at temperature 1, nothing truncated, no penalties. */
export const DEFAULT_SAMPLING_PARAMS: Readonly<SamplingParams> = Object.freeze({
  temperature: 1,
  topP: 1,
  topK: 0,
  minP: 0,
  frequencyPenalty: 0,
  presencePenalty: 0,
  repetitionPenalty: 1,
  penaltyLastN: 64,
});

/**
 * Fills the fields missing from `params` (or set to undefined) with {@link DEFAULT_SAMPLING_PARAMS},
 * checks every field, and returns the complete parameters (a new object).
 * @throws SamplingParamError naming the first field that is NaN, of the wrong type or out of range.
 */
export function validateSamplingParams(params: Partial<SamplingParams> = {}): SamplingParams {
  const resolved: SamplingParams = { ...DEFAULT_SAMPLING_PARAMS };
  const fields = resolved as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(params)) if (value !== undefined) fields[key] = value;
  requireNumber(fields, "temperature", (v) => Number.isFinite(v) && v >= 0, "a finite number >= 0");
  requireNumber(fields, "topP", (v) => v >= 0 && v <= 1, "a number in [0, 1]");
  requireNumber(fields, "topK", (v) => Number.isSafeInteger(v) && v >= 0, "an integer >= 0");
  requireNumber(fields, "minP", (v) => v >= 0 && v <= 1, "a number in [0, 1]");
  requireNumber(fields, "frequencyPenalty", Number.isFinite, "a finite number");
  requireNumber(fields, "presencePenalty", Number.isFinite, "a finite number");
  requireNumber(fields, "repetitionPenalty", (v) => Number.isFinite(v) && v > 0, "a finite number > 0");
  requireNumber(fields, "penaltyLastN", (v) => Number.isSafeInteger(v) && v >= -1, "an integer >= -1");
  if (fields.seed !== undefined) requireNumber(fields, "seed", Number.isSafeInteger, "a safe integer");
  return resolved;
}

function requireNumber(
  params: Record<string, unknown>,
  field: string,
  isValid: (value: number) => boolean,
  requirement: string,
): void {
  const value = params[field];
  if (typeof value !== "number" || Number.isNaN(value) || !isValid(value)) {
    throw new SamplingParamError(field, value, requirement);
  }
}
