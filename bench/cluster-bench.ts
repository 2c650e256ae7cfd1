// Shared by the cluster benchmarks (gateway-overhead, cache-routing, cluster-scaling): the platform a bench's
// gateways run on (a PostgreSQL schema of its own through the URL's `options=-c search_path=...`, one organization
// with raised limits and one inference key, Redis keys under prefixes of the run's own, all removed by close()),
// `loom worker` and `loom gateway` processes started from the compiled CLI as operators run them, and what the bench
// reads back from them: each worker's GET /health and the gateway's /metrics.
import type { ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { openDatabase } from "../server/platform/db/open-database.js";
import type { Database } from "../server/platform/contract.js";
import { deleteKeys, inspectionClient, TEST_REDIS_URL } from "../server/platform/limits/testing/redis.js";
import { type PlatformStores, createPlatformStores } from "../server/platform/store/platform-stores.js";
import { dropSchema, schemaUrl, TEST_POSTGRES_URL } from "../server/platform/testing/test-databases.js";
import { type LoomProcess, startLoom, stopChild } from "../server/testing/loom-process.js";
import type { RoutingCounters } from "../server/cluster/routing.js";
import { ensureTestModel } from "../scripts/test-models.js";
import { type ModelDtype, parseModelDtype } from "../scripts/model-dtypes.js";
import { PRESET_NAMES, TINY_PRESET_NAMES } from "../scripts/model-presets.js";
import { benchModelPath } from "./bench-models.js";

/** The random-weights SmolLM2-135M Q8_0 bench model. */
export const DEFAULT_MODEL = "smollm2-135m:q8_0";
/** Limits high enough that the bench never meets them (the buckets are still reserved and corrected). */
export const RAISED_LIMITS = { requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000_000, tokensPerDay: 1_000_000_000_000 };
/** Requests per minute only, so admission counts no prompt tokens. */
export const REQUEST_LIMITS_ONLY = { requestsPerMinute: 1_000_000_000, tokensPerMinute: null, tokensPerDay: null };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops a child with SIGTERM (a gateway commits its usage, a worker unpublishes itself as it exits), SIGKILL if it takes over 10 s. */
export const stop = stopChild;

/** The sum of `values`. */
export const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** `x` with `digits` decimals, or "n/a" when it is not finite. */
export const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");

/** The chat-completions slug `base` lists, once it lists one (a gateway: once it has connected to a worker). */
export async function servedSlug(base: string, key: string, describe: () => string): Promise<string> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const response = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
    if (response?.ok) {
      const listing = (await response.json()) as { data: Array<{ id: string }> };
      const slug = listing.data.map((entry) => entry.id).find((id) => id.startsWith("service/tim-"));
      if (slug !== undefined) return slug;
    }
    if (performance.now() > deadline) throw new Error(`${base} listed no chat model within 60 s: ${describe()}`);
    await sleep(50);
  }
}

/** The model file for `preset:dtype`: a tiny preset's cached test model, else the bench model (generated if missing). */
export async function modelFile(spec: string): Promise<{ path: string; preset: string; dtype: ModelDtype }> {
  const [preset, dtypeText, extra] = spec.split(":");
  if (!preset || !dtypeText || extra !== undefined) throw new RangeError(`--model must be preset:dtype, e.g. ${DEFAULT_MODEL} or tiny-qwen3:q8_0; got ${spec}`);
  if (!PRESET_NAMES.includes(preset)) throw new RangeError(`--model: no preset ${preset}; presets: ${PRESET_NAMES.join(", ")}`);
  const dtype = parseModelDtype(dtypeText);
  const path = TINY_PRESET_NAMES.includes(preset) ? await ensureTestModel(preset, "gguf", dtype) : await benchModelPath(preset, dtype);
  return { path, preset, dtype };
}

/** A bench's platform: what its gateways (and `loom serve`) run on. */
export interface BenchPlatform {
  databaseUrl: string;
  redisUrl: string;
  schema: string;
  /** The platform's PostgreSQL URL with the schema in its options. */
  schemaUrl: string;
  database: Database;
  stores: PlatformStores;
  organizationId: string;
  key: string;
  /** Every Redis key of the run starts with this (cluster records and limits below it). */
  prefix: string;
  clusterPrefix: string;
  limitsPrefix: string;
  /** The environment of every loom process: the inherited one without LOOM_* settings that would override the flags, the cluster token and the key prefixes. */
  env: NodeJS.ProcessEnv;
  postgresVersion: string;
  redisVersion: string;
  /** `env` with a cluster key prefix of its own under clusterPrefix: a cluster that cannot see another run's worker records. */
  envFor(tag: string): NodeJS.ProcessEnv;
  /** One line for a bench's header. */
  describe(): string;
  /** Closes the database, drops the schema and deletes the run's Redis keys (the bench stops its processes first). */
  close(): Promise<void>;
}

/** Creates the platform: a fresh schema, one organization with `limits`, one inference key, fresh Redis prefixes. */
export async function openBenchPlatform(options: {
  bench: string;
  databaseUrl?: string;
  redisUrl?: string;
  limits: typeof RAISED_LIMITS | typeof REQUEST_LIMITS_ONLY;
}): Promise<BenchPlatform> {
  const databaseUrl = options.databaseUrl ?? TEST_POSTGRES_URL;
  if (databaseUrl === undefined) throw new Error("no PostgreSQL at 127.0.0.1:5432 (database test) answered; pass --database-url");
  const redisUrl = options.redisUrl ?? TEST_REDIS_URL;
  const schema = `loom_bench_${randomBytes(6).toString("hex")}`;
  const prefix = `loom-bench:${options.bench}:${randomUUID()}:`;
  const clusterPrefix = `${prefix}cluster:`;
  const limitsPrefix = `${prefix}limits:`;
  const database = await openDatabase({ url: databaseUrl, schema, poolSize: 2 });
  const close = async () => {
    await database.close().catch(() => undefined);
    await dropSchema(databaseUrl, schema).catch((error: unknown) => console.error(`cleanup: dropping schema ${schema}: ${(error as Error).message}`));
    await deleteKeys(clusterPrefix, redisUrl).catch(() => undefined);
    await deleteKeys(limitsPrefix, redisUrl).catch(() => undefined);
  };
  try {
    const stores = createPlatformStores(database);
    const organization = await stores.organizations.create(`${options.bench} bench`, options.limits);
    const { key } = await stores.keys.create(organization.id, "inference", "bench");
    const [{ server_version: postgresVersion }] = await database.query<{ server_version: string }>("SHOW server_version");
    const redis = inspectionClient(redisUrl);
    const redisVersion = await redis.info("server").then((info) => /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown").finally(() => redis.disconnect());
    const { LOOM_DATABASE_URL, LOOM_REDIS_URL, LOOM_API_KEYS, LOOM_MODEL, ...inherited } = process.env;
    const env = { ...inherited, LOOM_CLUSTER_TOKEN: randomBytes(24).toString("hex"), LOOM_CLUSTER_KEY_PREFIX: clusterPrefix, LOOM_REDIS_KEY_PREFIX: limitsPrefix };
    return {
      databaseUrl, redisUrl, schema, database, stores, organizationId: organization.id, key, prefix, clusterPrefix, limitsPrefix, env, postgresVersion, redisVersion,
      schemaUrl: schemaUrl(databaseUrl, schema),
      envFor: (tag) => ({ ...env, LOOM_CLUSTER_KEY_PREFIX: `${clusterPrefix}${tag}:` }),
      describe: () => `PostgreSQL ${postgresVersion} (${databaseUrl.replace(/\/\/[^@/]*@/, "//")}, schema ${schema}, dropped after), Redis ${redisVersion} (${redisUrl})`,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A gateway in front of its workers. */
export interface Cluster {
  gateway: LoomProcess;
  workers: LoomProcess[];
  /** The gateway's base URL. */
  base: string;
  /** The chat-completions slug the gateway lists. */
  slug: string;
  /** Every process's stderr, for errors. */
  describe(): string;
}

/**
 * Starts `workers` workers (`loom worker --model <file> --register <redis> --port 0 ...workerArgs`), all at once,
 * then one gateway (`loom gateway --database-url <schema URL> --redis-url <redis> --port 0 ...gatewayArgs`). A worker
 * prints its port once its record is in Redis, and a gateway connects to every worker published when it starts
 * before it listens: every worker is in the gateway's routing table from its first request. `env` (default
 * platform.env) names the cluster's Redis prefix; `children` collects the processes for the bench's cleanup.
 */
export async function startCluster(options: {
  platform: BenchPlatform;
  modelPath: string;
  workers: number;
  workerArgs: readonly string[];
  gatewayArgs?: readonly string[];
  env?: NodeJS.ProcessEnv;
  children: ChildProcess[];
}): Promise<Cluster> {
  const { platform, children } = options;
  const env = options.env ?? platform.env;
  const started: Array<{ role: string; process: LoomProcess }> = [];
  const describe = () => started.map(({ role, process }) => `${role} stderr ends: ${process.stderr().slice(-800)}`).join("\n");
  try {
    const workers = await Promise.all(Array.from({ length: options.workers }, async (_, i) => {
      const worker = await startLoom("worker", ["--model", options.modelPath, "--register", platform.redisUrl, "--port", "0", ...options.workerArgs], { env, children });
      started.push({ role: `worker ${i + 1}`, process: worker });
      return worker;
    }));
    const gateway = await startLoom("gateway", ["--database-url", platform.schemaUrl, "--redis-url", platform.redisUrl, "--port", "0", ...(options.gatewayArgs ?? [])], { env, children });
    started.unshift({ role: "gateway", process: gateway });
    const slug = await servedSlug(gateway.base, platform.key, describe);
    return { gateway, workers, base: gateway.base, slug, describe };
  } catch (error) {
    await Promise.all(started.map(({ process }) => stop(process.child)));
    throw error;
  }
}

/** Stops a cluster: the gateway first (it commits its usage), then the workers. */
export async function stopCluster(cluster: Cluster): Promise<void> {
  await stop(cluster.gateway.child);
  await Promise.all(cluster.workers.map((worker) => stop(worker.child)));
}

/** A worker's GET /health. */
export interface WorkerHealth {
  status: string;
  worker: string;
  inFlight: number;
  /** Requests submitted to it since it started, from every gateway. */
  submitted: number;
}

export async function workerHealth(worker: LoomProcess): Promise<WorkerHealth> {
  const response = await fetch(`${worker.base}/health`);
  if (!response.ok) throw new Error(`GET ${worker.base}/health: HTTP ${response.status}`);
  return (await response.json()) as WorkerHealth;
}

/** Requests submitted to each worker so far (GET /health). */
export function submittedCounts(cluster: Cluster): Promise<number[]> {
  return Promise.all(cluster.workers.map(async (worker) => (await workerHealth(worker)).submitted));
}

/** The gateway's /metrics: each sample's value summed over its labels (every model), by metric name. */
export async function gatewayMetrics(cluster: Cluster): Promise<Map<string, number>> {
  const response = await fetch(`${cluster.base}/metrics`);
  if (!response.ok) throw new Error(`GET ${cluster.base}/metrics: HTTP ${response.status}`);
  const values = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (match) values.set(match[1], (values.get(match[1]) ?? 0) + Number(match[2]));
  }
  return values;
}

/** The gateway's routing counters (loom_routed_*_total, every model). */
export async function routingCounters(cluster: Cluster): Promise<RoutingCounters> {
  const metrics = await gatewayMetrics(cluster);
  const read = (name: string) => {
    const value = metrics.get(name);
    if (value === undefined) throw new Error(`the gateway's /metrics has no ${name}`);
    return value;
  };
  return {
    requests: read("loom_routed_requests_total"),
    toCachedPrefix: read("loom_routed_to_cached_prefix_total"),
    awayFromCachedPrefix: read("loom_routed_away_from_cached_prefix_total"),
    promptBlocks: read("loom_routed_prompt_blocks_total"),
    cachedBlocksChosen: read("loom_routed_cached_blocks_chosen_total"),
    cachedBlocksBest: read("loom_routed_cached_blocks_best_total"),
  };
}

/** `after - before`, counter by counter. */
export function countersSince(after: RoutingCounters, before: RoutingCounters): RoutingCounters {
  return Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - before[name as keyof RoutingCounters]])) as unknown as RoutingCounters;
}
