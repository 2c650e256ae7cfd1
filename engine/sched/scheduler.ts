// The scheduling policy: which requests run in the next forward pass and how many tokens each computes. A request
// has tokens known (prompt plus output) and tokens computed (KV in the cache); prefill, chunked prefill, prefix
// reuse and decode all fall out of closing that gap under a per-step token budget. Priority classes, then arrival
// order (FCFS); when KV runs out, the least urgent, latest running request is preempted and later recomputed. While a
// request of the most urgent class is starting (waiting, or computing its prompt), less urgent ones sit steps out, so
// an interactive request's first token does not wait behind a large batch of background work (agent runs).

/** What the scheduler needs of a request: plain fields, no sampling or wire details. */
export interface SchedulableRequest {
  readonly id: string;
  /** Priority class: smaller runs first (default 0). */
  readonly priority: number;
  /** Arrival order, unique and increasing: breaks ties within a class (FCFS). */
  readonly arrival: number;
  /** Prompt plus generated tokens so far. */
  readonly tokens: readonly number[];
  /** Leading tokens whose KV is in the cache. */
  computed: number;
  /**
   * Token spans whose uncomputed part must run in one chunk (an image's tokens attend to each other): a chunk ends
   * before such a span or takes the rest of it whole, and stops before one that is not ready (its image is encoding).
   */
  atomicSpans?(): readonly AtomicSpan[];
  /**
   * Whether its chunks return logits for every row (prompt log-probabilities): such rows are bounded per step by
   * SchedulerLimits.maxLogitRows, so the logits of a step stay small.
   */
  readonly allRowLogits?: boolean;
}

/** Tokens [start, end) that run in one chunk once `ready`. */
export interface AtomicSpan {
  start: number;
  end: number;
  ready: boolean;
}

/**
 * How many of `count` tokens from `start` a chunk takes so that it cuts no atomic span: reaching into a span that is
 * not ready, or ending inside one, it stops at the span's start; when it begins inside or at a ready span, it runs to
 * the span's end if `ceiling` tokens allow it. 0: the request waits (for its image, or a step with room).
 */
export function chunkTokens(request: SchedulableRequest, start: number, count: number, ceiling: number): number {
  const end = start + count;
  for (const span of request.atomicSpans?.() ?? []) {
    if (end <= span.start || start >= span.end) continue;
    if (!span.ready) return Math.max(0, span.start - start);
    if (end >= span.end) continue;
    if (span.start > start) return span.start - start;
    return span.end - start <= ceiling ? span.end - start : 0;
  }
  return count;
}

/** The scheduler's view of the KV cache manager. */
export interface KvSpace<R> {
  /** Adopts cached KV for a request being admitted: sets request.computed to the tokens reused. */
  adopt(request: R): void;
  /** Makes room for `positions` KV positions of the request; false (and nothing held beyond before) if it cannot. */
  reserve(request: R, positions: number): boolean;
  /** Frees everything the request holds. */
  release(request: R): void;
  /** Most KV positions one request could ever hold (the whole pool). */
  readonly capacityPositions: number;
}

/** One request's share of a step: tokens [start, start + count) of request.tokens. */
export interface ScheduledChunk<R> {
  request: R;
  start: number;
  count: number;
}

/** What the next forward pass does. */
export interface StepPlan<R> {
  chunks: ScheduledChunk<R>[];
  /** Requests moved from waiting to running in this step (their adopted KV copies must run first). */
  admitted: R[];
  /** Requests preempted in this step: their KV is gone and they wait to be recomputed. */
  preempted: R[];
  /** Running requests that cannot grow even alone: the KV budget cannot hold them. */
  exhausted: R[];
}

/** Per-step limits. */
export interface SchedulerLimits {
  /** Tokens computed per forward pass, over all requests. */
  maxStepTokens: number;
  /** Requests per forward pass. */
  maxSequences: number;
  /**
   * Requests of a background class (priority above 0: agent runs) per forward pass. Keeps steps short when much
   * background work is batched, so an interactive request arriving mid-step waits less for it (default: maxSequences).
   */
  backgroundSequences?: number;
  /**
   * Tokens per step, over all requests, of requests whose chunks return every row's logits (allRowLogits): each such
   * row brings back a vocabulary of logits (default {@link DEFAULT_MAX_LOGIT_ROWS}).
   */
  maxLogitRows?: number;
}

/** Default of {@link SchedulerLimits.maxLogitRows}: 64 rows of a 151,936-token vocabulary are 39 MB of logits. */
export const DEFAULT_MAX_LOGIT_ROWS = 64;

const urgency = (a: SchedulableRequest, b: SchedulableRequest): number => a.priority - b.priority || a.arrival - b.arrival;

/**
 * Consecutive steps less urgent requests may sit out while more urgent ones start; then one step includes them, so a
 * steady stream of urgent arrivals slows background work down instead of stopping it.
 */
export const MAX_YIELDED_STEPS = 4;

/** Continuous batching over a waiting queue and a running set. */
export class Scheduler<R extends SchedulableRequest> {
  /** Both kept in urgency order. */
  private readonly waitingQueue: R[] = [];
  private readonly runningSet: R[] = [];
  /** Steps in a row in which less urgent requests sat out. */
  private yieldedSteps = 0;

  constructor(private readonly kv: KvSpace<R>, readonly limits: SchedulerLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (value === undefined) continue;
      if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
  }

  get waiting(): readonly R[] {
    return this.waitingQueue;
  }

  get running(): readonly R[] {
    return this.runningSet;
  }

  /** Queues a new request. */
  add(request: R): void {
    insertSorted(this.waitingQueue, request);
  }

  /** Takes a request out (finished or aborted) and frees its KV at once. */
  remove(request: R): void {
    const running = this.runningSet.indexOf(request);
    if (running >= 0) {
      this.runningSet.splice(running, 1);
      this.kv.release(request);
      return;
    }
    const waiting = this.waitingQueue.indexOf(request);
    if (waiting >= 0) this.waitingQueue.splice(waiting, 1);
  }

  /**
   * Plans the next step: running requests first (decodes, then prefill chunks), then admissions from the queue.
   * @param maxTokens this step's token budget (default and ceiling: limits.maxStepTokens).
   * @param backgroundSequences this step's most background requests (default: limits.backgroundSequences).
   */
  schedule(maxTokens = this.limits.maxStepTokens, backgroundSequences = this.limits.backgroundSequences ?? this.limits.maxSequences): StepPlan<R> {
    const plan: StepPlan<R> = { chunks: [], admitted: [], preempted: [], exhausted: [] };
    const stepTokens = Math.min(maxTokens, this.limits.maxStepTokens);
    const used = () => plan.chunks.reduce((sum, chunk) => sum + chunk.count, 0);
    const budget = () => stepTokens - used();
    let logitRows = 0;
    const maxLogitRows = this.limits.maxLogitRows ?? DEFAULT_MAX_LOGIT_ROWS;
    /** Tokens a chunk of `request` may take now: the step's budget, and its logit rows' for an allRowLogits request. */
    const room = (request: R) => Math.min(remaining(request), budget(), request.allRowLogits ? maxLogitRows - logitRows : Number.POSITIVE_INFINITY);
    const full = () => budget() === 0 || plan.chunks.length === this.limits.maxSequences;
    const decodesFirst = [...this.runningSet].sort((a, b) => Number(remaining(b) === 1) - Number(remaining(a) === 1) || urgency(a, b));
    const yieldTo = this.startingClass();
    let background = 0;
    const backgroundFull = () => background >= backgroundSequences;
    const sitsOut = (request: R) => (yieldTo !== undefined && request.priority > yieldTo) || (request.priority > 0 && backgroundFull());
    for (const request of decodesFirst) {
      if (full()) break;
      if (!this.runningSet.includes(request)) continue; // preempted while making room for a more urgent one
      if (sitsOut(request)) continue;
      const count = chunkTokens(request, request.computed, room(request), this.limits.maxStepTokens - used());
      if (count === 0) continue;
      if (request.computed + count > this.kv.capacityPositions || !this.makeRoom(request, request.computed + count, plan, () => this.leastUrgentRunning(request))) {
        if (this.runningSet.includes(request)) plan.exhausted.push(request);
        continue;
      }
      plan.chunks.push({ request, start: request.computed, count });
      if (request.allRowLogits) logitRows += count;
      if (request.priority > 0) background++;
    }
    while (!full() && this.waitingQueue.length > 0 && !plan.preempted.includes(this.waitingQueue[0])) {
      const request = this.waitingQueue[0];
      if (sitsOut(request)) break;
      this.kv.adopt(request);
      const count = chunkTokens(request, request.computed, room(request), this.limits.maxStepTokens - used());
      if (count === 0) {
        this.kv.release(request);
        request.computed = 0;
        break; // its image (or logit rows) waits for a step with room; FCFS: nothing behind it jumps the queue
      }
      const lessUrgent = () => this.leastUrgentRunning(request, (victim) => victim.priority > request.priority);
      if (!this.makeRoom(request, request.computed + count, plan, lessUrgent)) {
        this.kv.release(request);
        request.computed = 0;
        break; // FCFS: nothing behind it jumps the queue
      }
      this.waitingQueue.shift();
      insertSorted(this.runningSet, request);
      plan.admitted.push(request);
      plan.chunks.push({ request, start: request.computed, count });
      if (request.allRowLogits) logitRows += count;
      if (request.priority > 0) background++;
    }
    this.yieldedSteps = yieldTo === undefined ? 0 : this.yieldedSteps + 1;
    return plan;
  }

  /**
   * The most urgent class when one of its requests is starting (waiting, or its prompt not yet computed) and a less
   * urgent request is running or waiting: that class runs alone this step. Undefined otherwise, and every
   * MAX_YIELDED_STEPS + 1 steps.
   */
  private startingClass(): number | undefined {
    if (this.yieldedSteps >= MAX_YIELDED_STEPS) return undefined;
    // Both lists are in urgency order: their ends hold the most and least urgent classes.
    const running = this.runningSet;
    const waiting = this.waitingQueue;
    const top = Math.min(running[0]?.priority ?? Number.POSITIVE_INFINITY, waiting[0]?.priority ?? Number.POSITIVE_INFINITY);
    const bottom = Math.max(running.at(-1)?.priority ?? Number.NEGATIVE_INFINITY, waiting.at(-1)?.priority ?? Number.NEGATIVE_INFINITY);
    if (!(bottom > top)) return undefined;
    const starting = waiting[0]?.priority === top || running.some((request) => request.priority === top && remaining(request) > 1);
    return starting ? top : undefined;
  }

  /**
   * Reserves KV for `positions` positions of `request`, preempting victims chosen by `pickVictim` until it fits.
   * False when no victim is left; a victim that is the request itself is preempted too.
   */
  private makeRoom(request: R, positions: number, plan: StepPlan<R>, pickVictim: () => R | undefined): boolean {
    while (!this.kv.reserve(request, positions)) {
      const victim = pickVictim();
      if (!victim) return false;
      this.preempt(victim, plan);
      if (victim === request) return false;
    }
    return true;
  }

  /**
   * The least urgent running request among those `eligible`: possibly `self`, unless `self` is all that runs
   * (preempting a lone request that cannot grow would only restart it; the caller reports it exhausted instead).
   */
  private leastUrgentRunning(self: R, eligible: (victim: R) => boolean = () => true): R | undefined {
    for (let i = this.runningSet.length - 1; i >= 0; i--) {
      const candidate = this.runningSet[i];
      if (!eligible(candidate)) continue;
      if (candidate === self) return this.runningSet.length > 1 ? self : undefined;
      return candidate;
    }
    return undefined;
  }

  private preempt(victim: R, plan: StepPlan<R>): void {
    this.runningSet.splice(this.runningSet.indexOf(victim), 1);
    this.kv.release(victim);
    victim.computed = 0;
    const chunk = plan.chunks.findIndex((c) => c.request === victim);
    if (chunk >= 0) plan.chunks.splice(chunk, 1);
    plan.preempted.push(victim);
    insertSorted(this.waitingQueue, victim);
  }
}

/** Running requests whose next step is a one-token decode (their prompt is computed). */
export function decodingCount(running: readonly SchedulableRequest[]): number {
  let count = 0;
  for (const request of running) if (remaining(request) === 1) count++;
  return count;
}

function remaining(request: SchedulableRequest): number {
  return request.tokens.length - request.computed;
}

function insertSorted<R extends SchedulableRequest>(list: R[], request: R): void {
  let i = list.length;
  while (i > 0 && urgency(list[i - 1], request) > 0) i--;
  list.splice(i, 0, request);
}
