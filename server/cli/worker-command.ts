// `loom worker`: load a model, serve it to gateways over the cluster WebSocket, and publish this worker in Redis
// with a heartbeat until the process ends.
import { existsSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { UsageError, parseBackend, parseInteger, parseSimd } from "../../engine/cli/arguments.js";
import { ProgressBar } from "../../engine/cli/progress-bar.js";
import { WorkerEngine } from "../../engine/host/worker-engine.js";
import { PromptCounter } from "../../engine/prompt-counter.js";
import { type WorkerDescription, modelKey } from "../cluster/frames.js";
import { startWorkerServer } from "../cluster/worker-server.js";
import { DEFAULT_CLUSTER_PREFIX, type WorkerRecord, WorkerRegistry, startHeartbeat } from "../cluster/worker-registry.js";
import { waitForIdle } from "../http/drain.js";
import { loadUws } from "../http/uws.js";
import { redisAddress } from "../platform/limits/redis-store.js";
import { defaultSlugs } from "../models.js";
import { recordThisProcess } from "../release/install/this-process.js";
import { resolveModelPath } from "./default-model.js";
import { EXIT_CLOSE_FAILED, EXIT_REQUESTS_CUT, describeDrainEnd, drainMsOf, stopOnSignals } from "./stop-signals.js";

export const WORKER_USAGE = `Usage: loom worker --register <redis-url> [--model <file-or-dir>] [options]

  An engine server for gateways (loom gateway): no platform and no API of its own; it takes work only from gateways
  that hold the cluster token, LOOM_CLUSTER_TOKEN (required, the same on every gateway and worker).

  --register <url>     the Redis (redis:// or rediss://) where gateways find workers; this worker keeps its record
                       there with a heartbeat (LOOM_CLUSTER_KEY_PREFIX names the keys, default ${DEFAULT_CLUSTER_PREFIX})
  --model <path>       GGUF file, Hugging Face model directory or hf:<org>/<repo>[:<quant>] (default: as loom serve)
  --mmproj <path>      the model's vision projector, as loom serve (gateways then route images to it)
  --pool <name>        the dedicated pool it belongs to (default "default": shared by every organization)
  --host <address>     address to listen on (default 127.0.0.1)
  --port N             port (default 8081; 0 = any free port)
  --advertise <url>    the http://host:port gateways connect to (default http://<host>:<port>; set it when the
                       listening address is not the one gateways reach, e.g. 0.0.0.0 in a container)
  --heartbeat-ms N     how often the record is renewed (default 1000); it expires two heartbeats after the last
  --context N, --threads N, --backend B, --simd S   as loom serve
  --max-sequences N    sequences run at once (default 32): the capacity gateways route against
  --kv-cache-mb N      the KV cache's size in MB (default: as loom serve, a share of free memory)
  --drain-seconds N    on SIGTERM / SIGINT, how long the requests in flight may take to finish (default 30; 0 = no
                       wait): gateways send no new work once they see it stopping, and it waits at least
                       max(2 heartbeats, 1 s) for them to; a second signal stops at once; exit status 0 when all
                       finished, 3 when some were cut, 1 when closing failed
  --install-dir <dir>  record this worker there for loom update apply --rolling (default: not recorded)
`;

/** The command's flags (deploy/checks.ts checks the Kubernetes manifests against them). */
export const WORKER_OPTIONS = {
  register: { type: "string" }, model: { type: "string" }, mmproj: { type: "string" }, pool: { type: "string" }, host: { type: "string" }, port: { type: "string" },
  advertise: { type: "string" }, "heartbeat-ms": { type: "string" }, context: { type: "string" }, threads: { type: "string" },
  backend: { type: "string" }, simd: { type: "string" }, "max-sequences": { type: "string" }, "kv-cache-mb": { type: "string" }, "drain-seconds": { type: "string" }, "install-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs `loom worker`; resolves once it listens and is published (it then runs until the process ends). */
export async function runWorker(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: WORKER_OPTIONS,
  });
  if (values.help) {
    process.stdout.write(WORKER_USAGE);
    return;
  }
  const redisUrl = values.register;
  if (redisUrl === undefined) throw new UsageError("--register <redis-url> is required: it is where gateways find this worker");
  if (!/^rediss?:\/\//.test(redisUrl)) throw new UsageError(`--register must be a redis:// or rediss:// URL, got ${JSON.stringify(redisUrl.slice(0, 100))}`);
  const token = clusterToken();
  const pool = values.pool ?? "default";
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(pool)) throw new UsageError(`--pool must be 1 to 64 letters, digits, '.', '_' or '-', got ${JSON.stringify(pool.slice(0, 100))}`);
  const host = values.host ?? "127.0.0.1";
  const port = parseInteger("--port", values.port, 8081, 0);
  const heartbeatMs = parseInteger("--heartbeat-ms", values["heartbeat-ms"], 1000, 50);
  const maxSequences = parseInteger("--max-sequences", values["max-sequences"], 32, 1);
  if (values.advertise !== undefined && !/^https?:\/\/[^/\s]+$/.test(values.advertise)) throw new UsageError(`--advertise must be http://host:port (no path), got ${JSON.stringify(values.advertise.slice(0, 100))}`);
  const threads = values.threads === undefined ? undefined : parseInteger("--threads", values.threads, 1, 1);
  const context = values.context === undefined ? undefined : parseInteger("--context", values.context, 4096, 1);
  const kvCacheMb = values["kv-cache-mb"] === undefined ? undefined : parseInteger("--kv-cache-mb", values["kv-cache-mb"], 0, 1);
  const drainMs = drainMsOf(values["drain-seconds"]);
  await loadUws();
  const log = (message: string) => process.stderr.write(`loom worker: ${message}\n`);

  const path = await resolveModelPath(values.model);
  const mmproj = values.mmproj;
  if (mmproj !== undefined && !existsSync(mmproj)) throw new UsageError(`--mmproj ${mmproj}: no such file`);
  const bar = new ProgressBar(`loading ${path}`);
  const engine = await WorkerEngine.start(path, {
    load: { threads, backend: parseBackend(values.backend), simd: parseSimd(values.simd), contextSize: context, maxSequences, ...(mmproj ? { mmproj } : {}), ...(kvCacheMb === undefined ? {} : { kvCache: { bytes: kvCacheMb * 1024 * 1024 } }) },
    onProgress: ({ loadedBytes, totalBytes }) => bar.update(loadedBytes, totalBytes),
  });
  bar.finish();
  const model = { slugs: defaultSlugs(engine.model), model: engine.model };
  const description: WorkerDescription = { id: `${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`, pool, models: [model], capacity: maxSequences };
  const key = modelKey(model);
  const server = await startWorkerServer({ description, engines: new Map([[key, engine]]), promptSources: new Map([[key, PromptCounter.readSource(path, mmproj)]]), token }, host, port);
  const url = values.advertise ?? `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`;

  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
  redis.on("error", () => undefined); // reported by the heartbeat that fails
  await redis.connect();
  const registry = new WorkerRegistry(redis, process.env.LOOM_CLUSTER_KEY_PREFIX || DEFAULT_CLUSTER_PREFIX);
  // The KV figure trails by one beat: stats() crosses to the engine thread, and a record is written synchronously.
  let kv: Pick<WorkerRecord, "kvBlocksFree" | "prefixCacheBlocks"> = {};
  let draining = false;
  const record = (): WorkerRecord => {
    engine.stats().then((stats) => { kv = { kvBlocksFree: stats.kvBlocks.free, prefixCacheBlocks: stats.kvBlocks.cached + stats.kvBlocks.used }; }, () => undefined);
    return { ...description, url, heartbeatMs, inFlight: server.inFlight, ...kv, ...(draining ? { draining } : {}) };
  };
  const heartbeat = startHeartbeat(registry, record, (error) => log(`renewing the record in Redis failed: ${error.message}`));
  await heartbeat.first;

  stopOnSignals(async (hurry, signal) => {
    // Published as draining first (the heartbeat goes on), so gateways send no new work but keep their connection
    // for the requests running here; those a gateway routed before it saw the record are served too.
    draining = true;
    server.drain();
    await heartbeat.renew();
    const running = server.inFlight;
    if (running > 0 && drainMs > 0) log(`${signal}: stopping; waiting up to ${drainMs / 1000} s for ${running} request(s) in flight (${signal} again stops at once)`);
    // Even when idle, gateways get time to see the record (they read Redis every 250 ms by default).
    const noticeMs = Math.max(2 * heartbeatMs, 1000);
    const ended = await waitForIdle(sleep(noticeMs).then(() => server.idle()), { timeoutMs: drainMs, signal: hurry });
    const cut = server.inFlight;
    if (cut > 0) log(`cut ${cut} request(s) still running (${describeDrainEnd(ended, signal, drainMs)}): their gateways report them lost; exiting ${EXIT_REQUESTS_CUT}`);
    await heartbeat.stop();
    server.close();
    redis.disconnect();
    await engine.close();
    return { cut };
  }, (error) => log(`stopping failed: ${error.message}; exiting ${EXIT_CLOSE_FAILED}`));
  log(`${description.id} serving ${engine.model.path} (${engine.model.device}) to gateways at ${url}, pool ${pool}; registered in Redis at ${redisAddress(redisUrl)}`);
  if (values["install-dir"] !== undefined) recordThisProcess(values["install-dir"], "worker", host, server.port);
  process.stdout.write(`${JSON.stringify({ listening: { host, port: server.port }, worker: description.id })}\n`);
}

/** The cluster token from the environment. @throws UsageError when it is missing or too short to be a secret. */
export function clusterToken(env: Record<string, string | undefined> = process.env): string {
  const token = env.LOOM_CLUSTER_TOKEN;
  if (token === undefined || token === "") throw new UsageError("LOOM_CLUSTER_TOKEN is not set: gateways and workers share it, e.g. LOOM_CLUSTER_TOKEN=$(openssl rand -hex 32)");
  if (token.length < 16) throw new UsageError(`LOOM_CLUSTER_TOKEN must be at least 16 characters (it is ${token.length})`);
  return token;
}
