// HTML as text a model reads (see readable-html.js for what is kept), turned on worker threads with a time budget:
// pages come from anywhere, and one built to be slow must not stall the thread that serves HTTP. Shared by read_page
// and the corpus's file ingestion.
import { Worker } from "node:worker_threads";

/** A page's title (undefined when it has none) and readable text. */
export interface ReadableHtml {
  title: string | undefined;
  text: string;
}

/** How long one page may take to turn into text by default: 5,000 ms. */
export const DEFAULT_HTML_TEXT_BUDGET_MS = 5_000;

/** Why a page was not turned into text: over the time budget, over the thread's memory, or the thread failed. */
export type HtmlTextErrorCode = "too_slow" | "too_large" | "failed";

/** A page that could not be turned into text; the message says why, for the model or the operator. */
export class HtmlTextError extends Error {
  override readonly name = "HtmlTextError";
  constructor(
    readonly code: HtmlTextErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Options of an HtmlTextReader. */
export interface HtmlTextReaderOptions {
  /**
   * How long a page may take to turn into text (its wait for a thread, and a new thread's start, not counted).
   * Default 5,000 ms.
   */
  budgetMs?: number;
  /** Threads at most; more pages wait their turn. Default 2. */
  maxThreads?: number;
  /** How long an idle thread is kept for the next page before it ends. Default 10,000 ms. */
  idleMs?: number;
  /** A thread's heap limit: a page needing more fails as too_large. Default 512 MiB. */
  maxHeapMb?: number;
}

/** What one read may change. */
export interface HtmlTextReadOptions {
  /** This page's budget instead of the reader's. */
  budgetMs?: number;
  /** Aborting stops the read (terminating its thread if it has started) and rejects with the signal's reason. */
  signal?: AbortSignal;
}

interface Job {
  id: number;
  html: string;
  budgetMs: number;
  resolve: (page: ReadableHtml) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  timer?: NodeJS.Timeout;
}

interface Thread {
  worker: Worker;
  job: Job | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** The uncaught error that ended it (ERR_WORKER_OUT_OF_MEMORY, say). */
  error: Error | undefined;
  /** Set once it is being terminated or has exited: no more jobs. */
  ended: boolean;
  /** Its module has loaded: a page's budget starts then, so that a new thread's start is not counted against it. */
  ready: boolean;
}

type FromWorker = { ready: true } | { id: number; title: string | undefined; text: string } | { id: number; error: string };

// The worker is plain JavaScript beside this file, so the same URL works from the sources (tests) and from dist/.
const WORKER_URL = new URL("./html-text-worker.js", import.meta.url);

/**
 * Turns HTML into readable text on a small pool of worker threads. Each page has a time budget; past it, its thread is
 * terminated and the read fails with an HtmlTextError (`too_slow`), so the caller's thread never waits on a parse.
 * Idle threads do not keep the process alive.
 */
export class HtmlTextReader {
  readonly #budgetMs: number;
  readonly #maxThreads: number;
  readonly #idleMs: number;
  readonly #maxHeapMb: number;
  readonly #threads = new Set<Thread>();
  readonly #idle: Thread[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: HtmlTextReaderOptions = {}) {
    this.#budgetMs = positive(options.budgetMs ?? DEFAULT_HTML_TEXT_BUDGET_MS, "budgetMs");
    this.#maxThreads = positive(options.maxThreads ?? 2, "maxThreads");
    this.#idleMs = positive(options.idleMs ?? 10_000, "idleMs");
    this.#maxHeapMb = positive(options.maxHeapMb ?? 512, "maxHeapMb");
  }

  /** Threads started whose exit has not been seen yet (busy, idle or being terminated). */
  get threadCount(): number {
    return this.#threads.size;
  }

  /**
   * The title and readable text of an HTML document or fragment.
   * @throws HtmlTextError when the page takes longer than the budget (`too_slow`), needs more than the thread's heap
   * (`too_large`) or its thread fails (`failed`); the signal's reason when aborted.
   */
  read(html: string, options: HtmlTextReadOptions = {}): Promise<ReadableHtml> {
    if (this.#closed) return Promise.reject(new Error("the HTML text reader is closed"));
    const budgetMs = positive(options.budgetMs ?? this.#budgetMs, "budgetMs");
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<ReadableHtml>((resolve, reject) => {
      const job: Job = { id: this.#nextId++, html, budgetMs, resolve, reject, signal, onAbort: () => this.#abort(job) };
      signal?.addEventListener("abort", job.onAbort, { once: true });
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Ends every thread; pages waiting or being read fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#settle(job, new Error("the HTML text reader was closed"));
    await Promise.all([...this.#threads].map((thread) => this.#end(thread, new Error("the HTML text reader was closed"))));
  }

  /** Hands waiting pages to idle threads, starting threads up to the limit. */
  #pump(): void {
    while (this.#queue.length > 0) {
      // Threads being terminated count until they exit: a page past its budget does not make room at once.
      const thread = this.#idle.pop() ?? (this.#threads.size < this.#maxThreads ? this.#spawn() : undefined);
      if (thread === undefined) return;
      this.#dispatch(thread, this.#queue.shift() as Job);
    }
  }

  #spawn(): Thread {
    // No inherited Node flags: the thread runs one plain module, and some flags (--input-type, say) fail a worker's start.
    const worker = new Worker(WORKER_URL, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: this.#maxHeapMb } });
    const thread: Thread = { worker, job: undefined, idleTimer: undefined, error: undefined, ended: false, ready: false };
    this.#threads.add(thread);
    worker.on("message", (message: FromWorker) => this.#answered(thread, message));
    worker.on("error", (error) => {
      thread.error = error;
    });
    worker.on("exit", () => this.#exited(thread));
    return thread;
  }

  #dispatch(thread: Thread, job: Job): void {
    clearTimeout(thread.idleTimer);
    thread.job = job;
    thread.worker.ref();
    thread.worker.postMessage({ id: job.id, html: job.html });
    if (thread.ready) this.#startBudget(thread, job);
  }

  #startBudget(thread: Thread, job: Job): void {
    job.timer = setTimeout(() => {
      const error = new HtmlTextError("too_slow", `the HTML took longer than ${job.budgetMs} ms to turn into text, so it was given up`);
      void this.#end(thread, error);
    }, job.budgetMs);
  }

  #answered(thread: Thread, message: FromWorker): void {
    if ("ready" in message) {
      thread.ready = true;
      if (thread.job !== undefined) this.#startBudget(thread, thread.job);
      return;
    }
    const job = thread.job;
    if (job === undefined || message.id !== job.id) return;
    thread.job = undefined;
    if ("error" in message) this.#settle(job, new HtmlTextError("failed", `turning the HTML into text failed: ${message.error}`));
    else this.#settle(job, undefined, { title: message.title, text: message.text });
    if (this.#closed || thread.ended) return;
    // NOTE: an idle thread must not hold the process open (a CLI that read one file exits).
    thread.worker.unref();
    thread.idleTimer = setTimeout(() => void this.#end(thread), this.#idleMs).unref();
    this.#idle.push(thread);
    this.#pump();
  }

  /** Terminates a thread; its page, if any, fails with `error` once the thread is gone. */
  async #end(thread: Thread, error?: unknown): Promise<void> {
    if (thread.ended) return;
    thread.ended = true;
    this.#forget(thread);
    const job = thread.job;
    thread.job = undefined;
    await thread.worker.terminate();
    if (job !== undefined) this.#settle(job, error ?? new Error("the HTML text thread was ended"));
    this.#pump();
  }

  /** A thread exited: if on its own (out of memory, say), its page fails, and a new thread takes the next one. */
  #exited(thread: Thread): void {
    this.#threads.delete(thread);
    if (thread.ended) return;
    thread.ended = true;
    this.#forget(thread);
    const job = thread.job;
    thread.job = undefined;
    if (job !== undefined) {
      const outOfMemory = (thread.error as NodeJS.ErrnoException | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
      this.#settle(job, outOfMemory
        ? new HtmlTextError("too_large", `the HTML needed more than ${this.#maxHeapMb} MiB to turn into text, so it was given up`)
        : new HtmlTextError("failed", `turning the HTML into text failed: ${thread.error?.message ?? "its thread exited"}`));
    }
    this.#pump();
  }

  #abort(job: Job): void {
    const waiting = this.#queue.indexOf(job);
    if (waiting !== -1) {
      this.#queue.splice(waiting, 1);
      this.#settle(job, job.signal?.reason);
      return;
    }
    const thread = [...this.#threads].find((candidate) => candidate.job === job && !candidate.ended);
    if (thread !== undefined) void this.#end(thread, job.signal?.reason);
  }

  #forget(thread: Thread): void {
    clearTimeout(thread.idleTimer);
    const index = this.#idle.indexOf(thread);
    if (index !== -1) this.#idle.splice(index, 1);
  }

  #settle(job: Job, error: unknown, page?: ReadableHtml): void {
    clearTimeout(job.timer);
    job.signal?.removeEventListener("abort", job.onAbort);
    if (page !== undefined) job.resolve(page);
    else job.reject(error);
  }
}

function positive(value: number, field: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${field} must be a positive number, not ${value}`);
  return value;
}

let shared: HtmlTextReader | undefined;

/**
 * The title and readable text of an HTML document (or fragment), read on the process's shared HtmlTextReader.
 * @throws HtmlTextError past the budget (default 5,000 ms) or the thread's memory; the signal's reason when aborted.
 */
export function readableHtml(html: string, options: HtmlTextReadOptions = {}): Promise<ReadableHtml> {
  shared ??= new HtmlTextReader();
  return shared.read(html, options);
}
