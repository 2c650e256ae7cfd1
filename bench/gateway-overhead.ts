// The gateway's cost: streaming chat completions through `loom gateway` in front of one `loom worker`,
// against `loom serve` on the same model file with the same flags and the same platform: the embedded one-process
// mode, which is exactly a gateway plus a worker minus the hop between them (a worker has no HTTP API of its own, so
// `loom serve` is the "worker called directly"). Per concurrency: output tok/s, requests/s and TTFT p50/p99 of both,
// the gateway's throughput as a fraction of serve's and the p50 TTFT it adds. Target: under 3% throughput
// and under 2 ms p50 TTFT added.
// Run: npm run build && node dist/bench/gateway-overhead.js [options] (USAGE below; --help prints it).
//
// Processes, all on this machine, all started from the compiled CLI (dist/server/cli/main.js) as operators run them:
// - serve:   `loom serve --database-url <schema URL> --redis-url <redis> --threads T --context C --config <file>`,
//            the config naming the model with maxSequences S (serve has no --max-sequences flag);
// - gateway: `loom worker --model <file> --register <redis> --threads T --context C --max-sequences S` and
//            `loom gateway --database-url <schema URL> --redis-url <redis>`: one worker, so every request takes the
//            hop to the same engine.
// Both on one PostgreSQL schema of their own (created here, dropped after) through the URL's
// `options=-c search_path=...`, one organization (limits raised so nothing is refused; its requests/min, tokens/min
// and tokens/day buckets are still reserved and corrected on every request, in Redis) and one inference key; Redis
// keys under prefixes of this run's own (LOOM_CLUSTER_KEY_PREFIX, LOOM_REDIS_KEY_PREFIX), deleted after. S defaults
// to the level's N; the KV cache takes each process's default budget (the same rule on both sides).
// Token limits make admission count each prompt: `loom serve` counts it on its HTTP thread, a gateway (no model
// files) asks the worker, whose engine thread answers between steps. `--token-limits off` gives the organization
// no token limits (requests per minute only), so nothing is counted: the hop without that round trip.
// Workload: POST /v1/chat/completions, stream true with a final usage chunk, messages input with no system prompt of
// our own (the model's template adds its default one, shared by every request), a user message of seeded words
// sized to --prompt tokens after the template, max_tokens --decode, temperature 0. The API has no way to ignore the
// end of generation, which the random-weights models rarely produce: every response's usage is checked for exactly
// --decode output tokens (the count that did is reported), each gateway response for the prompt tokens and text of
// serve's response to the same body in the same round, and the platform's usage for every request sent.
// N closed client loops (node:http keep-alive, SSE parser) in a forked client process (bench/http-load-client.ts),
// --requests requests per run (default max(2N, 16); with --quick max(2N, 8)).
// Interleaving: one configuration's processes at a time, never both (the machine has 2 cores): per level and round,
// each configuration in turn is started fresh, primed untimed (N requests of other user messages at once with
// max_tokens 2, then one request alone: JIT, the key's first read, the shared template prefix into the prefix cache,
// the gateway's link to the worker), timed, and stopped (SIGTERM: usage is committed as it exits). Rounds alternate
// which configuration goes first (serve/gateway, gateway/serve, ...), so neither always runs first. Ratios and added
// TTFT are paired within a round and reported as the median over rounds with the spread (min to max).
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { KV_BLOCK_SIZE } from "../engine/load.js";
import { type LoomProcess, startLoom } from "../server/testing/loom-process.js";
import { BenchCli } from "./bench-args.js";
import { median, percentile, printHeader } from "./bench-models.js";
import { type Conversation, buildConversations, openAiBody, parseRange } from "./chat-workload.js";
import { DEFAULT_MODEL, RAISED_LIMITS, REQUEST_LIMITS_ONLY, modelFile, openBenchPlatform, servedSlug, stop } from "./cluster-bench.js";
import { type LoadClient, type RequestTiming, processClient } from "./http-load-client.js";
import { processCpuSeconds } from "./machine.js";

const CONFIGURATIONS = ["serve", "gateway"] as const;
type ConfigurationName = (typeof CONFIGURATIONS)[number];
const LABEL: Record<ConfigurationName, string> = { serve: "loom serve", gateway: "gateway + 1 worker" };
/** The targets set for the gateway. */
const TARGET_COST_PERCENT = 3;
const TARGET_ADDED_P50_MS = 2;

/** What every configuration shares. */
interface Setup {
  modelPath: string;
  threads: number;
  context: number;
  /** The platform's PostgreSQL URL with the schema in its options. */
  schemaUrl: string;
  redisUrl: string;
  env: NodeJS.ProcessEnv;
  /** A temporary folder for serve's config files. */
  scratch: string;
  key: string;
}

/** A configuration's running processes. */
interface Running {
  base: string;
  /** The chat-completions slug the server lists. */
  slug: string;
  processes: Array<{ role: string; process: LoomProcess }>;
}

/** One timed run of one configuration. */
interface Run {
  seconds: number;
  requests: RequestTiming[];
  /** CPU seconds of each server process during the run, by role (serve; gateway, worker). */
  cpuSeconds: Record<string, number>;
  clientCpuSeconds: number;
}

type Outcome = { run: Run; error?: undefined } | { run?: undefined; error: string };

/** Starts a configuration's processes, ready to serve; `children` collects them for the cleanup. */
async function start(name: ConfigurationName, setup: Setup, maxSequences: number, children: ChildProcess[]): Promise<Running> {
  const options = { env: setup.env, children };
  const shared = ["--threads", String(setup.threads), "--context", String(setup.context)];
  const processes: Running["processes"] = [];
  const describe = () => processes.map(({ role, process }) => `${role}: ${process.stderr().slice(-1500)}`).join("\n");
  if (name === "serve") {
    const config = join(setup.scratch, `serve-${maxSequences}.json`);
    writeFileSync(config, JSON.stringify({ models: [{ path: setup.modelPath, maxSequences }] }));
    const serve = await startLoom("serve", ["--config", config, "--database-url", setup.schemaUrl, "--redis-url", setup.redisUrl, "--port", "0", ...shared], options);
    processes.push({ role: "serve", process: serve });
  } else {
    const worker = await startLoom("worker", ["--model", setup.modelPath, "--register", setup.redisUrl, "--port", "0", "--max-sequences", String(maxSequences), ...shared], options);
    processes.push({ role: "worker", process: worker });
    const gateway = await startLoom("gateway", ["--database-url", setup.schemaUrl, "--redis-url", setup.redisUrl, "--port", "0"], options);
    processes.unshift({ role: "gateway", process: gateway });
  }
  const base = processes[0].process.base;
  return { base, slug: await servedSlug(base, setup.key, describe), processes };
}

/** Stops a configuration: the front process first (a gateway commits its usage), then the worker. */
async function stopAll(running: Running): Promise<void> {
  for (const { process } of running.processes) await stop(process.child);
}

/**
 * One run: the configuration started fresh, primed untimed, `bodies` timed from `concurrency` client loops, stopped.
 * A failure (a process that does not start, an HTTP error, an error event in a stream) is returned, not thrown.
 */
async function runOnce(
  name: ConfigurationName, setup: Setup, client: LoadClient, level: { concurrency: number; maxSequences: number },
  conversations: Conversation[], prime: Conversation[], decode: number, children: ChildProcess[], sent: { requests: number },
): Promise<Outcome> {
  let running: Running | undefined;
  try {
    running = await start(name, setup, level.maxSequences, children);
    const slug = running.slug;
    const url = `${running.base}/v1/chat/completions`;
    const headers = { authorization: `Bearer ${setup.key}` };
    const primeBodies = prime.map((c) => openAiBody(slug, undefined, c.user, 2));
    sent.requests += primeBodies.length + 1;
    await client.run({ url, format: "openai", headers, bodies: primeBodies, concurrency: primeBodies.length });
    await client.run({ url, format: "openai", headers, bodies: [openAiBody(slug, undefined, prime[0].user, 2)], concurrency: 1 });
    const bodies = conversations.map((c) => openAiBody(slug, undefined, c.user, decode));
    const before = running.processes.map(({ process }) => processCpuSeconds(process.child.pid!));
    sent.requests += bodies.length;
    const result = await client.run({ url, format: "openai", headers, bodies, concurrency: level.concurrency });
    const after = running.processes.map(({ process }) => processCpuSeconds(process.child.pid!));
    const cpuSeconds = Object.fromEntries(running.processes.map(({ role }, i) => [role, after[i] - before[i]]));
    return { run: { seconds: result.seconds, requests: result.requests, cpuSeconds, clientCpuSeconds: result.cpuSeconds } };
  } catch (error) {
    const stderr = running?.processes.map(({ role, process }) => `${role} stderr ends: ${process.stderr().slice(-800)}`).join("; ") ?? "";
    return { error: `${(error as Error).message}${stderr ? `; ${stderr}` : ""}` };
  } finally {
    if (running) await stopAll(running);
  }
}

const outputTokens = (run: Run) => run.requests.reduce((sum, r) => sum + Math.max(0, r.outputTokens), 0);
const tokensPerSecond = (run: Run) => outputTokens(run) / run.seconds;
const requestsPerSecond = (run: Run) => run.requests.length / run.seconds;
const ttfts = (run: Run) => run.requests.map((r) => 1000 * r.ttft).filter(Number.isFinite);
const ttftP50 = (run: Run) => percentile(ttfts(run), 0.5);
const ttftP99 = (run: Run) => percentile(ttfts(run), 0.99);
const itlP50 = (run: Run) => percentile(run.requests.flatMap((r) => r.gaps.map((gap) => 1000 * gap)), 0.5);
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");

/** "median (min to max)" of values; the value alone when there is one. */
function spread(values: number[], digits: number, unit = ""): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return "n/a";
  if (finite.length === 1) return `${fixed(finite[0], digits)}${unit}`;
  return `${fixed(median(finite), digits)}${unit} (${fixed(Math.min(...finite), digits)} to ${fixed(Math.max(...finite), digits)})`;
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/gateway-overhead.js [--concurrency 1,4,16,64] [--requests N] [--decode N]
       [--repeats N] [--model preset:dtype] [--threads 1] [--prompt 32-48] [--context N] [--max-sequences N]
       [--token-limits on|off] [--database-url URL] [--redis-url URL] [--quick]`;
const cli: BenchCli = new BenchCli("gateway-overhead", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    concurrency: { type: "string" }, requests: { type: "string" }, decode: { type: "string" }, repeats: { type: "string" }, model: { type: "string" },
    threads: { type: "string" }, prompt: { type: "string" }, context: { type: "string" }, "max-sequences": { type: "string" },
    "token-limits": { type: "string" }, "database-url": { type: "string" }, "redis-url": { type: "string" }, quick: { type: "boolean" },
  });
  const quick = values.quick ?? false;
  const levels = cli.integers("concurrency", values.concurrency ?? (quick ? "1,4" : "1,4,16,64"));
  const decode = cli.integer("decode", values.decode ?? (quick ? 8 : 32));
  const repeats = cli.integer("repeats", values.repeats ?? (quick ? 2 : 3));
  const threads = cli.integer("threads", values.threads ?? 1);
  const prompt = cli.check(() => parseRange(values.prompt ?? "32-48", "prompt"));
  const fixedRequests = values.requests === undefined ? undefined : cli.integer("requests", values.requests);
  const fixedSequences = values["max-sequences"] === undefined ? undefined : cli.integer("max-sequences", values["max-sequences"]);
  const context = cli.integer("context", values.context ?? Math.ceil((prompt.max + decode + 16) / KV_BLOCK_SIZE) * KV_BLOCK_SIZE);
  const minRequests = quick ? 8 : 16;
  const tokenLimits = cli.oneOf("token-limits", values["token-limits"] ?? "on", ["on", "off"]);
  if (fixedRequests !== undefined && fixedRequests < Math.max(...levels)) cli.fail(`--requests ${fixedRequests}: at least N requests per run (N up to ${Math.max(...levels)})`);
  if (context < prompt.max + decode + 1) cli.fail(`--context ${context} cannot hold ${prompt.max} prompt tokens and ${decode} output tokens`);
  const modelSpec = values.model ?? DEFAULT_MODEL;
  const model = await modelFile(modelSpec);
  const requestsAt = (n: number) => fixedRequests ?? Math.max(2 * n, minRequests);
  const sequencesAt = (n: number) => fixedSequences ?? n;

  // The platform: a schema of its own, one organization and one inference key, shared by both configurations.
  const platform = await openBenchPlatform({
    bench: "gateway-overhead", databaseUrl: values["database-url"], redisUrl: values["redis-url"], limits: tokenLimits === "on" ? RAISED_LIMITS : REQUEST_LIMITS_ONLY,
  });
  const { stores, organizationId, key, postgresVersion, redisVersion } = platform;
  const scratch = mkdtempSync(join(tmpdir(), "loom-gateway-overhead-"));
  const children: ChildProcess[] = [];
  const client = processClient();
  try {
    const setup: Setup = { modelPath: model.path, threads, context, redisUrl: platform.redisUrl, scratch, key, schemaUrl: platform.schemaUrl, env: platform.env };

    const command = `node dist/bench/gateway-overhead.js --concurrency ${levels.join(",")}${fixedRequests !== undefined ? ` --requests ${fixedRequests}` : ""} --decode ${decode} `
      + `--repeats ${repeats} --model ${modelSpec} --threads ${threads} --prompt ${prompt.min}-${prompt.max} --context ${context}`
      + `${fixedSequences !== undefined ? ` --max-sequences ${fixedSequences}` : ""}${tokenLimits === "off" ? " --token-limits off" : ""}${values["database-url"] ? " --database-url URL" : ""}${values["redis-url"] ? " --redis-url URL" : ""}${quick ? " --quick" : ""}`;
    const machine = printHeader(command, threads, [
      `model ${model.preset} ${model.dtype.toUpperCase()} random weights (${model.path}); every process from dist/server/cli/main.js, --threads ${threads} --context ${context}, `
        + `max sequences ${fixedSequences ?? "N"}, default KV budget`,
      `configurations: ${LABEL.serve} (the platform and the engine in one process) | ${LABEL.gateway} (loom gateway -> WebSocket /cluster -> loom worker), one at a time, `
        + `each started fresh per run and primed untimed`,
      `platform: ${platform.describe()} for limits `
        + `and discovery; one organization, one inference key; `
        + (tokenLimits === "on"
          ? "limits raised (requests/min, tokens/min, tokens/day buckets still reserved): admission counts each prompt (serve: on its HTTP thread; gateway: asks the worker)"
          : "requests/min only (--token-limits off): admission counts no prompt tokens"),
      `workload: POST /v1/chat/completions, stream true, no system prompt (the template's default), ${prompt.min}-${prompt.max} prompt tokens, max_tokens ${decode}, `
        + `temperature 0; N client loops (node:http keep-alive) in a forked client process; requests per run ${levels.map((n) => `N=${n}: ${requestsAt(n)}`).join(", ")}`,
      `rounds: ${repeats} per level, each configuration once per round, which goes first alternating; ratios and added TTFT paired within a round, median (min to max)`,
      `load average at the start (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`,
    ]);

    const started = performance.now();
    const sent = { requests: 0 };
    const results = new Map<number, Record<ConfigurationName, Outcome[]>>();
    const check = { responses: 0, fullDecode: 0, pairs: 0, promptEqual: 0, textEqual: 0, promptMin: Number.POSITIVE_INFINITY, promptMax: 0 };
    for (const concurrency of levels) {
      const requests = requestsAt(concurrency);
      const conversations = buildConversations(model.path, requests, prompt, { min: decode, max: decode }, 4321 + concurrency, undefined);
      const prime = buildConversations(model.path, concurrency, prompt, { min: 2, max: 2 }, 9876 + concurrency, undefined);
      const level = { concurrency, maxSequences: sequencesAt(concurrency) };
      const outcomes: Record<ConfigurationName, Outcome[]> = { serve: [], gateway: [] };
      for (let round = 0; round < repeats; round++) {
        const order = round % 2 === 0 ? CONFIGURATIONS : [...CONFIGURATIONS].reverse();
        for (const name of order) {
          const outcome = await runOnce(name, setup, client, level, conversations, prime, decode, children, sent);
          if (outcome.error !== undefined) process.stderr.write(`N=${concurrency}, round ${round + 1}, ${LABEL[name]}: failed: ${outcome.error}\n`);
          outcomes[name].push(outcome);
        }
        const [a, b] = [outcomes.serve[round].run, outcomes.gateway[round].run];
        for (const run of [a, b]) {
          if (!run) continue;
          check.responses += run.requests.length;
          check.fullDecode += run.requests.filter((r) => r.outputTokens === decode).length;
          for (const r of run.requests) [check.promptMin, check.promptMax] = [Math.min(check.promptMin, r.promptTokens), Math.max(check.promptMax, r.promptTokens)];
        }
        // The same body must be the same engine work and the same greedy text through either configuration.
        if (a && b) {
          check.pairs += a.requests.length;
          check.promptEqual += a.requests.filter((r, i) => r.promptTokens === b.requests[i].promptTokens).length;
          check.textEqual += a.requests.filter((r, i) => r.text === b.requests[i].text).length;
        }
      }
      results.set(concurrency, outcomes);
    }
    const seconds = (performance.now() - started) / 1000;

    console.log("");
    console.log("| N | requests | configuration | output tok/s | requests/s | tok/s ratio to serve | throughput cost | TTFT p50 (ms) | TTFT p99 (ms) | added TTFT p50 (ms) | added TTFT p99 (ms) | ITL p50 (ms) | server CPU (ms/request) | failed runs |");
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    const verdicts: string[] = [];
    const levelJson: unknown[] = [];
    for (const concurrency of levels) {
      const outcomes = results.get(concurrency)!;
      const entry: Record<string, unknown> = { concurrency, requests: requestsAt(concurrency), maxSequences: sequencesAt(concurrency) };
      // Rounds where both configurations completed: the pairs the ratios come from.
      const pairs = outcomes.serve.map((outcome, r) => [outcome.run, outcomes.gateway[r].run] as const).filter((pair): pair is readonly [Run, Run] => pair[0] !== undefined && pair[1] !== undefined);
      const ratios = pairs.map(([a, b]) => tokensPerSecond(b) / tokensPerSecond(a));
      const cost = ratios.map((ratio) => 100 * (1 - ratio));
      const addedP50 = pairs.map(([a, b]) => ttftP50(b) - ttftP50(a));
      const addedP99 = pairs.map(([a, b]) => ttftP99(b) - ttftP99(a));
      for (const name of CONFIGURATIONS) {
        const runs = outcomes[name].flatMap((outcome) => (outcome.run ? [outcome.run] : []));
        const failed = outcomes[name].filter((outcome) => outcome.error !== undefined);
        const isBase = name === "serve";
        const roles = name === "serve" ? ["serve"] : ["gateway", "worker"];
        const cpuPerRequest = roles.map((role) => (1000 * sum(runs.map((run) => run.cpuSeconds[role]))) / sum(runs.map((run) => run.requests.length)));
        console.log(`| ${concurrency} | ${requestsAt(concurrency)} | ${LABEL[name]} | ${spread(runs.map(tokensPerSecond), 1)} | ${spread(runs.map(requestsPerSecond), 2)} | `
          + `${isBase ? "1" : spread(ratios, 3)} | ${isBase ? "-" : spread(cost, 1, "%")} | ${spread(runs.map(ttftP50), 1)} | ${spread(runs.map(ttftP99), 1)} | `
          + `${isBase ? "-" : spread(addedP50, 2)} | ${isBase ? "-" : spread(addedP99, 1)} | ${spread(runs.map(itlP50), 1)} | `
          + `${roles.map((role, i) => `${roles.length > 1 ? `${role} ` : ""}${fixed(cpuPerRequest[i], 1)}`).join(", ")} | ${failed.length} of ${outcomes[name].length} |`);
        entry[name] = {
          cpuMsPerRequest: Object.fromEntries(roles.map((role, i) => [role, cpuPerRequest[i]])),
          runs: outcomes[name].map((outcome) => outcome.run
            ? {
                seconds: outcome.run.seconds, outputTokens: outputTokens(outcome.run), outputTokensPerSecond: tokensPerSecond(outcome.run),
                requestsPerSecond: requestsPerSecond(outcome.run), ttftP50Ms: ttftP50(outcome.run), ttftP99Ms: ttftP99(outcome.run), itlP50Ms: itlP50(outcome.run),
                cpuSeconds: outcome.run.cpuSeconds, clientCpuSeconds: outcome.run.clientCpuSeconds,
              }
            : { error: outcome.error }),
        };
      }
      entry.paired = { rounds: pairs.length, tokensPerSecondRatio: ratios, throughputCostPercent: cost, addedTtftP50Ms: addedP50, addedTtftP99Ms: addedP99 };
      levelJson.push(entry);
      if (pairs.length > 0) {
        const [medianCost, medianAdded] = [median(cost), median(addedP50)];
        verdicts.push(`N=${concurrency}: throughput cost ${fixed(medianCost, 1)}% (${medianCost < TARGET_COST_PERCENT ? "met" : "MISSED"}, target < ${TARGET_COST_PERCENT}%; rounds ${fixed(Math.min(...cost), 1)} to ${fixed(Math.max(...cost), 1)}%), `
          + `added p50 TTFT ${fixed(medianAdded, 2)} ms (${medianAdded < TARGET_ADDED_P50_MS ? "met" : "MISSED"}, target < ${TARGET_ADDED_P50_MS} ms; rounds ${fixed(Math.min(...addedP50), 2)} to ${fixed(Math.max(...addedP50), 2)} ms)`);
      } else {
        verdicts.push(`N=${concurrency}: no round where both configurations completed`);
      }
    }

    // Every request sent (primes and warm-ups too) must be in the platform's usage, whichever configuration served it.
    const days = [...new Set([machine.date, new Date().toISOString().slice(0, 10)])];
    const usage = (await Promise.all(days.map((day) => stores.usage.today(organizationId, day)))).flat();
    const recorded = sum(usage.map((row) => row.requests));

    console.log("");
    console.log("output tok/s = output tokens (from usage) / wall time of the run (ramp-up and drain of the N loops included, alike in both); requests/s likewise;");
    console.log("tok/s ratio = the gateway's output tok/s / serve's in the same round; throughput cost = 1 - that; TTFT = request sent to the first non-empty content delta,");
    console.log("at the client (admission and queueing included), p50/p99 over one run's requests; added TTFT = the gateway's minus serve's in the same round;");
    console.log("ITL = gaps between content deltas; server CPU = user + system CPU of each server process (all threads: the engine's too) during the timed runs, per request.");
    console.log(`checks: ${check.fullDecode} of ${check.responses} responses generated exactly ${decode} tokens (prompts of ${check.promptMin}-${check.promptMax} tokens by their usage); `
      + `of ${check.pairs} gateway responses, ${check.promptEqual} reported the prompt tokens and ${check.textEqual} streamed the text of serve's response to the same body `
      + `in the same round; the platform recorded ${recorded} of the ${sent.requests} requests sent (primes included)`);
    for (const line of verdicts) console.log(`target: ${line}`);
    console.log(`${fixed(seconds, 0)} s in all; load average at the end (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`);
    console.log(JSON.stringify({
      bench: "gateway-overhead", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, threads, node: process.version, model: `${model.preset}-${model.dtype}`,
      prompt, decode, context, repeats, tokenLimits, postgres: postgresVersion, redis: redisVersion,
      checks: { ...check, promptMin: check.responses > 0 ? check.promptMin : null, decode, usageRequestsRecorded: recorded, requestsSent: sent.requests }, levels: levelJson,
    }));
  } finally {
    client.close();
    await Promise.all(children.map(stop));
    await platform.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
