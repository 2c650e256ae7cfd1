// A gateway's connection to one engine worker: one WebSocket (the `ws` client; uWebSockets.js only serves) carrying
// every request the gateway sends that worker, their events back, and the worker's load. When the connection drops,
// each request on it is told whether the worker had started it, so the cluster engine can retry the ones it had not.
import WebSocket from "ws";
import type { EngineQuestion } from "../../engine/host/messages.js";
import type { PromptModelSource } from "../../engine/prompt-counter.js";
import { receivedEvent } from "../../engine/host/messages.js";
import { PendingCalls } from "../../engine/host/pending-calls.js";
import type { EngineEvent, EngineRequest } from "../../engine/request.js";
import type { EmbeddingRequest, EmbeddingResult } from "../../engine/embed/request.js";
import { FROM_WORKER_TYPES, type FromWorkerFrame, MAX_FRAME_BYTES, STREAM_WINDOW, type SentEmbeddings, type ToWorkerFrame, type WorkerDescription, decodeFrame, encodeFrame, receivedEmbeddings } from "./frames.js";

/** Where a request's events go. */

/**
 * Why a worker's connection ended: the full message names the worker's address (for the log); `reason` says why in
 * words a client may see ("its heartbeat lapsed"), without it.
 */
export class WorkerLinkLostError extends Error {
  constructor(message: string, readonly reason: string) {
    super(message);
    this.name = "WorkerLinkLostError";
  }
}

export interface LinkedRequest {
  event(event: EngineEvent): void;
  /** The connection dropped before the request's last event; `started`: the worker had admitted it (sent more than its "start"). */
  lost(error: Error, started: boolean): void;
}

interface Pending {
  sink: LinkedRequest;
  started: boolean;
  /** Events read by the client since the last credit frame. */
  read: number;
  model: string;
  /** The prompt's chain hashes (counted as computing there while it runs). */
  prefix: readonly string[];
}

/** How long a sent prompt's blocks count as on their worker before it reports them (longer than any prefill). */
const COMPUTING_MS = 60_000;
/** After its request ends, how long they still count: its worker's cache update is on its way. */
const COMPUTED_GRACE_MS = 2_000;

/** How long connecting (and the hello) may take. */
const CONNECT_TIMEOUT_MS = 5_000;

/** One gateway-to-worker connection. */
export class WorkerLink {
  #socket: WebSocket;
  #description: WorkerDescription | undefined;
  readonly #requests = new Map<string, Pending>();
  /** Ids of this gateway's embedding requests on the worker (calls, whose abort frames the worker takes by id). */
  readonly #embeddings = new Set<string>();
  readonly #calls = new PendingCalls();
  /** The worker's last reported requests in flight, plus what this gateway sent since that report. */
  #reported = 0;
  #sentSinceReport = 0;
  #closed: Error | undefined;
  /** Per model: the chains the worker's prefix cache holds (exact: a snapshot, then every update). */
  readonly #caches = new Map<string, { blockSize: number; hashes: Set<string> }>();
  /**
   * Per model: chains this gateway's requests are computing there now, until when to count them (the worker reports
   * blocks once computed; without these, a tenant's second request during its first one's prefill would miss).
   */
  readonly #computing = new Map<string, Map<string, number>>();
  /** Per model: the tokenizer and chat template the worker sent. */
  readonly #promptSources = new Map<string, PromptModelSource>();
  readonly ready: Promise<WorkerDescription>;
  readonly #onClose: (link: WorkerLink, error: Error) => void;

  /**
   * Connects to the worker at `url` (http://host:port); `ready` resolves with its description once it says hello,
   * and rejects when it refuses the token, cannot be reached, or sends no hello within CONNECT_TIMEOUT_MS.
   * `onClose` runs once, when the connection ends; `onPromptModel` with each model's tokenizer and chat template,
   * which the worker sends after its hello.
   */
  constructor(readonly url: string, token: string, onClose: (link: WorkerLink, error: Error) => void, private readonly onPromptModel: (model: string, source: PromptModelSource) => void = () => undefined) {
    this.#onClose = onClose;
    const socket = new WebSocket(`${url.replace(/^http/, "ws")}/cluster`, { headers: { authorization: `Bearer ${token}` }, maxPayload: MAX_FRAME_BYTES, handshakeTimeout: CONNECT_TIMEOUT_MS });
    this.#socket = socket;
    this.ready = new Promise<WorkerDescription>((resolve, reject) => {
      socket.on("unexpected-response", (_request, response) => {
        reject(new Error(response.statusCode === 401 ? `the worker at ${url} refused the cluster token` : `the worker at ${url} answered ${response.statusCode} to the connection`));
        socket.terminate();
      });
      socket.on("message", (data: Buffer) => {
        let frame: FromWorkerFrame;
        try {
          frame = decodeFrame<FromWorkerFrame>(data, FROM_WORKER_TYPES);
        } catch (error) {
          socket.terminate();
          this.#end(new WorkerLinkLostError(`the worker at ${url} sent a malformed frame: ${(error as Error).message}`, "it sent a malformed frame"), onClose);
          return;
        }
        if (frame.type === "hello") {
          this.#description = frame.worker;
          resolve(frame.worker);
        } else {
          this.#dispatch(frame);
        }
      });
      socket.on("error", (error) => reject(new Error(`cannot reach the worker at ${url}: ${error.message}`)));
      socket.on("close", (code, reason) => {
        const error = new WorkerLinkLostError(`the connection to the worker at ${url} closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ""})`, "its connection closed");
        reject(error);
        this.#end(error, onClose);
      });
    });
    this.ready.catch(() => undefined); // observed by whoever awaits it; a failed connect also ends through close
    // Something that accepts the upgrade but never says hello is not a worker.
    const helloTimer = setTimeout(() => {
      if (!this.#description) this.close(`no hello within ${CONNECT_TIMEOUT_MS / 1000} s`);
    }, CONNECT_TIMEOUT_MS);
    this.ready.finally(() => clearTimeout(helloTimer)).catch(() => undefined);
  }

  /** The worker's hello, once received. */
  get description(): WorkerDescription | undefined {
    return this.#description;
  }

  /** Whether the connection has ended. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** Requests in flight on the worker (from every gateway), as far as this gateway knows. */
  get load(): number {
    return this.#reported + this.#sentSinceReport;
  }

  /** Sequences the worker runs at once (1 until its hello arrives). */
  get capacity(): number {
    return this.#description?.capacity ?? 1;
  }

  /** The worker's prefix-cache block size for `model`, once its snapshot arrived. */
  blockSize(model: string): number | undefined {
    return this.#caches.get(model)?.blockSize;
  }

  /**
   * How many of the chain hashes `hashes` (a prompt's leading full blocks, first first) the worker holds in a row:
   * cached there, or being computed there for a request this gateway sent.
   */
  cachedBlocks(model: string, hashes: readonly string[]): number {
    const cached = this.#caches.get(model)?.hashes;
    const computing = this.#computing.get(model);
    const now = performance.now();
    let count = 0;
    while (count < hashes.length) {
      const hash = hashes[count]!;
      if (!cached?.has(hash) && !((computing?.get(hash) ?? 0) > now)) break;
      count++;
    }
    return count;
  }

  /** The tokenizer and chat template the worker sent for `model`, once it arrived. */
  promptSource(model: string): PromptModelSource | undefined {
    return this.#promptSources.get(model);
  }

  /** This gateway's requests on the worker now. */
  get ownRequests(): number {
    return this.#requests.size;
  }

  /** Sends a request for the worker's model `model`; its events go to `sink`. False when the connection has ended. */
  submit(model: string, request: EngineRequest & { id: string }, sink: LinkedRequest, prefix: readonly string[] = []): boolean {
    if (this.#closed || this.#socket.readyState !== WebSocket.OPEN) return false;
    this.#requests.set(request.id, { sink, started: false, read: 0, model, prefix });
    this.#markComputing(model, prefix, COMPUTING_MS);
    this.#sentSinceReport++;
    this.#send({ type: "submit", model, request });
    return true;
  }

  /** The client read one more event of request `id`: grants the worker room for more, half a window at a time. */
  consumed(id: string): void {
    const pending = this.#requests.get(id);
    if (!pending) return;
    if (++pending.read >= STREAM_WINDOW / 2) {
      this.#send({ type: "credit", id, events: pending.read });
      pending.read = 0;
    }
  }

  abort(id: string): void {
    if (this.#requests.has(id) || this.#embeddings.has(id)) this.#send({ type: "abort", id });
  }

  /**
   * Has the worker's engine for `model` embed `request` (counted in its load as a submitted request); abort(id)
   * stops it there. Rejects with the worker's EngineError, or the connection's error when it ends first.
   */
  async embed(model: string, request: EmbeddingRequest & { id: string }): Promise<EmbeddingResult> {
    if (this.#closed) throw this.#closed;
    if (this.#embeddings.has(request.id) || this.#requests.has(request.id)) throw new Error(`a request with id ${request.id} is already running on the worker at ${this.url}`);
    this.#embeddings.add(request.id);
    this.#sentSinceReport++;
    try {
      return receivedEmbeddings(await this.ask<SentEmbeddings>(model, { method: "embed", request }));
    } finally {
      this.#embeddings.delete(request.id);
    }
  }

  /** Asks the worker's engine for `model` a question (its stats, a token count). */
  ask<T>(model: string, question: EngineQuestion): Promise<T> {
    if (this.#closed) return Promise.reject(this.#closed);
    return this.#calls.ask<T>((call) => this.#send({ type: "call", call, model, question }));
  }

  /**
   * Drops the connection at once; requests on it are lost (see LinkedRequest.lost). NOTE: not a closing handshake: a
   * worker whose heartbeat lapsed may be hung or cut off, and would keep its requests waiting for its answer.
   */
  close(reason: string): void {
    this.#socket.terminate();
    this.#end(new WorkerLinkLostError(`the gateway dropped the connection to the worker at ${this.url}: ${reason}`, reason), this.#onClose);
  }

  #send(frame: ToWorkerFrame): void {
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.send(encodeFrame(frame), { binary: true });
  }

  #dispatch(frame: Exclude<FromWorkerFrame, { type: "hello" }>): void {
    switch (frame.type) {
      case "event": {
        const event = receivedEvent(frame.event);
        const pending = this.#requests.get(event.requestId);
        if (!pending) return;
        // "start" only reports the prompt's size; the request is under way from its admission on.
        if (event.type !== "start") pending.started = true;
        if (event.type === "finish" || event.type === "error") {
          this.#requests.delete(event.requestId);
          this.#markComputing(pending.model, pending.prefix, COMPUTED_GRACE_MS);
        }
        pending.sink.event(event);
        return;
      }
      case "reply":
        this.#calls.settle(frame);
        return;
      case "load":
        this.#reported = frame.inFlight;
        this.#sentSinceReport = 0;
        return;
      case "prompt-model":
        this.#promptSources.set(frame.model, frame.source);
        this.onPromptModel(frame.model, frame.source);
        return;
      case "cache-snapshot":
        this.#caches.set(frame.model, { blockSize: frame.snapshot.blockSize, hashes: new Set(frame.snapshot.hashes) });
        return;
      case "cache": {
        const cache = this.#caches.get(frame.model);
        if (!cache) return; // before the snapshot, which holds these
        if (frame.update.reset) cache.hashes.clear();
        for (const hash of frame.update.removed) cache.hashes.delete(hash);
        for (const hash of frame.update.added) cache.hashes.add(hash);
        return;
      }
    }
  }

  /** Counts `prefix` as on this worker for `ms` from now (replacing what it had), dropping expired entries. */
  #markComputing(model: string, prefix: readonly string[], ms: number): void {
    if (prefix.length === 0) return;
    let computing = this.#computing.get(model);
    if (!computing) this.#computing.set(model, (computing = new Map()));
    const now = performance.now();
    for (const [hash, until] of computing) if (until <= now) computing.delete(hash);
    for (const hash of prefix) computing.set(hash, now + ms);
  }

  #end(error: Error, onClose: (link: WorkerLink, error: Error) => void): void {
    if (this.#closed) return;
    this.#closed = error;
    const requests = [...this.#requests.values()];
    this.#requests.clear();
    for (const pending of requests) pending.sink.lost(error, pending.started);
    this.#calls.rejectAll(error);
    onClose(this, error);
  }
}
