// When a failed callback is tried again: exponential backoff with jitter, capped, within a window after which the
// delivery is given up. Plain arithmetic; the store applies it against the database's clock.

/** How a failed delivery is retried. Every duration is in milliseconds (tests use a few of them). */
export interface BackoffPolicy {
  /** The wait after the first failed attempt (before jitter). */
  baseMs: number;
  /** Each further failure multiplies the wait by this (2: doubling). */
  factor: number;
  /** The longest wait between two attempts (before jitter). */
  capMs: number;
  /**
   * Fraction of each wait drawn at random, in [0, 1]: 0.5 waits between half and all of it, so that deliveries
   * that failed together (a receiver's outage) do not all come back at the same instant.
   */
  jitter: number;
  /**
   * The window for retries, from the first attempt: the last attempt starts when it ends (even if the backoff would
   * wait longer), and the failure of an attempt that started at or after its end gives the delivery up.
   */
  giveUpAfterMs: number;
}

/** 10 s, doubling, at most 1 h between attempts, for up to 24 h after the first attempt. */
export const DEFAULT_CALLBACK_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  baseMs: 10_000,
  factor: 2,
  capMs: 3_600_000,
  jitter: 0.5,
  giveUpAfterMs: 24 * 3_600_000,
});

/**
 * The wait after failed attempt number `attempt` (1 for the first): min(cap, base * factor^(attempt - 1)), of which
 * the `jitter` fraction is drawn at random.
 * @param random a number in [0, 1), Math.random by default (tests pass fixed ones).
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponential = policy.baseMs * policy.factor ** Math.max(0, attempt - 1);
  const wait = Math.min(policy.capMs, exponential);
  return Math.round(wait * (1 - policy.jitter * random()));
}

/**
 * Checks a policy and returns it with defaults filled in.
 * @throws RangeError naming the bad field.
 */
export function validateBackoffPolicy(policy: Partial<BackoffPolicy> = {}): BackoffPolicy {
  const full = { ...DEFAULT_CALLBACK_BACKOFF, ...policy };
  const finiteAtLeast = (field: keyof BackoffPolicy, minimum: number) => {
    if (typeof full[field] !== "number" || !Number.isFinite(full[field]) || full[field] < minimum) {
      throw new RangeError(`backoff.${field} must be a finite number >= ${minimum}, got ${String(full[field])}`);
    }
  };
  finiteAtLeast("baseMs", 0);
  finiteAtLeast("factor", 1);
  finiteAtLeast("capMs", 0);
  finiteAtLeast("jitter", 0);
  finiteAtLeast("giveUpAfterMs", 0);
  if (full.jitter > 1) throw new RangeError(`backoff.jitter must be in [0, 1], got ${full.jitter}`);
  return full;
}
