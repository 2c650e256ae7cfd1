// Where gateways find engine workers: each worker keeps a record in Redis (its URL, pool, models, load) under a key
// that expires unless its heartbeat renews it, and indexes its id in a sorted set. A worker that stops renewing
// (killed, hung, cut off) drops out when its key expires; gateways read the live records every poll.
import type { Redis } from "ioredis";
import type { WorkerDescription } from "./frames.js";

/** A worker as published. */
export interface WorkerRecord extends WorkerDescription {
  /** Where gateways connect: http://host:port (its /cluster WebSocket is ws://host:port/cluster). */
  url: string;
  /** How often it renews the record (its key lives two of these). */
  heartbeatMs: number;
  /** Requests in flight at the last heartbeat. */
  inFlight: number;
  /** KV cache blocks free as of the previous heartbeat (absent until first read). */
  kvBlocksFree?: number;
  /**
   * The prefix cache's summary as of the previous heartbeat: blocks in it (cached or in use). The chains themselves
   * go to gateways over the connection (a snapshot, then every change), not through Redis.
   */
  prefixCacheBlocks?: number;
  /**
   * The worker is stopping: gateways send it no new request, and let those it runs finish on their connection. It
   * removes its record once they have (a record that merely expires is a worker hung or cut off).
   */
  draining?: boolean;
}

/** The key prefix when none is configured (LOOM_CLUSTER_KEY_PREFIX): deployments sharing one Redis set their own. */
export const DEFAULT_CLUSTER_PREFIX = "loom:cluster:";
/** Index entries this long past their key's expiry are pruned (generous: worker and gateway clocks may differ). */
const PRUNE_AFTER_MS = 60_000;

/** The workers' records in one Redis. */
export class WorkerRegistry {
  constructor(private readonly redis: Redis, private readonly prefix = DEFAULT_CLUSTER_PREFIX) {}

  private keyOf(id: string): string {
    return `${this.prefix}worker:${id}`;
  }

  private get index(): string {
    return `${this.prefix}workers`;
  }

  /** Writes (or renews) a worker's record; it expires two heartbeats from now unless renewed. */
  async publish(record: WorkerRecord): Promise<void> {
    const ttl = 2 * record.heartbeatMs;
    await this.redis.multi().set(this.keyOf(record.id), JSON.stringify(record), "PX", ttl).zadd(this.index, Date.now() + ttl, record.id).exec();
  }

  /** Removes a worker's record at once (a worker stopping cleanly). */
  async remove(id: string): Promise<void> {
    await this.redis.multi().del(this.keyOf(id)).zrem(this.index, id).exec();
  }

  /** The records of every worker whose key has not expired; malformed records are skipped and reported. */
  async live(onMalformed: (id: string, reason: string) => void = () => undefined): Promise<WorkerRecord[]> {
    await this.redis.zremrangebyscore(this.index, "-inf", Date.now() - PRUNE_AFTER_MS);
    const ids = await this.redis.zrange(this.index, 0, -1);
    if (ids.length === 0) return [];
    const values = await this.redis.mget(ids.map((id) => this.keyOf(id)));
    const records: WorkerRecord[] = [];
    values.forEach((value, i) => {
      if (value === null) return; // expired: its heartbeat lapsed
      const reason = malformation(value);
      if (typeof reason === "string") onMalformed(ids[i]!, reason);
      else records.push(reason);
    });
    return records;
  }
}

/** The record in `text`, or why it is not one. */
function malformation(text: string): WorkerRecord | string {
  let record: Partial<WorkerRecord>;
  try {
    record = JSON.parse(text) as Partial<WorkerRecord>;
  } catch {
    return "not JSON";
  }
  if (typeof record !== "object" || record === null) return "not an object";
  if (typeof record.id !== "string" || record.id === "") return "no id";
  if (typeof record.url !== "string" || !/^https?:\/\//.test(record.url)) return `url ${JSON.stringify(record.url)} is not http(s)`;
  if (typeof record.pool !== "string") return "no pool";
  if (!Array.isArray(record.models)) return "no models";
  return record as WorkerRecord;
}

/** A worker's heartbeat. */
export interface Heartbeat {
  /** The first publication. */
  first: Promise<void>;
  /** Publishes the record now, for a change gateways must see before the next beat (draining); failures are reported. */
  renew(): Promise<void>;
  /** Stops the beats and removes the record. */
  stop(): Promise<void>;
}

/**
 * Publishes `record()` now and every heartbeat (the first record's) until stopped; a failed renewal is reported and
 * retried at the next beat (the record expires only after two missed beats).
 */
export function startHeartbeat(registry: WorkerRegistry, record: () => WorkerRecord, onError: (error: Error) => void): Heartbeat {
  const initial = record();
  const first = registry.publish(initial);
  const renew = () => registry.publish(record()).catch((error: unknown) => onError(error as Error));
  const timer = setInterval(() => void renew(), initial.heartbeatMs);
  return {
    first,
    renew,
    async stop() {
      clearInterval(timer);
      await registry.remove(initial.id).catch((error: unknown) => onError(error as Error));
    },
  };
}
