// Generated tokens per second over a short sliding window, per model: one-second buckets in a ring, so that recording
// is O(1) and memory stays fixed whatever the traffic (the dashboard's live load, GET /api/v1/operator/workers).

/** Seconds the rate is averaged over. */
export const TOKEN_RATE_WINDOW_SECONDS = 10;

/** One model's counts: `counts[i]` holds the tokens of the second `seconds[i]`. */
interface Ring {
  seconds: number[];
  counts: number[];
}

/** Tokens recorded per model, read as a rate over the last {@link TOKEN_RATE_WINDOW_SECONDS} seconds. */
export class TokenRate {
  private readonly rings = new Map<string, Ring>();

  /** Adds `tokens` generated for `model` at `nowMs`. */
  record(model: string, tokens: number, nowMs = Date.now()): void {
    if (!(tokens > 0)) return;
    let ring = this.rings.get(model);
    if (!ring) this.rings.set(model, (ring = { seconds: new Array(TOKEN_RATE_WINDOW_SECONDS).fill(-1), counts: new Array(TOKEN_RATE_WINDOW_SECONDS).fill(0) }));
    const second = Math.floor(nowMs / 1000);
    const slot = second % TOKEN_RATE_WINDOW_SECONDS;
    // A slot last written a whole window ago (or more) starts again from zero.
    if (ring.seconds[slot] !== second) {
      ring.seconds[slot] = second;
      ring.counts[slot] = 0;
    }
    ring.counts[slot]! += tokens;
  }

  /** Tokens per second of `model` over the window ending at `nowMs` (0 for a model never recorded). */
  perSecond(model: string, nowMs = Date.now()): number {
    const ring = this.rings.get(model);
    if (!ring) return 0;
    const second = Math.floor(nowMs / 1000);
    let total = 0;
    for (let i = 0; i < TOKEN_RATE_WINDOW_SECONDS; i++) {
      const age = second - ring.seconds[i]!;
      if (age >= 0 && age < TOKEN_RATE_WINDOW_SECONDS) total += ring.counts[i]!;
    }
    return total / TOKEN_RATE_WINDOW_SECONDS;
  }
}
