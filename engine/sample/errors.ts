// Typed errors for sampling: each names the parameter that is wrong and what it must be.

/** A sampling parameter is missing, NaN or out of range. */
export class SamplingParamError extends Error {
  override readonly name = "SamplingParamError";
  constructor(
    /** The offending field of `SamplingParams`, e.g. "topP". */
    readonly field: string,
    /** The value that was given. */
    readonly value: unknown,
    /** What the field must be, e.g. "a number in (0, 1]". */
    readonly requirement: string,
  ) {
    super(`sampling parameter ${field} must be ${requirement}, got ${describeValue(value)}`);
  }
}

/** A stop sequence is not a non-empty string. */
export class StopSequenceError extends Error {
  override readonly name = "StopSequenceError";
  constructor(
    /** Position of the bad entry in the list of stop sequences. */
    readonly index: number,
    /** What is wrong with it. */
    readonly problem: string,
  ) {
    super(`stop sequence ${index}: ${problem}`);
  }
}

/** The inputs to one sampling step (logits or recent tokens) are unusable. */
export class SamplingInputError extends Error {
  override readonly name = "SamplingInputError";
  constructor(
    /** The argument that is wrong: "logits" or "recentTokens". */
    readonly argument: "logits" | "recentTokens",
    /** What is wrong with it. */
    readonly problem: string,
  ) {
    super(`${argument}: ${problem}`);
  }
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === undefined || value === null) return String(value);
  return typeof value;
}
