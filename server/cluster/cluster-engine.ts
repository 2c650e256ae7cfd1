// One model as a gateway serves it: a ServingEngine over the workers that serve the model, so the gateway's HTTP
// handlers, platform accounting and agent runs use it exactly as `loom serve` uses its local engine. Each request
// goes to one worker (routing.ts); if that worker's connection drops before the worker sent any of the request's
// events, the request is sent once more to another worker; a request already under way ends with an error event.
import type { EngineStream, ServingEngine } from "../../engine/engine.js";
import { EventChannel } from "../../engine/event-channel.js";
import type { EngineQuestion } from "../../engine/host/messages.js";
import { EngineError, type EngineEvent, type EngineRequest, type EngineStats } from "../../engine/request.js";
import type { DetokenizeRequest, Detokenized, TokenizeRequest } from "../../engine/tokenize.js";
import type { EmbeddingRequest, EmbeddingResult } from "../../engine/embed/request.js";
import { AffinityMap, keepsAffinity } from "./affinity.js";
import { RecentPrompts } from "./recent-prompts.js";
import { type RoutingCounters, type RoutingPolicy, cacheAware, leastLoaded, noRouting } from "./routing.js";
import { type WorkerLink, WorkerLinkLostError } from "./worker-link.js";

/** The mean output length assumed before any request finished. */
const INITIAL_MEAN_OUTPUT_TOKENS = 32;
/** The weight of each finished request in the running mean (about the last 50 count). */
const MEAN_WEIGHT = 0.02;
/** Fork groups whose members are still being routed: members come back to back, so only a request cut short lingers. */
const MAX_FORK_ROUTES = 1024;

/** What a model's engines (one per pool) share. */
export interface ClusterShared {
  /** Every worker serving the model, whatever its pool. */
  otherLinks(): WorkerLink[];
  /**
   * The chain hashes of a request's prompt blocks (block-hash.ts) and its token count, or undefined when it cannot
   * be tokenized here.
   */
  prefixHashes(request: EngineRequest, blockSize: number): { hashes: string[]; promptTokens: number } | undefined;
  /** A fixed load margin in requests for cacheAware (undefined: derived, see routing.ts). */
  loadMargin: number | undefined;
  policy: RoutingPolicy;
}

/** The engine of one model (by its modelKey) across the workers serving it. */
export class ClusterEngine implements ServingEngine {
  readonly #links = new Set<WorkerLink>();
  /** Which worker runs each request now. */
  readonly #running = new Map<string, WorkerLink>();
  /** Which worker runs each embedding request now. */
  readonly #embedding = new Map<string, WorkerLink>();
  #arrivals = 0;

  /** What routing did (see RoutingCounters). */
  readonly routing: RoutingCounters = noRouting();
  #turn = 0;
  /** The last requests' prompts and workers: the prefix most of them share is no match; a miss prefers the worker that took fewest. */
  readonly #recent = new RecentPrompts<WorkerLink>();
  /** Where each recent affinity key (prompt_cache_key) went: its requests follow while that worker has room. */
  readonly #affinity = new AffinityMap<WorkerLink>();
  /**
   * Where each fork group's members went (the choices of one request, submitted back to back): they follow the first,
   * so that they share one prefill there; forgotten once the last member is routed (bounded for groups cut short).
   */
  readonly #forkRoutes = new Map<string, { link: WorkerLink; routed: number }>();
  /** The running mean of output tokens per finished request (what a request in flight costs a new one per step). */
  #meanOutput = INITIAL_MEAN_OUTPUT_TOKENS;

  /**
   * @param pool the workers' pool it routes to (named in its errors).
   * @param cluster what the model's other engines share: every worker serving the model whatever its pool (token
   * counts, a tokenization and not a request, may go to them when this pool has none), the prompt's chain hashes as
   * the workers' caches name them (undefined until a worker sent its tokenizer), and the load margin of cacheAware.
   */
  constructor(
    readonly modelKey: string,
    readonly pool: string,
    private readonly cluster: ClusterShared = { otherLinks: () => [], prefixHashes: () => undefined, loadMargin: undefined, policy: "cache-aware" },
    private readonly random: () => number = Math.random,
  ) {}

  /** Routes to `link` from now on. */
  add(link: WorkerLink): void {
    this.#links.add(link);
  }

  /**
   * Stops routing to `link`. The requests it runs go on: they end with their last event, or, when the link closes
   * first, as it reports them lost.
   */
  remove(link: WorkerLink): void {
    this.#links.delete(link);
  }

  /** The workers it routes to. */
  get links(): WorkerLink[] {
    return [...this.#links];
  }

  /** Requests waiting for room on their workers: each worker's load past its capacity. */
  get queueDepth(): number {
    let waiting = 0;
    for (const link of this.#links) waiting += Math.max(0, link.load - link.capacity);
    return waiting;
  }

  /** Set while no worker serves the model (admission answers 503 / 529 with Retry-After). */
  get unavailable(): Error | undefined {
    return this.#candidates().length === 0 ? new Error(this.#noWorker()) : undefined;
  }

  submit(request: EngineRequest): EngineStream {
    const id = request.id ?? `req-${++this.#arrivals}-${Date.now().toString(36)}`;
    const channel = new EventChannel<EngineEvent>(() => this.abort(id));
    const fail = (error: EngineError) => {
      channel.push({ type: "error", requestId: id, error });
      channel.close();
    };
    const prompt = this.#prefixHashes(request);
    const send = (excluded: ReadonlySet<WorkerLink>, retried: boolean): void => {
      const candidates = this.#candidates().filter((candidate) => !excluded.has(candidate));
      const link = this.#forkRoute(request.fork, candidates) ?? this.#route(candidates, prompt, request.affinityKey);
      if (link && request.fork) this.#routedFork(request.fork, link);
      if (!link) {
        fail(oneLineError(retried ? `the worker running this request was lost, and ${this.#noWorker().replace(/^no/, "no other")}` : this.#noWorker()));
        return;
      }
      this.#running.set(id, link);
      const sent = link.submit(this.modelKey, { ...request, id }, {
        event: (event) => {
          channel.push(event);
          if (event.type === "finish" || event.type === "error") {
            this.#running.delete(id);
            channel.close();
          }
          if (event.type === "finish" && event.reason !== "aborted") this.#meanOutput += (event.usage.completionTokens - this.#meanOutput) * MEAN_WEIGHT;
        },
        lost: (error, started) => {
          this.#running.delete(id);
          // Not started: nothing reached the client, so another worker can run it from the start (once).
          if (!started && !retried) send(new Set([...excluded, link]), true);
          else {
            fail(lostWorkerError(this.pool, error));
          }
        },
      }, prompt?.hashes);
      if (!sent) send(new Set([...excluded, link]), retried);
    };
    send(new Set(), false);
    const iterator = channel[Symbol.asyncIterator]();
    return {
      id,
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          const result = await iterator.next();
          if (!result.done) this.#running.get(id)?.consumed(id);
          return result;
        },
        return: () => iterator.return!(),
      }),
    };
  }

  abort(id: string): boolean {
    const link = this.#running.get(id) ?? this.#embedding.get(id);
    if (!link) return false;
    link.abort(id);
    return true;
  }

  /**
   * Embedded by the least loaded of this pool's workers serving the model (an embedding has no prompt to route by
   * cache: mean and CLS inputs adopt no cached KV). A worker lost before it answered: once more on another, as a
   * request it had not started (nothing reached the client). abort(id) stops it on its worker.
   */
  async embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
    const id = request.id ?? `embd-${++this.#arrivals}-${Date.now().toString(36)}`;
    if (this.#embedding.has(id) || this.#running.has(id)) throw new EngineError("invalid_request", `a request with id ${id} is already running`, "id");
    const excluded = new Set<WorkerLink>();
    try {
      for (;;) {
        const link = leastLoaded(this.#candidates().filter((candidate) => !excluded.has(candidate)), this.random);
        if (!link) throw oneLineError(excluded.size > 0 ? `the worker running this request was lost, and ${this.#noWorker().replace(/^no/, "no other")}` : this.#noWorker());
        this.#embedding.set(id, link);
        try {
          return await link.embed(this.modelKey, { ...request, id });
        } catch (error) {
          if (!link.closed || error instanceof EngineError) throw error;
          if (excluded.size > 0) throw lostWorkerError(this.pool, error as Error);
          excluded.add(link);
        }
      }
    } finally {
      this.#embedding.delete(id);
    }
  }

  /** The workers' stats, summed (rates recomputed from the summed counts). */
  async stats(): Promise<EngineStats> {
    const all = await Promise.all(this.#candidates().map((link) => link.ask<EngineStats>(this.modelKey, { method: "stats" })));
    return sumStats(all);
  }

  /** Counted by the least loaded worker (each worker renders and tokenizes as it would run the request). */
  countTokens(request: EngineRequest): Promise<number> {
    const own = this.#candidates();
    const link = leastLoaded(own.length > 0 ? own : this.cluster.otherLinks().filter((other) => !other.closed), this.random);
    if (!link) return Promise.reject(new EngineError("internal", this.#noWorker()));
    return link.ask<number>(this.modelKey, { method: "countTokens", request });
  }

  /** Tokenized by the least loaded worker, as countTokens. */
  tokenize(request: TokenizeRequest): Promise<number[]> {
    return this.#askAny<number[]>({ method: "tokenize", request });
  }

  /** Decoded by the least loaded worker, as countTokens. */
  detokenize(request: DetokenizeRequest): Promise<Detokenized> {
    return this.#askAny<Detokenized>({ method: "detokenize", request });
  }

  /** Asks the least loaded of this pool's workers, else of the model's others (a tokenization, not a request). */
  #askAny<T>(question: EngineQuestion): Promise<T> {
    const own = this.#candidates();
    const link = leastLoaded(own.length > 0 ? own : this.cluster.otherLinks().filter((other) => !other.closed), this.random);
    if (!link) return Promise.reject(new EngineError("internal", this.#noWorker()));
    return link.ask<T>(this.modelKey, question);
  }

  /** The prompt's leading full blocks as chain hashes, when the model's tokenizer and block size are known. */
  #prefixHashes(request: EngineRequest): { hashes: string[]; promptTokens: number; blockSize: number } | undefined {
    const blockSize = this.#candidates().map((link) => link.blockSize(this.modelKey)).find((size) => size !== undefined);
    const prompt = blockSize === undefined ? undefined : this.cluster.prefixHashes(request, blockSize);
    return prompt && blockSize !== undefined ? { ...prompt, blockSize } : undefined;
  }

  /** The worker a fork group's earlier members went to, while it is among `candidates`. */
  #forkRoute(fork: EngineRequest["fork"], candidates: readonly WorkerLink[]): WorkerLink | undefined {
    const route = fork ? this.#forkRoutes.get(fork.group) : undefined;
    return route && candidates.includes(route.link) ? route.link : undefined;
  }

  /** Records that a member of `fork` went to `link`. */
  #routedFork(fork: NonNullable<EngineRequest["fork"]>, link: WorkerLink): void {
    const route = this.#forkRoutes.get(fork.group) ?? { link, routed: 0 };
    route.link = link;
    if (++route.routed >= fork.size) {
      this.#forkRoutes.delete(fork.group);
      return;
    }
    this.#forkRoutes.set(fork.group, route);
    if (this.#forkRoutes.size > MAX_FORK_ROUTES) this.#forkRoutes.delete(this.#forkRoutes.keys().next().value!);
  }

  /**
   * The worker for a request among `links`: its affinity key's worker while that one has room (affinity.ts; not under
   * round-robin, a baseline for comparison), else by the cluster's policy (routing.ts); counted in `routing`.
   */
  #route(links: WorkerLink[], prompt: { hashes: string[]; promptTokens: number; blockSize: number } | undefined, affinityKey?: string): WorkerLink | undefined {
    const hashes = prompt?.hashes;
    const candidates = links.map((link) => ({ link, load: link.load, capacity: link.capacity, recent: this.#recent.routedTo(link), cachedBlocks: hashes ? link.cachedBlocks(this.modelKey, hashes) : 0 }));
    if (candidates.length === 0) return undefined;
    const policy = this.cluster.policy;
    const commonBlocks = hashes ? this.#recent.commonBlocks(hashes) : 0;
    const options = { blockSize: prompt?.blockSize ?? 1, promptTokens: prompt?.promptTokens ?? 0, meanOutputTokens: this.#meanOutput, fixedMargin: this.cluster.loadMargin, commonBlocks };
    const pinnedLink = affinityKey !== undefined && policy !== "round-robin" ? this.#affinity.get(affinityKey) : undefined;
    const pinned = candidates.find((candidate) => candidate.link === pinnedLink);
    const chosen = pinned && keepsAffinity(pinned, candidates) ? pinned
      : policy === "cache-aware" ? cacheAware(candidates, options, this.random)!
      : policy === "least-load" ? leastLoaded(candidates, this.random)!
      : candidates[this.#turn++ % candidates.length]!;
    const best = Math.max(...candidates.map((candidate) => candidate.cachedBlocks));
    const counters = this.routing;
    counters.requests++;
    if (best > 0 && chosen.cachedBlocks === best) counters.toCachedPrefix++;
    if (best > 0 && chosen.cachedBlocks < best) counters.awayFromCachedPrefix++;
    counters.cachedBlocksChosen += chosen.cachedBlocks;
    counters.cachedBlocksBest += best;
    counters.promptBlocks += hashes?.length ?? 0;
    this.#recent.record(hashes ?? [], chosen.link);
    if (affinityKey !== undefined && policy !== "round-robin") this.#affinity.set(affinityKey, chosen.link);
    return chosen.link;
  }

  #noWorker(): string {
    return `no worker${this.pool === "default" ? "" : ` of the pool '${this.pool}'`} serving this model is connected to the gateway`;
  }

  #candidates(): WorkerLink[] {
    return [...this.#links].filter((link) => !link.closed);
  }
}

/** Several engines' stats as one: counts summed, hit rates over the summed lookups. */
export function sumStats(all: readonly EngineStats[]): EngineStats {
  const total: EngineStats = {
    running: 0,
    waiting: 0,
    kvBlocks: { total: 0, used: 0, cached: 0, free: 0, blockSize: all[0]?.kvBlocks.blockSize ?? 0 },
    cache: { lookups: 0, prefixHits: 0, sectionHits: 0, prefixHitRate: 0, sectionHitRate: 0, prefixTokenRate: 0, sectionTokenRate: 0 },
    requests: { finished: 0, aborted: 0, failed: 0, preemptions: 0 },
    tokens: { prompt: 0, computedPrompt: 0, generated: 0, forkedPrompt: 0 },
  };
  let prefixTokens = 0;
  let sectionTokens = 0;
  for (const stats of all) {
    total.running += stats.running;
    total.waiting += stats.waiting;
    for (const key of ["total", "used", "cached", "free"] as const) total.kvBlocks[key] += stats.kvBlocks[key];
    total.cache.lookups += stats.cache.lookups;
    total.cache.prefixHits += stats.cache.prefixHits;
    total.cache.sectionHits += stats.cache.sectionHits;
    prefixTokens += stats.cache.prefixTokenRate * stats.tokens.prompt;
    sectionTokens += stats.cache.sectionTokenRate * stats.tokens.prompt;
    for (const key of ["finished", "aborted", "failed", "preemptions"] as const) total.requests[key] += stats.requests[key];
    for (const key of ["prompt", "computedPrompt", "generated", "forkedPrompt"] as const) total.tokens[key] += stats.tokens[key];
  }
  const { lookups } = total.cache;
  total.cache.prefixHitRate = lookups > 0 ? total.cache.prefixHits / lookups : 0;
  total.cache.sectionHitRate = lookups > 0 ? total.cache.sectionHits / lookups : 0;
  total.cache.prefixTokenRate = total.tokens.prompt > 0 ? prefixTokens / total.tokens.prompt : 0;
  total.cache.sectionTokenRate = total.tokens.prompt > 0 ? sectionTokens / total.tokens.prompt : 0;
  return total;
}

/**
 * The error a request the lost worker had admitted ends with. The client is told the loss in loom's words; the
 * worker's address and the socket's words are the operator's, in the one line the server logs for the request.
 */
export function lostWorkerError(pool: string, cause: Error): EngineError {
  const message = `the worker running this request was lost${cause instanceof WorkerLinkLostError ? `: ${cause.reason}` : ""}`;
  return oneLineError(message, cause, `a worker of the pool '${pool}': ${cause.message.replaceAll("\n", " ")}`);
}

/**
 * An error of the cluster (a worker lost, none left) whose "stack", which the server's log prints for a failed
 * request, is one line: its message and `detail` for the operator. Where it was made says nothing, and a stack
 * trace per cut stream buried the log when a worker with many streams went away.
 */
function oneLineError(message: string, cause?: Error, detail?: string): EngineError {
  const error = new EngineError("internal", message, undefined, cause === undefined ? undefined : { cause });
  error.stack = `${error.name}: ${error.message}${detail === undefined ? "" : ` (${detail})`}`;
  return error;
}
