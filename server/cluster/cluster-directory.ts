// A gateway's view of the cluster: it reads the live workers from Redis every poll, keeps one connection to each
// worker, and keeps the model registry equal to what they serve: per model, one ClusterEngine per pool (the shared
// pool "default" serves organizations without a pool of their own).
// A worker whose record expires, or whose connection drops, leaves the routing table at once; a worker still
// published after its connection dropped is reconnected at the next poll. A worker whose record says it is draining
// (stopping gracefully) leaves the routing table, but its connection stays for the requests it is running.
import type { ModelRegistry, ServedModel } from "../models.js";
import { chainHashes } from "../../engine/kv/block-hash.js";
import { PromptCounter, type PromptModelSource } from "../../engine/prompt-counter.js";
import type { EngineRequest } from "../../engine/request.js";
import { ClusterEngine, type ClusterShared } from "./cluster-engine.js";
import { type RoutingPolicy, sumRouting } from "./routing.js";
import { type WorkerDescription, type WorkerModel, modelKey } from "./frames.js";
import { WorkerLink } from "./worker-link.js";
import type { WorkerRecord, WorkerRegistry } from "./worker-registry.js";

/** One model across the cluster: its registry entry and its engine in each pool. */
interface ClusterModel {
  served: ServedModel;
  pools: Map<string, ClusterEngine>;
  engineOf(pool: string): ClusterEngine;
}

/** What a gateway's directory needs. */
export interface ClusterDirectoryOptions {
  workers: WorkerRegistry;
  /** The cluster token workers demand. */
  token: string;
  /** How often Redis is read (default 250 ms: a lapsed heartbeat is noticed well within two beats). */
  pollMs?: number;
  /** A fixed number of requests in flight the holder of a prompt's cached prefix may have beyond the least loaded worker (default: derived, see routing.ts). */
  cacheLoadMargin?: number;
  /** How workers are picked (default cache-aware). */
  routing?: RoutingPolicy;
  /** Kept equal to what the connected workers serve. */
  models: ModelRegistry;
  log?: (message: string) => void;
}

/** The workers a gateway routes to. */
export class ClusterDirectory {
  readonly #links = new Map<string, WorkerLink>();
  /** Every model some worker has served since the gateway started, by modelKey. */
  readonly #models = new Map<string, ClusterModel>();
  readonly #log: (message: string) => void;
  /** Workers that could not be reached: when to try again (doubling from 500 ms to 30 s), and the failures so far. */
  readonly #retry = new Map<string, { at: number; failures: number }>();
  /** Links to draining workers: routed no new request, kept until the worker closes them or its record goes. */
  readonly #draining = new WeakSet<WorkerLink>();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<Array<Promise<void>>> | undefined;
  #closed = false;

  constructor(private readonly options: ClusterDirectoryOptions) {
    this.#log = options.log ?? ((message) => process.stderr.write(`loom gateway: ${message}\n`));
  }

  /** Reads the workers and connects to them (resolves once each answered or failed), then polls on. */
  async start(): Promise<void> {
    await Promise.all(await this.poll());
    this.#timer = setInterval(() => void this.poll(), this.options.pollMs ?? 250);
  }

  /** Connected workers, by id. */
  get workers(): ReadonlyMap<string, WorkerLink> {
    return this.#links;
  }

  /**
   * One poll: drop the workers whose records expired and start connecting to new ones; resolves, once Redis has
   * answered, with the connections under way (a slow one must not hold up the next poll). Polls never overlap.
   */
  poll(): Promise<Array<Promise<void>>> {
    this.#polling ??= this.#poll().finally(() => { this.#polling = undefined; });
    return this.#polling;
  }

  async #poll(): Promise<Array<Promise<void>>> {
    let records: WorkerRecord[];
    try {
      records = await this.options.workers.live((id, reason) => this.#log(`skipping worker ${id}: its record is malformed (${reason})`));
    } catch (error) {
      this.#log(`cannot read the workers from Redis: ${(error as Error).message}`);
      return [];
    }
    if (this.#closed) return [];
    const live = new Map(records.map((record) => [record.id, record]));
    for (const [id, link] of this.#links) {
      const record = live.get(id);
      if (record?.url !== link.url) link.close(this.#draining.has(link) ? "it stopped" : "its heartbeat lapsed");
      else if (record.draining) this.#drain(id, link);
    }
    const now = Date.now();
    for (const id of this.#retry.keys()) if (!live.has(id)) this.#retry.delete(id);
    const due = [...live.values()].filter((record) => !record.draining && !this.#links.has(record.id) && (this.#retry.get(record.id)?.at ?? 0) <= now);
    return due.map((record) => this.#connect(record));
  }

  async #connect(record: WorkerRecord): Promise<void> {
    const link = new WorkerLink(record.url, this.options.token, (closed, error) => this.#lost(record.id, closed, error), (key, source) => this.#promptModel(key, source));
    this.#links.set(record.id, link);
    let description: WorkerDescription;
    try {
      description = await link.ready;
    } catch (error) {
      const failures = (this.#retry.get(record.id)?.failures ?? 0) + 1;
      const delay = Math.min(30_000, 500 * 2 ** (failures - 1));
      this.#retry.set(record.id, { at: Date.now() + delay, failures });
      this.#log(`worker ${record.id} at ${record.url}: ${(error as Error).message} (trying again in ${delay / 1000} s)`);
      return;
    }
    this.#retry.delete(record.id);
    if (link.closed || this.#closed || this.#draining.has(link)) return;
    for (const model of description.models) {
      this.#model(model).engineOf(description.pool).add(link);
      // Its tokenizer may have arrived with the hello, before the model's entry existed.
      const source = link.promptSource(modelKey(model));
      if (source) this.#promptModel(modelKey(model), source);
    }
    this.#publishModels();
  }

  /** The model's entry, made on first sight. */
  #model(model: WorkerModel): ClusterModel {
    const key = modelKey(model);
    let entry = this.#models.get(key);
    if (!entry) {
      const pools = new Map<string, ClusterEngine>();
      const served: ServedModel = { model: model.model, engine: undefined as never, slugs: model.slugs, created: Math.floor(Date.now() / 1000) };
      const shared: ClusterShared = {
        otherLinks: () => [...pools.values()].flatMap((engine) => engine.links),
        prefixHashes: (request, blockSize) => prefixHashes(served, request, blockSize),
        loadMargin: this.options.cacheLoadMargin,
        policy: this.options.routing ?? "cache-aware",
      };
      const engineOf = (pool: string) => {
        let engine = pools.get(pool);
        if (!engine) pools.set(pool, (engine = new ClusterEngine(key, pool, shared)));
        return engine;
      };
      served.engine = engineOf("default");
      served.poolEngine = engineOf;
      served.routing = () => sumRouting([...pools.values()].map((engine) => engine.routing));
      entry = { served, pools, engineOf };
      this.#models.set(key, entry);
    }
    return entry;
  }

  /** A worker's tokenizer for a model: the gateway counts and hashes that model's prompts from now on. */
  #promptModel(key: string, source: PromptModelSource): void {
    const entry = this.#models.get(key);
    if (!entry || entry.served.promptCounter) return;
    try {
      entry.served.promptCounter = PromptCounter.fromSource(source);
    } catch (error) {
      this.#log(`the tokenizer a worker sent for ${key} is unusable (routing by load only): ${(error as Error).message}`);
    }
  }

  #lost(id: string, link: WorkerLink, error: Error): void {
    if (this.#links.get(id) === link) this.#links.delete(id);
    this.#unroute(link);
    if (!this.#closed && link.description) this.#log(`worker ${id} left: ${error.message}`);
  }

  /** A worker stopping gracefully: no new request goes to it; those it runs finish on its connection. */
  #drain(id: string, link: WorkerLink): void {
    if (this.#draining.has(link)) return;
    this.#draining.add(link);
    this.#unroute(link);
    this.#log(`worker ${id} is stopping: routing no new requests to it (${link.ownRequests} of this gateway's still running there)`);
  }

  #unroute(link: WorkerLink): void {
    for (const model of this.#models.values()) for (const engine of model.pools.values()) engine.remove(link);
  }

  /**
   * Serves every model some worker has served since the gateway started: a model whose workers are all gone stays
   * listed and answers 503 / 529 until one comes back, rather than 404 as if it never existed.
   */
  #publishModels(): void {
    try {
      this.options.models.replace([...this.#models.values()].map((model) => model.served));
    } catch (error) {
      this.#log(`the workers' models conflict, keeping the previous set: ${(error as Error).message}`);
    }
  }

  /** Stops polling and closes every connection (their requests end with errors). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#polling;
    for (const link of this.#links.values()) link.close("gateway stopping");
    this.#links.clear();
  }
}

/** A request's prompt as chain hashes, or undefined when the model's tokenizer has not arrived or the prompt is invalid. */
function prefixHashes(served: ServedModel, request: EngineRequest, blockSize: number): { hashes: string[]; promptTokens: number } | undefined {
  if (!served.promptCounter) return undefined;
  try {
    const tokens = served.promptCounter.tokens(request, served.model.contextSize);
    return { hashes: chainHashes(tokens, blockSize), promptTokens: tokens.length };
  } catch {
    return undefined; // the worker reports what is wrong with it
  }
}
