// A gateway's view of the cluster: it reads the live workers from Redis every poll, keeps one connection to each
// worker of its pool, and keeps the model registry equal to what those workers serve (one ClusterEngine per model).
// A worker whose record expires, or whose connection drops, leaves the routing table at once; a worker still
// published after its connection dropped is reconnected at the next poll.
import type { ModelRegistry, ServedModel } from "../models.js";
import { ClusterEngine } from "./cluster-engine.js";
import { type WorkerDescription, modelKey } from "./frames.js";
import { WorkerLink } from "./worker-link.js";
import type { WorkerRecord, WorkerRegistry } from "./worker-registry.js";

/** What a gateway's directory needs. */
export interface ClusterDirectoryOptions {
  workers: WorkerRegistry;
  /** The cluster token workers demand. */
  token: string;
  /** The pool whose workers this gateway routes to (default "default"). */
  pool?: string;
  /** How often Redis is read (default 250 ms: a lapsed heartbeat is noticed well within two beats). */
  pollMs?: number;
  /** Kept equal to what the connected workers serve. */
  models: ModelRegistry;
  log?: (message: string) => void;
}

/** The workers a gateway routes to. */
export class ClusterDirectory {
  readonly #links = new Map<string, WorkerLink>();
  readonly #engines = new Map<string, { engine: ClusterEngine; served: ServedModel }>();
  readonly #pool: string;
  readonly #log: (message: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #closed = false;

  constructor(private readonly options: ClusterDirectoryOptions) {
    this.#pool = options.pool ?? "default";
    this.#log = options.log ?? ((message) => process.stderr.write(`loom gateway: ${message}\n`));
  }

  /** Reads the workers and connects to them (resolves once each answered or failed), then polls on. */
  async start(): Promise<void> {
    await this.poll();
    this.#timer = setInterval(() => void this.poll(), this.options.pollMs ?? 250);
  }

  /** Connected workers, by id. */
  get workers(): ReadonlyMap<string, WorkerLink> {
    return this.#links;
  }

  /** One poll: connect to new workers, drop the ones whose records expired. Polls never overlap. */
  poll(): Promise<void> {
    this.#polling ??= this.#poll().finally(() => { this.#polling = undefined; });
    return this.#polling;
  }

  async #poll(): Promise<void> {
    let records: WorkerRecord[];
    try {
      records = await this.options.workers.live((id, reason) => this.#log(`skipping worker ${id}: its record is malformed (${reason})`));
    } catch (error) {
      this.#log(`cannot read the workers from Redis: ${(error as Error).message}`);
      return;
    }
    if (this.#closed) return;
    const live = new Map(records.filter((record) => record.pool === this.#pool).map((record) => [record.id, record]));
    for (const [id, link] of this.#links) {
      if (live.get(id)?.url !== link.url) link.close("its heartbeat lapsed");
    }
    await Promise.all([...live.values()].filter((record) => !this.#links.has(record.id)).map((record) => this.#connect(record)));
  }

  async #connect(record: WorkerRecord): Promise<void> {
    const link = new WorkerLink(record.url, this.options.token, (closed, error) => this.#lost(record.id, closed, error));
    this.#links.set(record.id, link);
    let description: WorkerDescription;
    try {
      description = await link.ready;
    } catch (error) {
      this.#log(`worker ${record.id} at ${record.url}: ${(error as Error).message}`);
      return;
    }
    if (link.closed || this.#closed) return;
    for (const model of description.models) {
      const key = modelKey(model);
      let group = this.#engines.get(key);
      if (!group) {
        const engine = new ClusterEngine(key);
        group = { engine, served: { model: model.model, engine, slugs: model.slugs, created: Math.floor(Date.now() / 1000) } };
        this.#engines.set(key, group);
      }
      group.engine.add(link);
    }
    this.#publishModels();
  }

  #lost(id: string, link: WorkerLink, error: Error): void {
    if (this.#links.get(id) === link) this.#links.delete(id);
    for (const { engine } of this.#engines.values()) engine.remove(link);
    if (!this.#closed && link.description) this.#log(`worker ${id} left: ${error.message}`);
  }

  /**
   * Serves every model some worker has served since the gateway started: a model whose workers are all gone stays
   * listed and answers 503 / 529 until one comes back, rather than 404 as if it never existed.
   */
  #publishModels(): void {
    try {
      this.options.models.replace([...this.#engines.values()].map((group) => group.served));
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
