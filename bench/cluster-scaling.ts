// Scale-out on one machine: aggregate output tokens/s through one `loom gateway` in front of 1, then 2,
// then 3 `loom worker`s of one thread each, under a closed-loop streaming load that keeps every worker busy. On a
// machine with C cores, W single-thread workers plus the gateway and the load client cannot use more than C cores:
// the figures show how far the aggregate grows before the cores run out, not how a cluster of machines scales.
// Run: npm run build && node dist/bench/cluster-scaling.js [options] (USAGE below; --help prints it).
// --svg <file> also draws output tok/s against the worker count as a line chart, with the 1-worker figure x W dashed
// beside it (bench/throughput-charts.ts), e.g. --svg docs/performance/charts/cluster-scaling.svg.
//
// Per worker count W, fresh, one count at a time: W x `loom worker --model <file> --register <redis> --port 0
// --threads T --context C --max-sequences S --kv-cache-mb M` and `loom gateway --database-url <schema URL>
// --redis-url <redis> --port 0 [--routing P]` (the gateway's default routing unless --routing), each count's cluster
// under a Redis prefix of its own, on one PostgreSQL schema (bench/cluster-bench.ts), one organization and one
// inference key (the default organization limits unless --token-limits off). S = the run's client loops (any one worker
// could take every request) and M holds S full contexts in f32, so nothing waits for KV.
// Load: --concurrency N client loops per worker, N x W in all (the same N sequences per worker at every W, so the
// only change is the worker count), closed loops (node:http keep-alive) in a forked client process
// (bench/http-load-client.ts); POST /v1/chat/completions, stream true with a final usage chunk, no system prompt of
// ours (the template adds its default one), a user message of seeded words sized to --prompt tokens, max_tokens
// --decode, temperature 0; --requests per worker (default 8 x N; --quick 3 x N), the same bodies at every W (the
// first ones). Each cluster is primed untimed (N x W requests of other messages at once, max_tokens 2: JIT, the
// template's prefix into the caches, the gateway's links).
// Measured: output tok/s = output tokens (from usage) / wall time of the run (ramp-up and drain included);
// requests/s; TTFT p50 and ITL p50 at the client; requests per worker (GET /health submitted, after minus before);
// CPU of every process during the run (/proc: workers, gateway, client) over the wall time, i.e. cores busy.
import type { ChildProcess } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { KV_BLOCK_SIZE } from "../engine/load.js";
import { ROUTING_POLICIES, type RoutingPolicy } from "../server/cluster/routing.js";
import { BenchCli } from "./bench-args.js";
import { f32KvBytes, mean, percentile, printHeader } from "./bench-models.js";
import { buildConversations, openAiBody, parseRange } from "./chat-workload.js";
import {
  DEFAULT_MODEL, RAISED_LIMITS, REQUEST_LIMITS_ONLY, fixed, modelFile, openBenchPlatform, startCluster, stop, stopCluster, submittedCounts, sum,
} from "./cluster-bench.js";
import { type RequestTiming, processClient } from "./http-load-client.js";
import { processCpuSeconds } from "./machine.js";
import { type ClusterScalingRecord, clusterScalingChart } from "./throughput-charts.js";
import { writeChart } from "./svg-chart.js";

const MIB = 1024 * 1024;

/** One worker count's run. */
interface Level {
  workers: number;
  clients: number;
  seconds: number;
  requests: RequestTiming[];
  perWorker: number[];
  /** CPU seconds during the run: the workers' (each), the gateway's, the client's. */
  workerCpu: number[];
  gatewayCpu: number;
  clientCpu: number;
}

const outputTokens = (level: Level) => sum(level.requests.map((r) => Math.max(0, r.outputTokens)));
const tokensPerSecond = (level: Level) => outputTokens(level) / level.seconds;

/** The command line; --help prints it. */
const USAGE = `node dist/bench/cluster-scaling.js [--workers 1,2,3] [--concurrency N] [--requests N]
       [--decode N] [--prompt 32-48] [--model preset:dtype] [--threads 1] [--context N] [--routing POLICY]
       [--token-limits on|off] [--database-url URL] [--redis-url URL] [--quick] [--svg <file.svg>]`;
const cli: BenchCli = new BenchCli("cluster-scaling", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    workers: { type: "string" }, concurrency: { type: "string" }, requests: { type: "string" }, decode: { type: "string" }, prompt: { type: "string" },
    model: { type: "string" }, threads: { type: "string" }, context: { type: "string" }, routing: { type: "string" }, "token-limits": { type: "string" },
    "database-url": { type: "string" }, "redis-url": { type: "string" }, quick: { type: "boolean" },
    svg: { type: "string" },
  });
  const quick = values.quick ?? false;
  const counts = cli.integers("workers", values.workers ?? "1,2,3");
  const perWorker = cli.integer("concurrency", values.concurrency ?? 4);
  const requestsPerWorker = cli.integer("requests", values.requests ?? (quick ? 3 : 8) * perWorker);
  const decode = cli.integer("decode", values.decode ?? (quick ? 16 : 64));
  const threads = cli.integer("threads", values.threads ?? 1);
  const prompt = cli.check(() => parseRange(values.prompt ?? "32-48", "prompt"));
  const context = cli.integer("context", values.context ?? Math.ceil((prompt.max + decode + 16) / KV_BLOCK_SIZE) * KV_BLOCK_SIZE);
  const routing = values.routing === undefined ? undefined : cli.oneOf("routing", values.routing, ROUTING_POLICIES);
  const tokenLimits = cli.oneOf("token-limits", values["token-limits"] ?? "on", ["on", "off"]);
  if (requestsPerWorker < perWorker) cli.fail(`--requests ${requestsPerWorker}: at least --concurrency (${perWorker}) per worker`);
  if (context < prompt.max + decode + 1) cli.fail(`--context ${context} cannot hold ${prompt.max} prompt tokens and ${decode} output tokens`);
  const modelSpec = values.model ?? DEFAULT_MODEL;
  const model = await modelFile(modelSpec);
  const maxWorkers = Math.max(...counts);
  const conversations = buildConversations(model.path, requestsPerWorker * maxWorkers, prompt, { min: decode, max: decode }, 2468, undefined);
  const prime = buildConversations(model.path, perWorker * maxWorkers, prompt, { min: 2, max: 2 }, 1357, undefined);
  const cores = availableParallelism();

  const platform = await openBenchPlatform({ bench: "cluster-scaling", databaseUrl: values["database-url"], redisUrl: values["redis-url"], limits: tokenLimits === "on" ? RAISED_LIMITS : REQUEST_LIMITS_ONLY });
  const children: ChildProcess[] = [];
  const client = processClient();
  try {
    const command = `node dist/bench/cluster-scaling.js --workers ${counts.join(",")} --concurrency ${perWorker} --requests ${requestsPerWorker} --decode ${decode} `
      + `--prompt ${prompt.min}-${prompt.max} --model ${modelSpec} --threads ${threads} --context ${context}${routing ? ` --routing ${routing}` : ""} --token-limits ${tokenLimits}`
      + `${values["database-url"] ? " --database-url URL" : ""}${values["redis-url"] ? " --redis-url URL" : ""}${quick ? " --quick" : ""}`;
    const machine = printHeader(command, threads, [
      `model ${model.preset} ${model.dtype.toUpperCase()} random weights (${model.path}); per worker count W, fresh: W x loom worker --threads ${threads} --context ${context} `
        + `--max-sequences ${perWorker}W --kv-cache-mb (${perWorker}W f32 contexts) + 1 x loom gateway${routing ? ` --routing ${routing}` : " (its default routing)"}`,
      `load: ${perWorker} closed client loops per worker (${perWorker}W in all) in a forked client process; ${requestsPerWorker} requests per worker (${requestsPerWorker}W in all); `
        + `streaming chat completions, ${prompt.min}-${prompt.max} prompt tokens (the template's default system prompt included), max_tokens ${decode}, temperature 0; primed untimed`,
      `platform: ${platform.describe()}; one organization, one inference key, ${tokenLimits === "on" ? "token limits on" : "requests/min only"}`,
      `THIS MACHINE HAS ${cores} CORES: the workers (${threads} thread${threads === 1 ? "" : "s"} each), the gateway and the client share them, so the aggregate cannot grow `
        + `past ${cores} busy cores: ${Math.floor(cores / threads)} worker${Math.floor(cores / threads) === 1 ? "" : "s"} already fill them; more workers only share the same cores`,
      `load average at the start (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`,
    ]);

    const started = performance.now();
    const levels: Level[] = [];
    const failures: string[] = [];
    let sent = 0;
    for (const workers of counts) {
      const clients = perWorker * workers;
      const kvCacheMb = Math.ceil(f32KvBytes(model.path, context, clients) / MIB);
      let cluster;
      try {
        cluster = await startCluster({
          platform, modelPath: model.path, workers, children, env: platform.envFor(`w${workers}`),
          workerArgs: ["--threads", String(threads), "--context", String(context), "--max-sequences", String(clients), "--kv-cache-mb", String(kvCacheMb)],
          gatewayArgs: routing ? ["--routing", routing] : [],
        });
        const url = `${cluster.base}/v1/chat/completions`;
        const headers = { authorization: `Bearer ${platform.key}` };
        const primeBodies = prime.slice(0, clients).map((c) => openAiBody(cluster!.slug, undefined, c.user, 2));
        sent += primeBodies.length;
        await client.run({ url, format: "openai", headers, bodies: primeBodies, concurrency: clients });
        const bodies = conversations.slice(0, requestsPerWorker * workers).map((c) => openAiBody(cluster!.slug, undefined, c.user, decode));
        const pids = [...cluster.workers.map((worker) => worker.child.pid!), cluster.gateway.child.pid!];
        const before = await submittedCounts(cluster);
        const cpuBefore = pids.map(processCpuSeconds);
        sent += bodies.length;
        const result = await client.run({ url, format: "openai", headers, bodies, concurrency: clients });
        const cpuAfter = pids.map(processCpuSeconds);
        const after = await submittedCounts(cluster);
        const cpu = cpuAfter.map((value, i) => value - cpuBefore[i]);
        levels.push({
          workers, clients, seconds: result.seconds, requests: result.requests, perWorker: after.map((count, i) => count - before[i]),
          workerCpu: cpu.slice(0, workers), gatewayCpu: cpu[workers], clientCpu: result.cpuSeconds,
        });
      } catch (error) {
        const message = `${workers} worker${workers === 1 ? "" : "s"}: ${(error as Error).message}${cluster ? `\n${cluster.describe()}` : ""}`;
        failures.push(message);
        process.stderr.write(`failed: ${message}\n`);
      } finally {
        if (cluster) await stopCluster(cluster);
      }
    }
    const seconds = (performance.now() - started) / 1000;

    const base = levels.find((level) => level.workers === 1);
    console.log("");
    console.log("| workers | clients | requests | output tok/s | x 1 worker | requests/s | TTFT p50 (ms) | ITL p50 (ms) | requests per worker | max / mean | "
      + `cores busy: workers + gateway + client = all (of ${cores}) |`);
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    for (const level of levels) {
      const ttft = percentile(level.requests.map((r) => 1000 * r.ttft).filter(Number.isFinite), 0.5);
      const itl = percentile(level.requests.flatMap((r) => r.gaps.map((gap) => 1000 * gap)), 0.5);
      const busy = (cpuSeconds: number) => cpuSeconds / level.seconds;
      const workersBusy = busy(sum(level.workerCpu));
      console.log(`| ${level.workers} | ${level.clients} | ${level.requests.length} | ${fixed(tokensPerSecond(level), 1)} | ${base ? fixed(tokensPerSecond(level) / tokensPerSecond(base), 2) : "n/a"} | `
        + `${fixed(level.requests.length / level.seconds, 2)} | ${fixed(ttft, 0)} | ${fixed(itl, 1)} | ${level.perWorker.join(" / ")} | ${fixed(Math.max(...level.perWorker) / mean(level.perWorker), 2)} | `
        + `${fixed(workersBusy, 2)} (${level.workerCpu.map((c) => fixed(busy(c), 2)).join(" / ")}) + ${fixed(busy(level.gatewayCpu), 2)} + ${fixed(busy(level.clientCpu), 2)} `
        + `= ${fixed(workersBusy + busy(level.gatewayCpu) + busy(level.clientCpu), 2)} |`);
    }
    console.log("");
    console.log("output tok/s = output tokens (from usage) / wall time of the run (ramp-up and drain included); x 1 worker = that over the 1-worker run's;");
    console.log("TTFT = request sent to the first non-empty content delta, ITL = gaps between content deltas, at the client; requests per worker = each worker's");
    console.log("GET /health submitted, after minus before the run; cores busy = user + system CPU seconds of each process during the run (/proc; every thread) / wall time.");
    const complete = levels.map((level) => `${level.workers} worker${level.workers === 1 ? "" : "s"}: ${level.requests.filter((r) => r.outputTokens === decode).length} of ${level.requests.length}`);
    const usage = (await Promise.all([...new Set([machine.date, new Date().toISOString().slice(0, 10)])].map((day) => platform.stores.usage.today(platform.organizationId, day)))).flat();
    const recorded = sum(usage.map((row) => row.requests));
    console.log(`check: responses with exactly ${decode} output tokens: ${complete.join(", ")}; the platform recorded ${recorded} of the ${sent} requests sent (primes included)`);
    console.log(`note: ${cores} cores on this machine; ${maxWorkers} single-thread workers, the gateway and the client cannot use more than ${cores}: past ${Math.floor(cores / threads)} `
      + `worker${Math.floor(cores / threads) === 1 ? "" : "s"} the workers only share the same cores, so these figures are this machine's core limit, not the cluster's scaling`);
    for (const line of failures) console.log(`FAILED ${line.split("\n")[0]}`);
    console.log(`${fixed(seconds, 0)} s in all; load average at the end (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`);
    const record: ClusterScalingRecord = {
      bench: "cluster-scaling", command, date: machine.date, cpu: machine.cpu, cores, threads, node: process.version, model: `${model.preset}-${model.dtype}`,
      concurrencyPerWorker: perWorker, requestsPerWorker, decode, prompt, context, routing: routing ?? "default", tokenLimits, postgres: platform.postgresVersion,
      redis: platform.redisVersion, usageRequestsRecorded: recorded, requestsSent: sent, failures,
      levels: levels.map((level) => ({
        workers: level.workers, clients: level.clients, seconds: level.seconds, requests: level.requests.length, outputTokens: outputTokens(level),
        outputTokensPerSecond: tokensPerSecond(level), perWorker: level.perWorker, workerCpuSeconds: level.workerCpu, gatewayCpuSeconds: level.gatewayCpu,
        clientCpuSeconds: level.clientCpu,
        ttftP50Ms: percentile(level.requests.map((r) => 1000 * r.ttft).filter(Number.isFinite), 0.5),
        itlP50Ms: percentile(level.requests.flatMap((r) => r.gaps.map((gap) => 1000 * gap)), 0.5),
      })),
    };
    console.log(JSON.stringify(record));
    if (values.svg) writeChart(values.svg, clusterScalingChart(record));
  } finally {
    client.close();
    await Promise.all(children.map(stop));
    await platform.close();
  }
}

await main();
process.exit(0);
