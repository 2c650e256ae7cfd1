// A serving engine on its own thread. The server's event loop only relays messages, so a multi-second prefill step
// no longer stalls other sockets, keep-alive pings or /metrics. If the engine thread dies, the requests in flight
// fail with an internal error and a fresh thread reloads the model; a second death within a minute, or a reload
// that fails, leaves the engine unavailable and every request is refused with the cause.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { LoadProgress } from "../backends/wasm/weight-loader.js";
import type { EngineOptions, EngineStream, ServingEngine } from "../engine.js";
import { EventChannel } from "../event-channel.js";
import type { LoadOptions } from "../load.js";
import { PACKAGE_ROOT } from "../../kernels/package-root.js";
import { EngineError, type EngineEvent, type EngineRequest, type EngineStats, type PrefixCacheSnapshot, type PrefixCacheUpdate } from "../request.js";
import type { PreparedPrompt, PromptSettings } from "../prompt.js";
import type { EmbeddingRequest, EmbeddingResult } from "../embed/request.js";
import type { DetokenizeRequest, Detokenized, TokenizeRequest } from "../tokenize.js";
import { PendingCalls } from "./pending-calls.js";
import { PromptThread } from "./prompt-thread.js";
import { type EngineQuestion, type EngineWorkerData, type FromWorker, type ModelInfo, type ToWorker, receivedError, receivedEvent } from "./messages.js";

/** Options for {@link WorkerEngine.start}. */
export interface WorkerEngineOptions {
  /** How the worker loads the model (see loadModel). */
  load?: Omit<LoadOptions, "onProgress">;
  engine?: EngineOptions;
  /** Called on this thread as weight bytes arrive (first load only). */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Test only: lets {@link WorkerEngine.exitThreadForTesting} end the engine thread as a crash would, so that tests
   * run the real recovery path. Never set by `loom serve`.
   */
  testHooks?: boolean;
}

/** Where the engine thread's compiled entry lives (workers cannot load the TypeScript sources). */
export function engineWorkerPath(): string {
  const path = join(PACKAGE_ROOT, "dist", "engine", "host", "engine-worker.js");
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
  return path;
}

/** A second crash this soon after the previous one is a crash loop: stop restarting. */
const CRASH_LOOP_MS = 60_000;
/** How long a stopping engine thread may take to close its model before it is terminated. */
const STOP_GRACE_MS = 5_000;

interface InFlight {
  channel: EventChannel<EngineEvent>;
  admitted: boolean;
  /** Whether the engine thread has the request (false while the prompt thread prepares it). */
  submitted: boolean;
  /** Aborted while still being prepared: aborted as soon as the engine thread has it. */
  abortRequested?: boolean;
}

/** One engine thread and what it was asked. */
interface Thread {
  worker: Worker;
  ready: boolean;
  /** The uncaught error that stopped it, if any. */
  error?: Error;
  exited: boolean;
}

/** The serving engine on a worker thread: the same requests and events as {@link Engine}, stats() asynchronous. */
export class WorkerEngine implements ServingEngine {
  #thread!: Thread;
  #model!: ModelInfo;
  readonly #path: string;
  readonly #data: EngineWorkerData;
  readonly #streams = new Map<string, InFlight>();
  /** Ids of the embedding requests the engine thread runs (answered as calls; abort(id) reaches them there). */
  readonly #embeddings = new Set<string>();
  /** Questions sent to the engine thread and not yet answered. */
  readonly #calls = new PendingCalls();
  readonly #cacheListeners = new Set<(update: PrefixCacheUpdate) => void>();
  /** Prepares prompts off the engine thread; `#promptSettings` (from the engine thread) says with what limits. */
  readonly #prompts: PromptThread;
  #promptSettings: PromptSettings | undefined;
  /** The prompts {@link prepareAhead} gave, with the settings they were prepared with: submit takes only those, while they hold. */
  readonly #preparedWith = new WeakMap<PreparedPrompt, PromptSettings>();
  #waiting = 0;
  #arrivals = 0;
  #closing = false;
  #lastCrashAt = Number.NEGATIVE_INFINITY;
  #unavailable: Error | undefined;

  private constructor(path: string, data: EngineWorkerData) {
    this.#path = path;
    this.#data = data;
    this.#prompts = new PromptThread(data.path, data.load.mmproj);
  }

  /**
   * Starts the engine thread and loads the model there.
   * @throws the load's own error (a ModelFileError's name and message, say) when the model cannot be loaded.
   */
  static async start(path: string, options: WorkerEngineOptions = {}): Promise<WorkerEngine> {
    const data: EngineWorkerData = { path, load: options.load ?? {}, engine: options.engine ?? {}, ...(options.testHooks ? { testHooks: true } : {}) };
    const engine = new WorkerEngine(engineWorkerPath(), data);
    engine.#prompts.warm(); // reads the tokenizer while the engine thread loads the weights
    try {
      engine.#model = await engine.#spawn(options.onProgress);
    } catch (error) {
      await Promise.all([engine.#thread.worker.terminate(), engine.#prompts.close()]);
      throw error;
    }
    return engine;
  }

  /** The loaded model (after a restart: as reloaded). */
  get model(): ModelInfo {
    return this.#model;
  }

  /** Requests submitted and not yet admitted to a step, and embedding requests in flight (each counts as one). */
  get queueDepth(): number {
    return this.#waiting + this.#embeddings.size;
  }

  /** Why the engine refuses requests, once it cannot be restarted. */
  get unavailable(): Error | undefined {
    return this.#unavailable;
  }

  submit(request: EngineRequest, prepared?: PreparedPrompt): EngineStream {
    const id = request.id ?? `req-${++this.#arrivals}-${Date.now().toString(36)}`;
    const channel = new EventChannel<EngineEvent>(() => this.abort(id));
    const stream = { id, [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator]() };
    const refuse = (error: EngineError) => {
      channel.push({ type: "error", requestId: id, error });
      channel.close();
      return stream;
    };
    if (this.#closing) return refuse(new EngineError("internal", "the engine is closed"));
    if (this.#unavailable) return refuse(new EngineError("internal", this.#unavailable.message));
    if (this.#streams.has(id)) return refuse(new EngineError("invalid_request", `a request with id ${id} is already running`, "id"));
    const identified = { ...request, id };
    const settings = this.#promptSettings;
    const ready = prepared !== undefined && settings !== undefined && this.#preparedWith.get(prepared) === settings ? prepared : undefined;
    if (!ready && settings && this.#prompts.available && typeof request.input === "object" && request.input !== null && !("tokens" in request.input)) {
      const inFlight: InFlight = { channel, admitted: false, submitted: false };
      this.#streams.set(id, inFlight);
      this.#waiting++;
      void this.#prepareThenSubmit(identified, settings, inFlight);
      return stream;
    }
    try {
      this.#post(submitMessage(identified, ready));
    } catch (error) {
      return refuse(new EngineError("invalid_request", `the request cannot be sent to the engine thread: ${(error as Error).message}`));
    }
    this.#streams.set(id, { channel, admitted: false, submitted: true });
    this.#waiting++;
    return stream;
  }

  /**
   * Has the prompt thread render, compact and tokenize the request's prompt, then hands the request to the engine
   * thread with it. A prompt error ends the request as the engine would have; a prompt thread that failed (not the
   * request) leaves the preparation to the engine thread.
   */
  async #prepareThenSubmit(request: EngineRequest & { id: string }, settings: PromptSettings, inFlight: InFlight): Promise<void> {
    let prepared: PreparedPrompt | undefined;
    try {
      prepared = await this.#prompts.prepare(request, settings);
    } catch (error) {
      if (error instanceof EngineError) {
        if (this.#streams.get(request.id) === inFlight) this.#deliver({ type: "error", requestId: request.id, error });
        return;
      }
    }
    if (this.#streams.get(request.id) !== inFlight) return; // failed or closed meanwhile (a restart, close)
    try {
      this.#post(submitMessage(request, prepared, inFlight.abortRequested));
    } catch (error) {
      this.#deliver({ type: "error", requestId: request.id, error: new EngineError("invalid_request", `the request cannot be sent to the engine thread: ${(error as Error).message}`) });
      return;
    }
    inFlight.submitted = true;
  }

  abort(id: string): boolean {
    if (this.#embeddings.has(id)) {
      this.#post({ type: "abort", id });
      return true;
    }
    const inFlight = this.#streams.get(id);
    if (!inFlight) return false;
    if (!inFlight.submitted) inFlight.abortRequested = true;
    else this.#post({ type: "abort", id });
    return true;
  }

  stats(): Promise<EngineStats> {
    return this.#ask({ method: "stats" });
  }

  /**
   * Embedded by the engine thread, its inputs scheduled among the other requests (see ServingEngine.embed); abort(id)
   * with the request's id (one is given when it has none) stops it there.
   */
  embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
    const id = request.id ?? `embd-${++this.#arrivals}-${Date.now().toString(36)}`;
    if (this.#streams.has(id) || this.#embeddings.has(id)) return Promise.reject(new EngineError("invalid_request", `a request with id ${id} is already running`, "id"));
    this.#embeddings.add(id);
    return this.#ask<EmbeddingResult>({ method: "embed", request: { ...request, id } }).finally(() => this.#embeddings.delete(id));
  }

  /**
   * The prompt `request` would run with, prepared on the prompt thread as submit would prepare it: hand it to submit,
   * which then sends it to the engine thread as it is. Undefined without a prompt thread (submit then has the engine
   * thread prepare it), or when the prompt thread failed (not the request).
   * @throws EngineError as submit would report the prompt.
   */
  async prepareAhead(request: EngineRequest): Promise<PreparedPrompt | undefined> {
    const settings = this.#promptSettings;
    if (!settings || !this.#prompts.available || this.#unavailable) return undefined;
    if (typeof request.input !== "object" || request.input === null || "tokens" in request.input) return undefined;
    try {
      const prepared = await this.#prompts.prepare(request, settings);
      this.#preparedWith.set(prepared, settings);
      return prepared;
    } catch (error) {
      if (error instanceof EngineError) throw error;
      return undefined;
    }
  }

  /** Counted on the prompt thread (else by the engine thread, which answers only between steps). */
  async countTokens(request: EngineRequest): Promise<number> {
    const settings = this.#promptSettings;
    if (settings && this.#prompts.available && !this.#unavailable) {
      try {
        return await this.#prompts.count(request, settings);
      } catch (error) {
        if (error instanceof EngineError) throw error;
        // The prompt thread failed, not the request: the engine thread counts it.
      }
    }
    return this.#ask({ method: "countTokens", request });
  }

  /** Tokenized on the prompt thread (else by the engine thread, between steps). */
  async tokenize(request: TokenizeRequest): Promise<number[]> {
    const settings = this.#promptSettings;
    if (settings && this.#prompts.available && !this.#unavailable) {
      try {
        return await this.#prompts.tokenize(request, settings);
      } catch (error) {
        if (error instanceof EngineError) throw error;
      }
    }
    return this.#ask({ method: "tokenize", request });
  }

  /** Decoded on the prompt thread (else by the engine thread, between steps). */
  async detokenize(request: DetokenizeRequest): Promise<Detokenized> {
    if (this.#prompts.available && !this.#unavailable) {
      try {
        return await this.#prompts.detokenize(request);
      } catch (error) {
        if (error instanceof EngineError) throw error;
      }
    }
    return this.#ask({ method: "detokenize", request });
  }

  onPrefixCacheChange(listener: (update: PrefixCacheUpdate) => void): () => void {
    this.#cacheListeners.add(listener);
    return () => this.#cacheListeners.delete(listener);
  }

  /** Answered in order with the thread's cache updates: the updates received after it are the ones it lacks. */
  prefixCacheSnapshot(): Promise<PrefixCacheSnapshot> {
    return this.#ask({ method: "prefixCache" });
  }

  #reportCache(update: PrefixCacheUpdate): void {
    for (const listener of this.#cacheListeners) listener(update);
  }

  /** Sends a question to the engine thread; resolves with its answer. */
  #ask<T>(question: EngineQuestion): Promise<T> {
    if (this.#unavailable) return Promise.reject(this.#unavailable);
    return this.#calls.ask<T>(
      (call) => this.#post({ type: "call", call, question }),
      (error) => new EngineError("invalid_request", `the request cannot be sent to the engine thread: ${error.message}`),
    );
  }

  /**
   * Replaces the engine thread with a fresh one that reloads the model, as after a crash: requests in flight fail
   * with an internal error. For operators (a wedged engine) and for tests of crash recovery.
   */
  restart(): void {
    if (this.#closing || this.#unavailable) return;
    this.#failInFlight("the engine was restarted");
    const old = this.#thread;
    // The new thread takes every message from now on; the old one closes its model and ends on its own.
    this.#respawn();
    void this.#stop(old);
  }

  /**
   * Test only: makes the engine thread exit at once with `code` (not a graceful stop), so that what follows is what
   * follows a crash: requests in flight fail, then a restart or, within a minute of the last crash, unavailability.
   * @throws Error unless the engine was started with `testHooks`.
   */
  exitThreadForTesting(code = 1): void {
    if (this.#data.testHooks !== true) throw new Error("exitThreadForTesting needs an engine started with testHooks: true");
    this.#post({ type: "exit-for-testing", code });
  }

  /** Stops the engine thread; requests in flight fail, and new ones are refused. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#failInFlight("the engine was closed");
    await Promise.all([this.#stop(this.#thread), this.#prompts.close()]);
  }

  /**
   * Asks a thread to close its engine and model and end; terminates it if it has not ended within STOP_GRACE_MS (a
   * wedged step). NOTE: terminating a thread with GPU work in flight kills the process, hence the request first.
   */
  async #stop(thread: Thread): Promise<void> {
    if (thread.exited) return;
    const exited = new Promise<void>((resolve) => thread.worker.once("exit", () => resolve()));
    try {
      thread.worker.postMessage({ type: "stop" } satisfies ToWorker);
    } catch {
      // already gone
    }
    const timer = setTimeout(() => void thread.worker.terminate(), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  #post(message: ToWorker): void {
    this.#thread.worker.postMessage(message);
  }

  /** Starts a thread; resolves when its model is loaded, rejects with the load's error. */
  #spawn(onProgress?: (progress: LoadProgress) => void): Promise<ModelInfo> {
    const thread: Thread = { worker: new Worker(this.#path, { workerData: this.#data }), ready: false, exited: false };
    this.#thread = thread;
    return new Promise((resolve, reject) => {
      thread.worker.on("message", (message: FromWorker) => {
        switch (message.type) {
          case "progress":
            onProgress?.({ loadedBytes: message.loadedBytes, totalBytes: message.totalBytes });
            return;
          case "ready":
            thread.ready = true;
            this.#promptSettings = message.prompt;
            resolve(message.model);
            return;
          case "load-failed":
            thread.error = receivedError(message.error);
            reject(thread.error);
            return;
          case "event":
            this.#deliver(receivedEvent(message.event));
            return;
          case "cache":
            if (thread === this.#thread) this.#reportCache(message.update);
            return;
          case "reply":
            this.#calls.settle(message);
            return;
        }
      });
      thread.worker.on("error", (error) => {
        thread.error = error;
      });
      thread.worker.on("exit", (code) => {
        thread.exited = true;
        const cause = thread.error ?? new Error(`the engine thread exited with code ${code}`);
        reject(cause);
        this.#stopped(thread, cause);
      });
    });
  }

  /** Ends every request and question in flight with an internal error (their thread is going away). */
  #failInFlight(message: string, cause?: Error): void {
    for (const [id, inFlight] of this.#streams) {
      inFlight.channel.push({ type: "error", requestId: id, error: new EngineError("internal", message, undefined, { cause }) });
      inFlight.channel.close();
    }
    this.#streams.clear();
    this.#waiting = 0;
    this.#calls.rejectAll(new Error(message, { cause }));
  }

  /** Hands an event to its request's stream and keeps the waiting count. */
  #deliver(event: EngineEvent): void {
    const inFlight = this.#streams.get(event.requestId);
    if (!inFlight) return;
    const ends = event.type === "finish" || event.type === "error";
    if (!inFlight.admitted && (event.type === "admitted" || ends)) {
      inFlight.admitted = true;
      this.#waiting--;
    }
    inFlight.channel.push(event);
    if (ends) {
      inFlight.channel.close();
      this.#streams.delete(event.requestId);
    }
  }

  /** A thread ended: fail what it held, then restart it unless closing, never loaded, or crash-looping. */
  #stopped(thread: Thread, cause: Error): void {
    if (thread !== this.#thread) return; // a thread replaced by restart()
    this.#failInFlight(this.#closing ? "the engine was closed" : `the engine thread stopped: ${cause.message}`, cause);
    if (this.#closing) return;
    const now = performance.now();
    if (!thread.ready || now - this.#lastCrashAt < CRASH_LOOP_MS) {
      this.#unavailable = new Error(`the engine is unavailable: ${cause.message}`, { cause });
      this.#reportCache({ added: [], removed: [], reset: true });
      return;
    }
    this.#lastCrashAt = now;
    this.#respawn();
  }

  /** Starts a replacement thread (it reloads the model; requests sent meanwhile wait in its port). */
  #respawn(): void {
    // The new thread's cache starts empty, whatever the old one held.
    this.#reportCache({ added: [], removed: [], reset: true });
    this.#spawn().then(
      (model) => { this.#model = model; },
      () => undefined, // its exit handler has marked the engine unavailable
    );
  }
}

/** The engine thread's submit message: with its prompt when prepared here (the input then holds its tokens). */
function submitMessage(request: EngineRequest & { id: string }, prepared: PreparedPrompt | undefined, aborted = false): ToWorker {
  const message: ToWorker = prepared ? { type: "submit", request: { ...request, input: { tokens: prepared.tokens } }, prepared } : { type: "submit", request };
  return aborted ? { ...message, aborted: true } : message;
}
