// How many tokens the next step may compute. Alone, prefill takes the whole batch (throughput); while other requests
// decode, a step is sized to finish within a target wall time, so a long prompt is prefilled in chunks between their
// tokens instead of stalling their streams for seconds. The step's cost is learned from the steps already run.

/** The pacer's settings. */
export interface StepPacerOptions {
  /** While requests decode, the longest a step should take, in milliseconds; 0 turns pacing off. */
  targetMs: number;
  /** The runner's batch size: the most tokens any step may compute. */
  maxTokens: number;
  /**
   * The fewest prefill tokens a paced step still computes, so that a prompt always progresses (default 4: deep in a
   * long prompt a token can cost 15-25 ms on a 2-core CPU, and a floor of 16 made such steps 250-450 ms by itself).
   */
  minChunkTokens?: number;
}

/** Default of {@link StepPacerOptions.minChunkTokens}. */
const DEFAULT_MIN_CHUNK_TOKENS = 4;

/** Weight of the newest measurement in the running averages. */
const SMOOTHING = 0.25;

/**
 * Learns a step's cost as a fixed part (weights read once per step, which dominates decoding) plus a part per
 * prefill token, from steps as they run, and sizes the next step's budget to the target.
 */
export class StepPacer {
  /** Milliseconds of a step that decodes only (no prefill tokens). */
  private fixedMs: number | undefined;
  /** Milliseconds per prefill token beyond the fixed part. */
  private perTokenMs: number | undefined;
  /** Milliseconds of a decode-only step per sequence decoded (its fixed part shared out: an upper bound). */
  private perSequenceMs: number | undefined;
  private readonly minChunk: number;

  constructor(readonly options: StepPacerOptions) {
    if (!Number.isFinite(options.targetMs) || options.targetMs < 0) throw new RangeError(`stepTargetMs must be a number >= 0, got ${options.targetMs}`);
    this.minChunk = Math.min(options.minChunkTokens ?? DEFAULT_MIN_CHUNK_TOKENS, options.maxTokens);
  }

  /** The next step's token budget when `decoding` requests each need one token. */
  budget(decoding: number): number {
    const { targetMs, maxTokens } = this.options;
    if (targetMs === 0 || decoding === 0) return maxTokens;
    // Until a prefill step has been measured, take the smallest chunk: the measurement comes from it.
    if (this.perTokenMs === undefined) return Math.min(maxTokens, decoding + this.minChunk);
    // Where decoding alone already takes the target or more (a large model on a CPU), prefill may still add as much
    // as decoding takes: steps at most double, and the prompt is not slowed to a trickle for little gain.
    const fixed = this.fixedMs ?? 0;
    const room = Math.max(targetMs - fixed, fixed) / this.perTokenMs;
    return Math.min(maxTokens, decoding + Math.max(this.minChunk, Math.floor(room)));
  }

  /**
   * How many sequences a decode step may hold to take about `targetMs` (at least 1, at most `max`; `max` until a
   * decode step has been measured).
   */
  sequencesWithin(targetMs: number, max: number): number {
    if (this.perSequenceMs === undefined || this.perSequenceMs <= 0) return max;
    return Math.max(1, Math.min(max, Math.floor(targetMs / this.perSequenceMs)));
  }

  /** Records a step that computed `tokens` tokens, `decodes` of them one-token decodes, in `elapsedMs`. */
  record(tokens: number, decodes: number, elapsedMs: number): void {
    const prefill = tokens - decodes;
    if (prefill === 0) {
      this.fixedMs = average(this.fixedMs, elapsedMs);
      if (decodes > 0) this.perSequenceMs = average(this.perSequenceMs, elapsedMs / decodes);
      return;
    }
    // Small prefills say more about the fixed part than about the per-token cost.
    if (prefill < this.minChunk) return;
    const perToken = Math.max(0, elapsedMs - (this.fixedMs ?? 0)) / prefill;
    // A rising cost is taken at once (attention grows with the prompt's position, and a step over the target is the
    // stall this exists to prevent); a falling one is averaged in.
    this.perTokenMs = this.perTokenMs === undefined || perToken > this.perTokenMs ? perToken : average(this.perTokenMs, perToken);
  }
}

function average(previous: number | undefined, next: number): number {
  return previous === undefined ? next : previous + SMOOTHING * (next - previous);
}
