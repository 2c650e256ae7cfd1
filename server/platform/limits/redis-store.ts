// The limit store shared by every loom process: counters in Redis, each reserve checked and taken by one Lua script
// (redis-script.ts) on the server's clock. Fails fast: a Redis that cannot be reached or does not answer within the
// timeout is a LimitStoreUnavailableError, never a hang, and the caller chooses fail-closed or fail-open.
import { Redis } from "ioredis";
import { type LimitBucket, type LimitStore, LimitStoreUnavailableError, type ReserveResult } from "../contract.js";
import { checkAdjustments, checkReserve, storedKey } from "./buckets.js";
import { DAILY_SLACK_MS, nextUtcMidnightMs } from "./daily.js";
import { type BucketCounter, reserveResult } from "./outcome.js";
import { LIMIT_SCRIPT } from "./redis-script.js";
import { SeedReads } from "./seeds.js";

/** Where and how a {@link RedisLimitStore} reaches Redis. */
export interface RedisLimitStoreOptions {
  /** `redis://[user:password@]host:port[/db]`; default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Prepended to every counter's name; default `loom:limits:`. Processes that share limits share the prefix. */
  keyPrefix?: string;
  /** The longest a call waits for a connection or for one command's answer, in ms; default 500. */
  timeoutMs?: number;
}

/** The default {@link RedisLimitStoreOptions.keyPrefix}. */
export const DEFAULT_LIMIT_KEY_PREFIX = "loom:limits:";

type ScriptReply = Array<string | number>;
type LimitScriptClient = Redis & { loomLimits(numberOfKeys: number, ...keysAndArguments: Array<string | number>): Promise<ScriptReply> };

/**
 * Limit counters in one Redis (a single server, or keys that hash to one slot: the script touches several keys),
 * shared by every process that uses the same URL and prefix. Window buckets are timed by Redis's own clock (TIME),
 * not the `nowMs` callers pass, so processes whose clocks disagree still share one window; daily buckets count the
 * day named in the bucket, and their `resetMs` is measured on the same Redis clock. Idle counters expire: a window's
 * when its bucket is full again (PEXPIRE), a day's an hour after the day ends (EXPIREAT).
 */
export class RedisLimitStore implements LimitStore {
  /** The prefix of every counter this store writes. */
  readonly keyPrefix: string;
  private readonly client: LimitScriptClient;
  private readonly timeoutMs: number;
  private readonly where: string;
  private readonly seeds = new SeedReads();
  private lastError: Error | undefined;
  private connecting: Promise<void> | undefined;
  /** After a connection wait failed: until when callers are refused at once instead of each waiting again. */
  private downUntil = 0;
  private closed = false;

  constructor(options: RedisLimitStoreOptions = {}) {
    const url = options.url ?? "redis://127.0.0.1:6379";
    this.keyPrefix = options.keyPrefix ?? DEFAULT_LIMIT_KEY_PREFIX;
    this.timeoutMs = options.timeoutMs ?? 500;
    this.where = redisAddress(url);
    this.client = new Redis(url, {
      // Fail fast: no queue of commands waiting for a connection, no retries of a failed command, a bounded wait.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.timeoutMs,
      connectTimeout: this.timeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    }) as LimitScriptClient;
    this.client.on("error", (error: Error) => {
      this.lastError = error;
    });
    // EVALSHA, with EVAL once when the server does not have the script yet.
    this.client.defineCommand("loomLimits", { lua: LIMIT_SCRIPT });
  }

  /**
   * Takes every bucket's cost, or none, in one script run. A daily counter missing in Redis is seeded from `await
   * seed()` (read here, outside the script; the script writes it only if still absent, so processes racing to seed
   * one day keep the first value). `nowMs` is not used: Redis's clock is.
   * @throws LimitStoreUnavailableError when Redis cannot be reached or does not answer in time; RangeError on a
   * malformed bucket; whatever a seed throws.
   */
  async reserve(buckets: readonly LimitBucket[], _nowMs?: number): Promise<ReserveResult> {
    checkReserve(buckets);
    const keys = buckets.map((bucket) => this.keyPrefix + storedKey(bucket));
    const seeds = new Map<number, number>();
    // A second run has a seed for every counter the first found missing; a third is needed only if one expired between.
    for (let run = 0; run < 3; run++) {
      // Stryker disable next-line StringLiteral: the script takes any mode but "adjust" as a reserve
      const reply = await this.run("reserve", keys, buckets.map((bucket, index) => bucketArguments(bucket, bucket.cost, seeds.get(index))));
      if (reply[0] === "seed") {
        await Promise.all(
          reply.slice(1).map(async (position) => {
            const index = Number(position) - 1;
            const bucket = buckets[index]!;
            if (bucket.kind === "daily") seeds.set(index, await this.seeds.read(keys[index]!, bucket.seed));
          }),
        );
        continue;
      }
      const counters: BucketCounter[] = buckets.map((_, index) => ({ value: Number(reply[2 + 2 * index]), fits: Number(reply[3 + 2 * index]) === 1 }));
      return reserveResult(buckets, counters, Number(reply[1]));
    }
    throw new LimitStoreUnavailableError(`Redis limit store at ${this.where}: daily counters kept disappearing while being seeded`);
  }

  /**
   * Moves counters by `delta` units each in one script run, never refused (see LimitStore.adjust). A day's counter
   * Redis no longer holds is left alone: the usage table, read by the next seed, already counts the request.
   * @throws LimitStoreUnavailableError when Redis cannot be reached or does not answer in time.
   */
  async adjust(adjustments: ReadonlyArray<{ bucket: LimitBucket; delta: number }>, _nowMs?: number): Promise<void> {
    checkAdjustments(adjustments);
    if (adjustments.length === 0) return;
    const keys = adjustments.map(({ bucket }) => this.keyPrefix + storedKey(bucket));
    await this.run("adjust", keys, adjustments.map(({ bucket, delta }) => bucketArguments(bucket, delta, undefined)));
  }

  /** Closes the connection (QUIT when connected); later calls throw LimitStoreUnavailableError. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.client.status === "ready") await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }

  private async run(mode: "reserve" | "adjust", keys: string[], perBucket: Array<Array<string | number>>): Promise<ScriptReply> {
    await this.connected();
    try {
      return await this.client.loomLimits(keys.length, ...keys, mode, ...perBucket.flat());
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /** Resolves once the connection is ready; rejects after `timeoutMs` otherwise. Concurrent callers share one wait. */
  private connected(): Promise<void> {
    if (this.closed) return Promise.reject(new LimitStoreUnavailableError(`Redis limit store at ${this.where} is closed`));
    if (this.client.status === "ready") return Promise.resolve();
    // Redis was just found down: refuse at once (ioredis keeps reconnecting in the background) rather than making every
    // request wait out its own timeout.
    if (Date.now() < this.downUntil) return Promise.reject(this.unavailable(this.lastError ?? new Error("no connection")));
    this.connecting ??= new Promise<void>((resolve, reject) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.client.off("ready", onReady);
        this.downUntil = Date.now() + this.timeoutMs;
        reject(this.unavailable(this.lastError ?? new Error(`no connection within ${this.timeoutMs} ms (status ${this.client.status})`)));
      }, this.timeoutMs);
      this.client.once("ready", onReady);
      // Never true today: the client connects at construction and retries forever, and close() refuses first.
      // Stryker disable next-line all: a guard, unreachable while those options stand
      if (this.client.status === "wait" || this.client.status === "end") this.client.connect().catch(() => undefined);
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private unavailable(error: unknown): LimitStoreUnavailableError {
    // Stryker disable next-line ConditionalExpression: no caller passes one today; a guard against wrapping one twice
    if (error instanceof LimitStoreUnavailableError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    return new LimitStoreUnavailableError(`Redis limit store at ${this.where} unavailable: ${reason}`, { cause: error });
  }
}

/** The script's five arguments for one bucket (see redis-script.ts). */
function bucketArguments(bucket: LimitBucket, amount: number, seed: number | undefined): Array<string | number> {
  const scale = bucket.kind === "window" ? bucket.windowMs : Math.ceil((nextUtcMidnightMs(bucket.day) + DAILY_SLACK_MS) / 1000);
  return [bucket.kind, String(bucket.limit), String(scale), String(amount), seed === undefined ? "" : String(seed)];
}

/** host:port of a Redis URL, without credentials, for error messages and banners. */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "6379"}`;
  } catch {
    return "(unparsable URL)";
  }
}
