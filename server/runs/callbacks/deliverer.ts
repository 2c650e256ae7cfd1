// The background loop that sends run callbacks: claims due deliveries under a lease, signs each with its run's
// secret, POSTs it through the injected transport, and records the outcome; woken by notify() when this process
// enqueues one, else polling (other processes enqueue, retries fall due).
import { performance } from "node:perf_hooks";
import { signCallback } from "./callback-signing.js";
import type { CallbackSecretResolver } from "./callback-secrets.js";
import type { AttemptOutcome, CallbackStore, ClaimedCallback, RecordedAttempt } from "./callback-store.js";
import type { CallbackPost } from "./callback-transport.js";

/** What a deliverer needs and how it behaves. */
export interface CallbackDelivererOptions {
  store: CallbackStore;
  /** Sends one POST (the service passes its SSRF-guarded client). */
  post: CallbackPost;
  /** The signing secret of a delivery (organizationSecretResolver, usually). */
  secretFor: CallbackSecretResolver;
  /** Attempts under way at once, at most. Default 8. */
  concurrency?: number;
  /** How often to look for due deliveries when nothing wakes the loop. Default 1000 ms. */
  pollIntervalMs?: number;
  /** An attempt without a response by then fails (and is retried). Default 10,000 ms. */
  timeoutMs?: number;
  /**
   * How long a claim is held; another process takes the delivery again after it (the attempt is then logged as lost).
   * Must exceed timeoutMs, with room to record the outcome. Default timeoutMs + 30,000 ms.
   */
  leaseMs?: number;
  /** After each recorded attempt (for logs and metrics). */
  onAttempt?: (claim: ClaimedCallback, outcome: AttemptOutcome, recorded: RecordedAttempt) => void;
  /** An error the loop survived (the database unavailable, an outcome it could not record). Default: console.error. */
  onError?: (error: unknown) => void;
}

/** The longest error text recorded for an attempt. */
const MAX_ERROR_LENGTH = 500;

/**
 * Delivers run callbacks in the background: start() once, notify() after committing a transaction that enqueued a
 * callback, stop() on shutdown (it waits for attempts under way). Nothing it meets is thrown out of its loop.
 * NOTE: delivery is at least once: a process killed after the receiver answered but before the outcome was recorded
 * sends that callback again (same webhook-id and body) once its lease lapses; receivers deduplicate by webhook-id.
 */
export class CallbackDeliverer {
  readonly #options: Required<Omit<CallbackDelivererOptions, "onAttempt">> & Pick<CallbackDelivererOptions, "onAttempt">;
  readonly #inFlight = new Set<Promise<void>>();
  #loop: Promise<void> | undefined;
  #stopping = false;
  #wakeRequested = false;
  #wakeUp: (() => void) | undefined;

  /** @throws RangeError naming a bad option. */
  constructor(options: CallbackDelivererOptions) {
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.#options = {
      store: options.store,
      post: options.post,
      secretFor: options.secretFor,
      concurrency: options.concurrency ?? 8,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      timeoutMs,
      leaseMs: options.leaseMs ?? timeoutMs + 30_000,
      onAttempt: options.onAttempt,
      onError: options.onError ?? ((error) => console.error("loom: callback deliverer:", error)),
    };
    const { concurrency, pollIntervalMs, leaseMs } = this.#options;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be an integer >= 1, got ${concurrency}`);
    if (!(pollIntervalMs > 0)) throw new RangeError(`pollIntervalMs must be a number > 0, got ${pollIntervalMs}`);
    if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be a number > 0, got ${timeoutMs}`);
    if (!(leaseMs > timeoutMs)) throw new RangeError(`leaseMs must exceed timeoutMs (${timeoutMs}), got ${leaseMs}`);
  }

  /** Starts the loop (again after a stop()); does nothing while it runs. */
  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopping = false;
    this.#loop = this.#run();
  }

  /** Looks for due deliveries now instead of at the next poll: call it after committing an enqueueCallback. */
  notify(): void {
    this.#wakeRequested = true;
    this.#wakeUp?.();
  }

  /** Stops claiming and resolves once the attempts under way are recorded. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.notify();
    await this.#loop;
    this.#loop = undefined;
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #run(): Promise<void> {
    const { store, concurrency, leaseMs } = this.#options;
    while (!this.#stopping) {
      this.#wakeRequested = false;
      const free = concurrency - this.#inFlight.size;
      if (free > 0) {
        try {
          const claims = await store.claimDue(free, leaseMs);
          // Claimed is leased: deliver them even when stopping (stop() waits), rather than leave them to the lease.
          for (const claim of claims) this.#launch(claim);
          if (claims.length === free) continue; // more may be due: claim again as soon as a slot frees
        } catch (error) {
          this.#report(error);
        }
      }
      if (!this.#stopping) await this.#sleep();
    }
  }

  /** Until notify(), a finished attempt, or the poll interval. */
  async #sleep(): Promise<void> {
    if (this.#wakeRequested) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#wakeUp = resolve;
      timer = setTimeout(resolve, this.#options.pollIntervalMs);
      // The loop alone does not keep the process alive: the server that owns it does.
      timer.unref();
    });
    clearTimeout(timer);
    this.#wakeUp = undefined;
  }

  #launch(claim: ClaimedCallback): void {
    const attempt: Promise<void> = this.#deliver(claim).finally(() => {
      this.#inFlight.delete(attempt);
      this.notify();
    });
    this.#inFlight.add(attempt);
  }

  /** One attempt, recorded; never rejects (a failure to record leaves the delivery to its lease). */
  async #deliver(claim: ClaimedCallback): Promise<void> {
    try {
      const outcome = await this.#send(claim);
      const recorded = await this.#options.store.recordAttempt(claim, outcome);
      this.#options.onAttempt?.(claim, outcome, recorded);
    } catch (error) {
      this.#report(error);
    }
  }

  /** Signs and POSTs the claim within the time limit; any failure becomes the outcome, never a throw. */
  async #send(claim: ClaimedCallback): Promise<AttemptOutcome> {
    const { post, secretFor, timeoutMs } = this.#options;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // The transport is asked to stop at the deadline, and the attempt ends then whether or not it does.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`no response within ${timeoutMs} ms`);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    deadline.catch(() => {});
    try {
      const secret = await Promise.race([secretFor({ runId: claim.runId, organizationId: claim.organizationId }), deadline]);
      const headers = signCallback(secret, claim.webhookId, claim.payload, new Date());
      const response = await Promise.race([post({ url: claim.url, headers, body: claim.payload, timeoutMs, signal: controller.signal }), deadline]);
      if (!Number.isSafeInteger(response?.status)) throw new Error(`the transport answered no HTTP status (${String(response?.status)})`);
      return { statusCode: response.status, error: null, durationMs: elapsed() };
    } catch (error) {
      const message = error instanceof Error ? error.message || error.name : String(error);
      return { statusCode: null, error: message.slice(0, MAX_ERROR_LENGTH), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  #report(error: unknown): void {
    try {
      this.#options.onError(error);
    } catch {
      // A failing reporter must not end the loop.
    }
  }
}
