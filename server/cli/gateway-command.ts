// `loom gateway`: the front door of a cluster: both wire formats, the platform (keys, limits, usage), agent runs and
// machine endpoints, exactly as `loom serve` has them, with the models served by the engine workers it finds in
// Redis instead of models of its own. Several gateways run at once on the same PostgreSQL and Redis.
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { UsageError, parseInteger } from "../../engine/cli/arguments.js";
import { ClusterDirectory } from "../cluster/cluster-directory.js";
import { clusterWorkerLoad } from "../cluster/worker-load.js";
import { ROUTING_POLICIES, type RoutingPolicy } from "../cluster/routing.js";
import { DEFAULT_CLUSTER_PREFIX, WorkerRegistry } from "../cluster/worker-registry.js";
import { loadUws } from "../http/uws.js";
import { redisAddress } from "../platform/limits/redis-store.js";
import { ModelRegistry } from "../models.js";
import { recordThisProcess, recoverInstall } from "../release/install/this-process.js";
import { readServeConfig } from "./config.js";
import { platformOptionsOf, startService } from "./serve-command.js";
import { drainMsOf } from "./stop-signals.js";
import { clusterToken } from "./worker-command.js";

export const GATEWAY_USAGE = `Usage: loom gateway --database-url <url> --redis-url <url> [options]

  The platform and both wire formats in front of engine workers (loom worker) found in Redis. Requires
  LOOM_CLUSTER_TOKEN, the same on every gateway and worker.

  --database-url <url> the platform's PostgreSQL (or LOOM_DATABASE_URL); gateways sharing it share keys and usage
  --redis-url <url>    Redis (or LOOM_REDIS_URL): where workers are found, and the rate-limit counters gateways share
  --host <address>     address to listen on (default 127.0.0.1)
  --port N             port (default 8080; 0 = any free port)
  --cache-load-margin N  a request goes to the worker holding the longest cached prefix of its prompt unless
                       that worker has more than N requests in flight beyond the least loaded one (default: the
                       prompt tokens it saves divided by the mean output tokens per request)
  --routing <policy>   cache-aware (default), least-load, or round-robin (for comparison)
  --config <file>      as loom serve (limits, runs, payments; its models and apiKeys do not apply)
  --limits-fail-open   as loom serve
  --search-url <url>   as loom serve
  --drain-seconds N    as loom serve: on SIGTERM / SIGINT, how long the requests in flight may take to finish
                       (default 30; 0 = no wait)
  --install-dir <dir>  record this gateway there for loom update apply --rolling (default: the config's
                       updates.installDir; none: not recorded)
`;

/** The command's flags (deploy/checks.ts checks the Kubernetes manifests against them). */
export const GATEWAY_OPTIONS = {
  "database-url": { type: "string" }, "redis-url": { type: "string" }, host: { type: "string" }, port: { type: "string" }, "cache-load-margin": { type: "string" }, routing: { type: "string" },
  config: { type: "string" }, "limits-fail-open": { type: "boolean" }, "search-url": { type: "string" }, "drain-seconds": { type: "string" }, "install-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs `loom gateway`; resolves once it listens (it then runs until the process ends). */
export async function runGateway(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: GATEWAY_OPTIONS,
  });
  if (values.help) {
    process.stdout.write(GATEWAY_USAGE);
    return;
  }
  const databaseUrl = values["database-url"] ?? (process.env.LOOM_DATABASE_URL || undefined);
  const redisUrl = values["redis-url"] ?? (process.env.LOOM_REDIS_URL || undefined);
  if (databaseUrl === undefined) throw new UsageError("--database-url (or LOOM_DATABASE_URL) is required: gateways keep keys, limits and usage in one PostgreSQL");
  if (redisUrl === undefined) throw new UsageError("--redis-url (or LOOM_REDIS_URL) is required: it is where gateways find workers");
  const config = readServeConfig(values.config);
  if (config.models !== undefined || config.apiKeys !== undefined) throw new UsageError("--config: a gateway serves its workers' models with the platform's keys: drop the config's models and apiKeys");
  const platformOptions = platformOptionsOf({ "database-url": databaseUrl, "redis-url": redisUrl, "limits-fail-open": values["limits-fail-open"] });
  const token = clusterToken();
  const host = values.host ?? "127.0.0.1";
  const port = parseInteger("--port", values.port, 8080, 0);
  const cacheLoadMargin = values["cache-load-margin"] === undefined ? undefined : parseInteger("--cache-load-margin", values["cache-load-margin"], 0, 0);
  const routing = (values.routing ?? "cache-aware") as RoutingPolicy;
  if (!ROUTING_POLICIES.includes(routing)) throw new UsageError(`--routing must be ${ROUTING_POLICIES.join(", ")}, got ${JSON.stringify(values.routing?.slice(0, 40))}`);
  const searchUrl = values["search-url"] ?? config.runs?.searchUrl;
  const installDir = values["install-dir"] ?? config.updates?.installDir;
  const drainMs = drainMsOf(values["drain-seconds"]);
  await loadUws();
  if (installDir !== undefined) await recoverInstall(installDir);

  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on("error", () => undefined); // each poll reports its own failure
  await redis.connect();
  const registry = new ModelRegistry([]);
  const directory = new ClusterDirectory({ workers: new WorkerRegistry(redis, process.env.LOOM_CLUSTER_KEY_PREFIX || DEFAULT_CLUSTER_PREFIX), token, models: registry, cacheLoadMargin, routing });
  await directory.start();
  const service = await startService({
    config, registry, platformOptions, noAuth: false, keys: [], host, port, searchUrl, drainMs,
    workers: clusterWorkerLoad(directory),
    onClose: async () => {
      await directory.close();
      redis.disconnect();
    },
  });
  process.stderr.write(
    `loom gateway: on http://${host}:${service.server.port} (${service.authentication}; ${service.server.http}), workers from Redis at ${redisAddress(redisUrl)}: ` +
      `${directory.workers.size} connected, serving ${registry.slugs("openai").join(", ") || "no model yet"}\n` +
      `  POST /v1/chat/completions, /v1/messages, /v1/responses (stored responses: ${service.responsesLocation})\n` + service.surfaces,
  );
  if (installDir !== undefined) recordThisProcess(installDir, "gateway", host, service.server.port);
  process.stdout.write(`${JSON.stringify({ listening: { host, port: service.server.port } })}\n`);
}
