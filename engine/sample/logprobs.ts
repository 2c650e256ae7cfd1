// Log-probabilities of tokens from one row of raw logits (what EngineRequest.logprobs and promptLogprobs report):
// log-softmax with float64 accumulation, and the most likely tokens by a partial selection (a k-entry heap), never a
// sort of the whole vocabulary.
import type { TokenLogprob } from "../request.js";

/** Most tokens a request may ask for at each position (`logprobs.top`, `promptLogprobs.top`), as OpenAI allows. */
export const MAX_TOP_LOGPROBS = 20;

/**
 * log(sum(exp(logits))) of a row, accumulated in float64 from its largest logit. NaN logits count as -Infinity (no
 * probability); a row with no finite logit answers -Infinity.
 */
export function logSumExp(logits: ArrayLike<number>): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i]; // NaN compares false: skipped
  if (max === Number.NEGATIVE_INFINITY) return Number.NEGATIVE_INFINITY;
  if (max === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const logit = logits[i];
    if (logit > Number.NEGATIVE_INFINITY) sum += expNonPositive(logit - max);
  }
  return max + Math.log(sum);
}

/** 2^-n for n = 0..1074 (every power a float64 holds). */
const NEGATIVE_POWERS_OF_TWO = Float64Array.from({ length: 1075 }, (_, n) => 2 ** -n);

/**
 * exp(x) for x <= 0, about 4x faster than Math.exp (a vocabulary-wide row is 151,936 of them): x = -n ln 2 + r with
 * |r| <= ln 2 / 2, exp(r) by its Taylor series to r^10 (relative error below 2e-12), times 2^-n from a table.
 */
function expNonPositive(x: number): number {
  if (x < -744) return 0;
  const n = Math.round(-x * Math.LOG2E);
  const r = x + n * Math.LN2;
  const p = 1 + r * (1 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720 + r * (1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r / 3628800)))))))));
  return p * NEGATIVE_POWERS_OF_TWO[n];
}

/** A token's logprob given its row's logSumExp: -Infinity for a NaN or -Infinity logit, and in a row with no mass. */
function logprobOf(logit: number, normalizer: number): number {
  if (!(logit > Number.NEGATIVE_INFINITY) || !Number.isFinite(normalizer)) return Number.NEGATIVE_INFINITY;
  return logit - normalizer;
}

/** Whether token a (logit la) ranks before token b (logit lb): larger logit first, lower id on ties, NaN last. */
function ranksBefore(la: number, a: number, lb: number, b: number): boolean {
  const x = Number.isNaN(la) ? Number.NEGATIVE_INFINITY : la;
  const y = Number.isNaN(lb) ? Number.NEGATIVE_INFINITY : lb;
  return x > y || (x === y && a < b);
}

/**
 * The ids of the `k` most likely tokens of a row, most likely first (lower id first on ties; NaN logits rank as
 * -Infinity). A min-heap of k entries over one pass of the row: O(vocab log k).
 */
export function topTokens(logits: ArrayLike<number>, k: number): number[] {
  const count = Math.min(k, logits.length);
  if (count <= 0) return [];
  // heap[0] is the entry that ranks last among those kept.
  const heap: number[] = [];
  const worse = (i: number, j: number) => ranksBefore(logits[heap[j]], heap[j], logits[heap[i]], heap[i]);
  const swap = (i: number, j: number) => void ([heap[i], heap[j]] = [heap[j], heap[i]]);
  const down = (start: number) => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let last = i;
      if (left < heap.length && worse(left, last)) last = left;
      if (right < heap.length && worse(right, last)) last = right;
      if (last === i) return;
      swap(i, last);
      i = last;
    }
  };
  // The logit of the entry that ranks last (NaN as -Infinity): most tokens rank below it, one comparison each.
  let worst = Number.NEGATIVE_INFINITY;
  for (let token = 0; token < logits.length; token++) {
    if (heap.length === count && logits[token] < worst) continue;
    if (heap.length < count) {
      heap.push(token);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
      if (heap.length === count) worst = Number.isNaN(logits[heap[0]]) ? Number.NEGATIVE_INFINITY : logits[heap[0]];
    } else if (ranksBefore(logits[token], token, logits[heap[0]], heap[0])) {
      heap[0] = token;
      down(0);
      worst = Number.isNaN(logits[heap[0]]) ? Number.NEGATIVE_INFINITY : logits[heap[0]];
    }
  }
  return heap.sort((a, b) => (ranksBefore(logits[a], a, logits[b], b) ? -1 : 1));
}

/**
 * `token`'s log-probability in a row of raw logits and the row's `top` most likely tokens with theirs (natural log,
 * float64 accumulation, returned as plain numbers). `normalizer` is the row's logSumExp where a kernel computed it.
 */
export function tokenLogprob(logits: ArrayLike<number>, token: number, top: number, normalizer = logSumExp(logits)): TokenLogprob {
  return {
    token,
    logprob: logprobOf(logits[token], normalizer),
    top: topTokens(logits, top).map((id) => ({ token: id, logprob: logprobOf(logits[id], normalizer) })),
  };
}

/**
 * A checked `{ top }` option (EngineRequest.logprobs, promptLogprobs); undefined when absent.
 * @throws RangeError naming `${field}.top` when it is not an integer 0..MAX_TOP_LOGPROBS.
 */
export function checkTopLogprobs(option: unknown, field: string): { top: number } | undefined {
  if (option === undefined) return undefined;
  const top = (option as { top?: unknown } | null)?.top;
  if (typeof option !== "object" || option === null || typeof top !== "number" || !Number.isInteger(top) || top < 0 || top > MAX_TOP_LOGPROBS) {
    throw new TopLogprobsError(`${field}.top`, `${field}.top must be an integer from 0 to ${MAX_TOP_LOGPROBS}, got ${JSON.stringify(top)}`);
  }
  return { top };
}

/** A `top` option out of range; `field` names it (`logprobs.top`). */
export class TopLogprobsError extends RangeError {
  override readonly name = "TopLogprobsError";
  constructor(readonly field: string, message: string) {
    super(message);
  }
}
