// A background job that deletes rows nobody reads any more (expired stored responses, ended dashboard sessions):
// reads already ignore them, so this only gives the space back. Each run deletes in bounded batches, so that no
// statement holds many row locks or runs long, until a batch comes back short.
import { logFailure } from "../../http/log.js";

/** Deletes at most `limit` rows that ended before `now`; returns how many went. */
export type DeleteBatch = (now: Date, limit: number) => Promise<number>;

/** Options of a cleanup job. */
export interface BatchCleanupOptions {
  /** Time between runs (default one hour). */
  intervalMs?: number;
  /** Most rows one statement deletes (default 1000). */
  batch?: number;
  /** Where a failed run's error goes (default: a line on stderr); the job goes on at the next interval. */
  onError?: (error: unknown) => void;
  /** The clock that says what has expired (default: the system clock). */
  now?: () => Date;
}

/** How soon after start() the first run begins: soon, but not in the middle of the server's own start. */
const FIRST_RUN_DELAY_MS = 1000;

/** Deletes ended rows: once soon after start(), then every interval; one run at a time. */
export class BatchCleanup {
  readonly #deleteBatch: DeleteBatch;
  readonly #intervalMs: number;
  readonly #batch: number;
  readonly #onError: (error: unknown) => void;
  readonly #now: () => Date;
  #timer: NodeJS.Timeout | undefined;
  /** The run in progress, which runOnce() callers and stop() share. */
  #running: Promise<number> | undefined;

  /** @param what the rows it deletes ("expired responses"), for the default error report. */
  constructor(what: string, deleteBatch: DeleteBatch, options: BatchCleanupOptions = {}) {
    const { intervalMs = 60 * 60 * 1000, batch = 1000 } = options;
    if (!Number.isSafeInteger(intervalMs) || intervalMs < 1) throw new RangeError(`intervalMs must be an integer >= 1, got ${intervalMs}`);
    if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError(`batch must be an integer >= 1, got ${batch}`);
    this.#deleteBatch = deleteBatch;
    this.#intervalMs = intervalMs;
    this.#batch = batch;
    this.#onError = options.onError ?? ((error) => logFailure(`${what} cleanup`, error));
    this.#now = options.now ?? (() => new Date());
  }

  /** Schedules the runs: the first soon, then one every interval. The timers never keep the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
      this.#timer.unref();
      this.#tick();
    }, Math.min(FIRST_RUN_DELAY_MS, this.#intervalMs));
    this.#timer.unref();
  }

  /**
   * Deletes ended rows in batches until a batch deletes fewer than `batch`, and returns how many went. A call
   * while a run is in progress joins that run (its total) instead of starting a second.
   * @throws the store's error (rows deleted before it stay deleted).
   */
  runOnce(): Promise<number> {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops the schedule and waits for a run in progress to end; never rejects (a scheduled run's error went to onError). */
  async stop(): Promise<void> {
    // The same timer handle works for clearTimeout and clearInterval: whichever stage the schedule is in.
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  async #run(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.#deleteBatch(this.#now(), this.#batch);
      total += deleted;
      if (deleted < this.#batch) return total;
    }
  }

  /** A scheduled run: it never throws (an unhandled rejection would end the process). */
  #tick(): void {
    this.runOnce().catch((error: unknown) => {
      try {
        this.#onError(error);
      } catch {
        // A failing error handler must not end the process either.
      }
    });
  }
}
