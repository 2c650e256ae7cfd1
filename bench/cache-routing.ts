// Cache-aware routing against round robin: T tenants, each with its own long system prompt and short
// varied questions, through one `loom gateway` in front of W `loom worker`s, once per routing policy. Per policy: the
// prefix-cache hit rate the clients saw, TTFT mean/p50/p99, the requests each worker took, and the gateway's own
// routing counters, among them the oracle's figure. Targets: cache-aware routing at least 2x the hit rate
// of round robin, at least 95% of the hit rate of an oracle that knows every worker's cache, a lower mean TTFT, and
// no worker above 1.2x the mean load.
// Run: npm run build && node dist/bench/cache-routing.js [options] (USAGE below; --help prints it).
//
// Processes, all on this machine, from the compiled CLI (dist/server/cli/main.js), fresh for each policy, one policy
// at a time: W x `loom worker --model <file> --register <redis> --port 0 --threads T --context C --max-sequences S
// --kv-cache-mb M` (the same flags for every policy) and `loom gateway --database-url <schema URL> --redis-url <redis>
// --port 0 --routing <policy>` (each policy's cluster under a Redis prefix of its own), on one PostgreSQL schema of
// their own (bench/cluster-bench.ts), one organization and one inference key, with the default organization limits
// (admission counts each prompt on the gateway, with the tokenizer the workers sent) unless --token-limits off.
// The KV cache is sized so that routing matters: with room for every tenant's system prompt on every worker, round
// robin would end up caching every tenant everywhere and the comparison would say nothing. Each worker gets room for
// the requests of --kv-tenants tenants (default half of them): K x ceil((longest prompt + decode) / 16) blocks of 16
// positions, f32 KV (a worker's default), i.e. about K of the T system prompts cached at once; --max-sequences
// defaults to K, so that every request admitted has its blocks (no preemption). The output prints the bytes per
// token (layers x 2 (K and V) x KV heads x head size x 4 bytes) and the choice, and checks on the gateway's /metrics
// that the workers have exactly those blocks.
// Workload: tenant i's system prompt is "i: you are the assistant of tenant i." and seeded words up to --system-tokens
// tokens (its own from its first token on: the tenants' prompts share only the template's "<|im_start|>system\n"); its questions are seeded words of --question-tokens tokens (after the
// template: the prompt is the system prompt's tokens plus those); POST /v1/chat/completions, stream true with a
// final usage chunk, max_tokens --decode, temperature 0. Requests are ordered in rounds, each round one question of
// every tenant in a seeded order (the same for every policy), and sent from --clients closed loops (node:http
// keep-alive) in a forked client process (bench/http-load-client.ts), so tenants interleave. Nothing is warmed into
// the prefix caches: before the timed requests each cluster gets W requests at once whose prompts (a system prompt
// "wI" and "Hi") share no block with any tenant's (JIT, the key's first read, the gateway's links).
// Measured: hit rate = cached prompt tokens / prompt tokens, summed over the timed requests, from each response's
// usage (prompt_tokens_details.cached_tokens); TTFT = request sent to the first non-empty content delta, at the
// client; per-worker requests = the workers' GET /health `submitted`, after minus before the timed requests; routing
// counters = the gateway's /metrics loom_routed_*_total, after minus before. The oracle: at each request, the longest
// cached prefix any worker held (as the gateway mirrors the workers' caches when it routes); its hit rate is
// cached_blocks_best / prompt_blocks, against the policy's cached_blocks_chosen / prompt_blocks (leading full blocks
// of 16 tokens, summed over requests).
import type { ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { kvBlockBytes } from "../engine/kv/budget.js";
import { KV_BLOCK_SIZE } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import { ROUTING_POLICIES, type RoutingCounters, type RoutingPolicy } from "../server/cluster/routing.js";
import { BenchCli } from "./bench-args.js";
import { mean, percentile, printHeader, seededRandom } from "./bench-models.js";
import { buildConversations, openAiBody, parseRange, promptTokenCounter, seededText } from "./chat-workload.js";
import {
  type BenchPlatform, type Cluster, DEFAULT_MODEL, RAISED_LIMITS, REQUEST_LIMITS_ONLY, countersSince, gatewayMetrics, modelFile, openBenchPlatform,
  fixed, routingCounters, startCluster, stop, stopCluster, submittedCounts, sum,
} from "./cluster-bench.js";
import { type LoadClient, type RequestTiming, processClient } from "./http-load-client.js";

/** The targets set for cache-aware routing. */
const TARGET_HIT_RATIO = 2;
const TARGET_OF_ORACLE = 0.95;
const TARGET_MAX_LOAD = 1.2;
const MIB = 1024 * 1024;

/** One timed request: its tenant, system prompt and question. */
interface Item {
  tenant: number;
  system: string;
  user: string;
}

/** What one policy's run measured. */
interface PolicyRun {
  policy: RoutingPolicy;
  seconds: number;
  requests: RequestTiming[];
  /** Requests each worker took during the timed requests. */
  perWorker: number[];
  /** The warm-up's requests per worker. */
  warmUpPerWorker: number[];
  routing: RoutingCounters;
  /** KV blocks of the whole cluster, from the gateway's /metrics (used + cached + free). */
  clusterKvBlocks: number;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : a > 0 ? Number.POSITIVE_INFINITY : Number.NaN);

const promptTokens = (run: PolicyRun) => sum(run.requests.map((r) => Math.max(0, r.promptTokens)));
const cachedTokens = (run: PolicyRun) => sum(run.requests.map((r) => r.cachedTokens));
const hitRate = (run: PolicyRun) => cachedTokens(run) / promptTokens(run);
const ttfts = (run: PolicyRun) => run.requests.map((r) => 1000 * r.ttft).filter(Number.isFinite);
const maxOverMean = (counts: readonly number[]) => Math.max(...counts) / mean(counts);

/** One policy: a fresh cluster, the warm-up, the timed requests, the counters; the cluster stopped. */
async function runPolicy(
  policy: RoutingPolicy, platform: BenchPlatform, client: LoadClient, options: {
    modelPath: string; workers: number; workerArgs: string[]; gatewayArgs: string[]; items: Item[]; decode: number; clients: number; children: ChildProcess[]; sent: { requests: number };
  },
): Promise<PolicyRun> {
  const cluster: Cluster = await startCluster({
    platform, modelPath: options.modelPath, workers: options.workers, workerArgs: options.workerArgs,
    gatewayArgs: ["--routing", policy, ...options.gatewayArgs], env: platform.envFor(policy), children: options.children,
  });
  try {
    const url = `${cluster.base}/v1/chat/completions`;
    const headers = { authorization: `Bearer ${platform.key}` };
    const start = await submittedCounts(cluster);
    const warmUp = Array.from({ length: options.workers }, (_, i) => openAiBody(cluster.slug, `w${i}`, "Hi", 2));
    options.sent.requests += warmUp.length;
    await client.run({ url, format: "openai", headers, bodies: warmUp, concurrency: warmUp.length });
    const before = await submittedCounts(cluster);
    const countersBefore = await routingCounters(cluster);
    const metrics = await gatewayMetrics(cluster);
    const clusterKvBlocks = ["used", "cached", "free"].reduce((total, kind) => total + (metrics.get(`loom_kv_blocks_${kind}`) ?? Number.NaN), 0);
    const bodies = options.items.map((item) => openAiBody(cluster.slug, item.system, item.user, options.decode));
    options.sent.requests += bodies.length;
    const result = await client.run({ url, format: "openai", headers, bodies, concurrency: options.clients });
    const after = await submittedCounts(cluster);
    const countersAfter = await routingCounters(cluster);
    return {
      policy, seconds: result.seconds, requests: result.requests, clusterKvBlocks,
      perWorker: after.map((count, i) => count - before[i]), warmUpPerWorker: before.map((count, i) => count - start[i]),
      routing: countersSince(countersAfter, countersBefore),
    };
  } catch (error) {
    throw new Error(`${policy}: ${(error as Error).message}\n${cluster.describe()}`);
  } finally {
    await stopCluster(cluster);
  }
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/cache-routing.js [--tenants 8] [--system-tokens 1000] [--questions N]
       [--clients N] [--workers 3] [--policies cache-aware,round-robin] [--model preset:dtype] [--threads 1]
       [--question-tokens 8-24] [--decode 8] [--context N] [--kv-tenants N] [--kv-cache-mb N] [--max-sequences N]
       [--cache-load-margin N] [--token-limits on|off] [--database-url URL] [--redis-url URL] [--seed 1919] [--quick]`;
const cli: BenchCli = new BenchCli("cache-routing", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    tenants: { type: "string" }, "system-tokens": { type: "string" }, questions: { type: "string" }, clients: { type: "string" }, workers: { type: "string" },
    policies: { type: "string" }, model: { type: "string" }, threads: { type: "string" }, "question-tokens": { type: "string" }, decode: { type: "string" },
    context: { type: "string" }, "kv-tenants": { type: "string" }, "kv-cache-mb": { type: "string" }, "max-sequences": { type: "string" },
    "cache-load-margin": { type: "string" }, "token-limits": { type: "string" }, "database-url": { type: "string" }, "redis-url": { type: "string" },
    seed: { type: "string" }, quick: { type: "boolean" },
  });
  const quick = values.quick ?? false;
  const tenants = cli.integer("tenants", values.tenants ?? 8);
  const systemTokens = cli.integer("system-tokens", values["system-tokens"] ?? 1000);
  const questions = cli.integer("questions", values.questions ?? (quick ? 3 : 8));
  const clients = cli.integer("clients", values.clients ?? tenants);
  const workers = cli.integer("workers", values.workers ?? 3);
  const threads = cli.integer("threads", values.threads ?? 1);
  const decode = cli.integer("decode", values.decode ?? 8);
  const seed = cli.integer("seed", values.seed ?? 1919, Number.NEGATIVE_INFINITY);
  const kvTenants = cli.integer("kv-tenants", values["kv-tenants"] ?? Math.ceil(tenants / 2));
  const questionTokens = cli.check(() => parseRange(values["question-tokens"] ?? "8-24", "question-tokens"));
  const policies = cli.someOf("policies", values.policies ?? "cache-aware,round-robin", ROUTING_POLICIES);
  const tokenLimits = cli.oneOf("token-limits", values["token-limits"] ?? "on", ["on", "off"]);
  const margin = values["cache-load-margin"];
  if (margin !== undefined) cli.integer("cache-load-margin", margin, 0);
  const modelSpec = values.model ?? DEFAULT_MODEL;
  const model = await modelFile(modelSpec);

  // The tenants' system prompts and questions; the rounds' order.
  const countTokens = promptTokenCounter(model.path);
  const systems = Array.from({ length: tenants }, (_, t) => seededText(model.path, systemTokens, seed + 101 * t, `${t + 1}: you are the assistant of tenant ${t + 1}.`));
  const systemPromptTokens = systems.map((system) => countTokens(system, ""));
  const conversations = systems.map((system, t) =>
    buildConversations(model.path, questions, { min: systemPromptTokens[t] + questionTokens.min, max: systemPromptTokens[t] + questionTokens.max }, { min: decode, max: decode }, seed + 7 * t + 3, system));
  const random = seededRandom(seed);
  const items: Item[] = [];
  for (let round = 0; round < questions; round++) {
    const order = Array.from({ length: tenants }, (_, t) => t);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const t of order) items.push({ tenant: t, system: systems[t], user: conversations[t][round].user });
  }
  const longestPrompt = Math.max(...conversations.flat().map((c) => c.promptTokens));

  // The KV cache: room for kvTenants tenants' requests per worker.
  const { config } = openModelSource(model.path);
  const kvDim = config.num_key_value_heads * config.head_dim;
  const bytesPerToken = kvBlockBytes(config.num_hidden_layers, kvDim, 1, "f32");
  const blockBytes = kvBlockBytes(config.num_hidden_layers, kvDim, KV_BLOCK_SIZE, "f32");
  const requestBlocks = Math.ceil((longestPrompt + decode) / KV_BLOCK_SIZE);
  const systemBlocks = Math.floor(mean(systemPromptTokens) / KV_BLOCK_SIZE);
  const context = cli.integer("context", values.context ?? Math.ceil(Math.max(1200, longestPrompt + decode + 1) / KV_BLOCK_SIZE) * KV_BLOCK_SIZE);
  if (context < longestPrompt + decode + 1) cli.fail(`--context ${context} cannot hold ${longestPrompt} prompt tokens and ${decode} output tokens`);
  const kvCacheMb = cli.integer("kv-cache-mb", values["kv-cache-mb"] ?? Math.ceil((kvTenants * requestBlocks * blockBytes) / MIB));
  const maxSequences = cli.integer("max-sequences", values["max-sequences"] ?? kvTenants);
  const kvBlocks = Math.floor((kvCacheMb * MIB) / blockBytes);
  if (kvBlocks < Math.ceil(context / KV_BLOCK_SIZE)) cli.fail(`--kv-cache-mb ${kvCacheMb} holds ${kvBlocks} blocks, less than one full context of ${context} positions`);
  const systemsHeld = kvBlocks / systemBlocks;

  const platform = await openBenchPlatform({ bench: "cache-routing", databaseUrl: values["database-url"], redisUrl: values["redis-url"], limits: tokenLimits === "on" ? RAISED_LIMITS : REQUEST_LIMITS_ONLY });
  const children: ChildProcess[] = [];
  const client = processClient();
  try {
    const command = `node dist/bench/cache-routing.js --tenants ${tenants} --system-tokens ${systemTokens} --questions ${questions} --clients ${clients} --workers ${workers} `
      + `--policies ${policies.join(",")} --model ${modelSpec} --threads ${threads} --question-tokens ${questionTokens.min}-${questionTokens.max} --decode ${decode} `
      + `--context ${context} --kv-tenants ${kvTenants} --kv-cache-mb ${kvCacheMb} --max-sequences ${maxSequences}${margin !== undefined ? ` --cache-load-margin ${margin}` : ""} `
      + `--token-limits ${tokenLimits} --seed ${seed}${values["database-url"] ? " --database-url URL" : ""}${values["redis-url"] ? " --redis-url URL" : ""}${quick ? " --quick" : ""}`;
    const machine = printHeader(command, threads, [
      `model ${model.preset} ${model.dtype.toUpperCase()} random weights (${model.path}); per policy, fresh: ${workers} x loom worker --threads ${threads} --context ${context} `
        + `--max-sequences ${maxSequences} --kv-cache-mb ${kvCacheMb} + 1 x loom gateway --routing <policy>${margin !== undefined ? ` --cache-load-margin ${margin}` : " (default --cache-load-margin)"}; `
        + `one policy at a time, in the order given`,
      `KV per token: ${config.num_hidden_layers} layers x 2 (K, V) x ${config.num_key_value_heads} KV heads x ${config.head_dim} x 4 B (f32) = ${bytesPerToken} B; `
        + `a block of ${KV_BLOCK_SIZE} = ${blockBytes} B; a request (longest prompt ${longestPrompt} + ${decode} output tokens) = ${requestBlocks} blocks; `
        + `--kv-cache-mb ${kvCacheMb} = ${kvBlocks} blocks per worker: ${fixed(systemsHeld, 1)} system prompts of ${systemBlocks} full blocks, i.e. `
        + `${fixed(systemsHeld / tenants, 2)} of the ${tenants} tenants' (all of them would need ${tenants * systemBlocks} blocks, ${fixed((tenants * systemBlocks * blockBytes) / MIB, 0)} MiB)`,
      `workload: ${tenants} tenants, each its own system prompt (${Math.min(...systemPromptTokens)}-${Math.max(...systemPromptTokens)} tokens after the template) and ${questions} questions `
        + `of ${questionTokens.min}-${questionTokens.max} tokens; ${tenants * questions} streaming chat completions, max_tokens ${decode}, temperature 0, in ${questions} rounds `
        + `(every tenant once per round, seeded order), from ${clients} closed client loops; no prefix warmed (warm-up: ${workers} requests sharing no block with any tenant)`,
      `platform: ${platform.describe()}; one organization, one inference key, `
        + (tokenLimits === "on" ? "token limits on (the gateway counts each prompt at admission)" : "requests/min only (admission counts no prompt tokens)"),
      `load average at the start (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`,
    ]);

    const started = performance.now();
    const sent = { requests: 0 };
    const workerArgs = ["--threads", String(threads), "--context", String(context), "--max-sequences", String(maxSequences), "--kv-cache-mb", String(kvCacheMb)];
    const gatewayArgs = margin !== undefined ? ["--cache-load-margin", margin] : [];
    const runs: PolicyRun[] = [];
    const failures: string[] = [];
    for (const policy of policies) {
      try {
        runs.push(await runPolicy(policy, platform, client, { modelPath: model.path, workers, workerArgs, gatewayArgs, items, decode, clients, children, sent }));
      } catch (error) {
        failures.push(`${policy}: ${(error as Error).message}`);
        process.stderr.write(`${policy}: failed: ${(error as Error).message}\n`);
      }
    }
    const seconds = (performance.now() - started) / 1000;

    console.log("");
    console.log("| policy | requests | hit rate | TTFT mean (ms) | TTFT p50 (ms) | TTFT p99 (ms) | requests per worker | max / mean | to cached prefix | away from it | "
      + "oracle hit (best / prompt blocks) | policy's (chosen / prompt blocks) | chosen / best | seconds |");
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (const run of runs) {
      const r = run.routing;
      console.log(`| ${run.policy} | ${run.requests.length} | ${fixed(100 * hitRate(run), 1)}% (${cachedTokens(run)} / ${promptTokens(run)}) | ${fixed(mean(ttfts(run)), 0)} | `
        + `${fixed(percentile(ttfts(run), 0.5), 0)} | ${fixed(percentile(ttfts(run), 0.99), 0)} | ${run.perWorker.join(" / ")} | ${fixed(maxOverMean(run.perWorker), 2)} | `
        + `${r.toCachedPrefix} | ${r.awayFromCachedPrefix} | ${fixed(100 * ratio(r.cachedBlocksBest, r.promptBlocks), 1)}% (${r.cachedBlocksBest} / ${r.promptBlocks}) | `
        + `${fixed(100 * ratio(r.cachedBlocksChosen, r.promptBlocks), 1)}% (${r.cachedBlocksChosen} / ${r.promptBlocks}) | ${fixed(ratio(r.cachedBlocksChosen, r.cachedBlocksBest), 3)} | ${fixed(run.seconds, 1)} |`);
    }
    console.log("");
    console.log("hit rate = cached prompt tokens / prompt tokens over the timed requests (each response's usage.prompt_tokens_details.cached_tokens and prompt_tokens);");
    console.log("TTFT = request sent to the first non-empty content delta, at the client (admission, queueing and the uncached part of the prefill included);");
    console.log("requests per worker = each worker's GET /health submitted, after minus before the timed requests; max / mean of those (target <= 1.2);");
    console.log("to cached prefix / away from it = requests routed to a worker holding the longest cached prefix any worker held / elsewhere while some worker held one");
    console.log("(loom_routed_to_cached_prefix_total, loom_routed_away_from_cached_prefix_total); oracle = at each request, the longest prefix any worker held, as the");
    console.log("gateway's mirror of the workers' caches saw it when routing: its hit rate = loom_routed_cached_blocks_best_total / loom_routed_prompt_blocks_total, against");
    console.log("the policy's loom_routed_cached_blocks_chosen_total / loom_routed_prompt_blocks_total (leading full blocks of 16 tokens; counters after minus before the timed requests).");

    const checks: string[] = [];
    for (const run of runs) {
      const complete = run.requests.filter((r) => r.promptTokens > 0 && r.outputTokens === decode).length;
      const noText = run.requests.filter((r) => !Number.isFinite(r.ttft)).length;
      const kvExpected = workers * kvBlocks;
      const measuredOfOracle = ratio(cachedTokens(run), KV_BLOCK_SIZE * run.routing.cachedBlocksBest);
      checks.push(`${run.policy}: ${complete} of ${run.requests.length} responses had usage with ${decode} output tokens${noText > 0 ? `, ${noText} streamed no text (no TTFT)` : ""}; `
        + `the gateway routed ${run.routing.requests} (${run.requests.length} sent); warm-up per worker ${run.warmUpPerWorker.join(" / ")}; `
        + `cluster KV blocks on the gateway's /metrics ${run.clusterKvBlocks} (${workers} x ${kvBlocks} = ${kvExpected}${run.clusterKvBlocks === kvExpected ? "" : ": DIFFERENT"}); `
        + `cached tokens the clients saw / (the oracle's cached blocks x ${KV_BLOCK_SIZE}) = ${fixed(measuredOfOracle, 3)}`);
    }
    const usage = (await Promise.all([...new Set([machine.date, new Date().toISOString().slice(0, 10)])].map((day) => platform.stores.usage.today(platform.organizationId, day)))).flat();
    const recorded = sum(usage.map((row) => row.requests));
    checks.push(`the platform recorded ${recorded} of the ${sent.requests} requests sent (warm-ups included)`);
    for (const line of checks) console.log(`check: ${line}`);
    console.log("(the usage counts every prompt token the engine reused, a partly matching block's included, at admission; the routing counters count whole blocks");
    console.log("the gateway's mirror held when it routed: a prefix still being computed on a worker, in a request in flight, is not in the mirror yet)");

    const verdicts: string[] = [];
    const aware = runs.find((run) => run.policy === "cache-aware");
    const turn = runs.find((run) => run.policy === "round-robin");
    if (aware) {
      const ofOracle = ratio(aware.routing.cachedBlocksChosen, aware.routing.cachedBlocksBest);
      const load = maxOverMean(aware.perWorker);
      verdicts.push(`cache-aware hit rate ${fixed(100 * ratio(aware.routing.cachedBlocksChosen, aware.routing.promptBlocks), 1)}% of prompt blocks against the oracle's `
        + `${fixed(100 * ratio(aware.routing.cachedBlocksBest, aware.routing.promptBlocks), 1)}%: ${fixed(100 * ofOracle, 1)}% of the oracle `
        + `(${ofOracle >= TARGET_OF_ORACLE ? "met" : "MISSED"}, target >= ${100 * TARGET_OF_ORACLE}%)`);
      verdicts.push(`cache-aware busiest worker ${fixed(load, 2)}x the mean (${load <= TARGET_MAX_LOAD ? "met" : "MISSED"}, target <= ${TARGET_MAX_LOAD}x)`);
      if (turn) {
        const hits = ratio(hitRate(aware), hitRate(turn));
        verdicts.push(`hit rate cache-aware ${fixed(100 * hitRate(aware), 1)}% / round-robin ${fixed(100 * hitRate(turn), 1)}% = ${Number.isFinite(hits) ? `${fixed(hits, 2)}x` : "n/a (round robin had none)"} `
          + `(${hits >= TARGET_HIT_RATIO ? "met" : "MISSED"}, target >= ${TARGET_HIT_RATIO}x)`);
        const [a, b] = [mean(ttfts(aware)), mean(ttfts(turn))];
        verdicts.push(`mean TTFT cache-aware ${fixed(a, 0)} ms / round-robin ${fixed(b, 0)} ms = ${fixed(a / b, 2)} (${a < b ? "met" : "MISSED"}, target < 1)`);
      } else {
        verdicts.push("no round-robin run: the hit-rate and TTFT targets need both");
      }
    } else {
      verdicts.push("no cache-aware run: the targets are cache-aware's");
    }
    for (const line of failures) verdicts.push(`FAILED ${line.split("\n")[0]}`);
    for (const line of verdicts) console.log(`target: ${line}`);
    console.log(`${fixed(seconds, 0)} s in all; load average at the end (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`);
    console.log(JSON.stringify({
      bench: "cache-routing", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, threads, node: process.version, model: `${model.preset}-${model.dtype}`,
      tenants, systemTokens, systemPromptTokens, questions, questionTokens, clients, workers, decode, context, maxSequences, tokenLimits,
      kv: { bytesPerToken, blockBytes, blockSize: KV_BLOCK_SIZE, requestBlocks, systemBlocks, kvTenants, kvCacheMb, blocksPerWorker: kvBlocks },
      postgres: platform.postgresVersion, redis: platform.redisVersion, usageRequestsRecorded: recorded, requestsSent: sent.requests, failures,
      runs: runs.map((run) => ({
        policy: run.policy, seconds: run.seconds, requests: run.requests.length, promptTokens: promptTokens(run), cachedTokens: cachedTokens(run), hitRate: hitRate(run),
        ttftMeanMs: mean(ttfts(run)), ttftP50Ms: percentile(ttfts(run), 0.5), ttftP99Ms: percentile(ttfts(run), 0.99), perWorker: run.perWorker,
        warmUpPerWorker: run.warmUpPerWorker, maxOverMean: maxOverMean(run.perWorker), routing: run.routing, clusterKvBlocks: run.clusterKvBlocks,
        perTenant: Array.from({ length: tenants }, (_, t) => {
          const mine = run.requests.filter((_, i) => items[i].tenant === t);
          return { cachedTokens: sum(mine.map((r) => r.cachedTokens)), promptTokens: sum(mine.map((r) => r.promptTokens)) };
        }),
      })),
    }));
  } finally {
    client.close();
    await Promise.all(children.map(stop));
    await platform.close();
  }
}

await main();
process.exit(0);
