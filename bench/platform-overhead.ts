// The platform's cost on the request path: non-streaming chat completions with short outputs through
// loom's HTTP server with the platform on (PGlite, PostgreSQL) and with --no-auth, at several concurrencies. Per level:
// requests/s and its ratio to --no-auth, per-request latency p50/p99 and the p50 added to --no-auth's, the HTTP
// thread's CPU per request and what the platform adds to it (paired with --no-auth's in the same round), and where the
// platform's time goes, timed inside the server; then each platform piece alone on an idle server. Targets (issue 36):
// under 0.5 ms of platform CPU per request and under 2% throughput cost at N=16 (and under 1 ms p50 added latency).
// CPU time is the figure to trust on a loaded machine: wall-clock ratios move with whatever else runs.
// Run: npm run build && node dist/bench/platform-overhead.js [options] (USAGE below; --help prints it).
// --modes may also name pglite-http-count and postgres-http-count: the platform with admission's prompt count on the
// HTTP thread and the prompt prepared again for the engine (as before issue 36), paired with the others round by round.
// --cpu-profile: the server's main thread sampled during the levels (not the set-up or the pieces), written as a
// .cpuprofile (Chrome DevTools; bench/cpu-profile-summary.ts sums it by piece of the request path).
//
// Setup: the SmolLM2-135M-shaped Q8_0 random model on one engine thread (WorkerEngine, as `loom serve` runs it) that
// every mode's server shares, maxSequences = the highest concurrency, f32 KV for all of them (nothing is preempted),
// prefix caching on. Each mode is a startServer on 127.0.0.1 over that engine, all listening for the whole bench:
// - no-auth: OpenAccess and nothing metered (`loom serve --no-auth`);
// - pglite / postgres: openPlatform on a temporary data dir / on PostgreSQL (127.0.0.1:5432 database test, or
//   --database-url) in a schema of its own, dropped after; limits in memory (no --redis-url); a fresh organization
//   whose limits are raised so that nothing is refused (its buckets still apply: requests and tokens per minute and
//   tokens per day, reserved at admission and corrected at settlement) and one inference key. The platform's
//   Authenticator and Accountant are wrapped in timers (bench/platform-pieces.ts; a few microseconds per request);
//   as in `loom serve`, admission counts prompt tokens on the HTTP thread (PromptCounter).
// Workload: the support system prompt of bench/http-load.ts and a user message of seeded words, `--prompt` tokens after
// the template, max_tokens `--max-tokens`, temperature 0, stream false; N client loops over node:http keep-alive in a
// forked client process (bench/http-load-client.ts). Every run sends the same bodies; the prompts are sized so that
// each request reuses exactly the shared prefix's whole KV blocks and computes the rest (its last, partial block is
// never cached), so every run does the same engine work whichever mode ran before it (checked on every response).
// Interleaving: per level, one untimed warm-up run per mode, then `--rounds` rounds of one run per mode, the order
// rotated each round (A B C, B C A, ...), so machine noise falls on every mode alike; ratios and added latency are
// taken within a round (paired) and reported as the median over rounds with the spread (min to max).
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { loadavg } from "node:os";
import type { ServingEngine } from "../engine/engine.js";
import { WorkerEngine } from "../engine/host/worker-engine.js";
import { KV_BLOCK_SIZE } from "../engine/load.js";
import { openModelSource } from "../engine/model/source.js";
import { type PromptModel, preparePrompt } from "../engine/prompt.js";
import { tokenizerFromGguf } from "../engine/tokenizer/gguf.js";
import { createEndpoints } from "../server/adapters/endpoints.js";
import { OpenAccess } from "../server/http/auth.js";
import { PromptCounter } from "../engine/prompt-counter.js";
import { ModelRegistry, defaultSlugs } from "../server/models.js";
import type { Database } from "../server/platform/contract.js";
import { type Platform, openPlatform } from "../server/platform/platform.js";
import { TEST_POSTGRES_URL, dropSchema, temporaryDataDir } from "../server/platform/testing/test-databases.js";
import { startServer } from "../server/server.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, f32KvBytes, median, percentile, printHeader } from "./bench-models.js";
import { type Conversation, SUPPORT_SYSTEM_PROMPT, buildConversations, openAiBody, parseRange } from "./chat-workload.js";
import { type LoadClient, processClient } from "./http-load-client.js";
import { mainThreadOnCpuSeconds } from "./machine.js";
import { type CodePart, type CpuProfile, type Window, cpuByPart } from "./cpu-profile-summary.js";
import { type PieceTiming, type Spans, TimedAccountant, TimedAuthenticator, emptySpans, isolatedPieces } from "./platform-pieces.js";

const PRESET = "smollm2-135m";
const DTYPE = "q8_0";
const ALL_MODES = ["no-auth", "pglite", "postgres", "pglite-http-count", "postgres-http-count"] as const;
/** Run unless --modes names others: the *-http-count modes are the platform as before issue 36, for a paired comparison. */
const DEFAULT_MODES = ["no-auth", "pglite", "postgres"];
type ModeName = (typeof ALL_MODES)[number];
const LABEL: Record<ModeName, string> = {
  "no-auth": "--no-auth", pglite: "platform, PGlite", postgres: "platform, PostgreSQL",
  "pglite-http-count": "platform, PGlite, count on the HTTP thread", "postgres-http-count": "platform, PostgreSQL, count on the HTTP thread",
};
const onPostgres = (name: ModeName) => name.startsWith("postgres");
/** Requests per run by concurrency, unless --requests says otherwise (about 3-15 s per run on the 2-core machine). */
const DEFAULT_REQUESTS: Record<number, number> = { 1: 32, 4: 40, 16: 64, 64: 128 };
/** Limits high enough that the bench never meets them (the buckets are still reserved and corrected). */
const RAISED_LIMITS = { requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000_000, tokensPerDay: 1_000_000_000_000 };

/** One mode's server, and what a client sends it. */
interface Mode {
  name: ModeName;
  url: string;
  headers: Record<string, string>;
  platform?: Platform;
  /** The platform's inference key (--no-auth sends a dummy of the same length). */
  key: string;
  /** Where the timers put the current run's spans (platform modes). */
  spans: Spans;
  /** The platform database's calls during the current run (statements and transactions; background reads too). */
  databaseCalls: number;
}

/** One timed run of one mode. */
interface Run {
  seconds: number;
  /** Per request, milliseconds from the POST to the end of the response body. */
  latencies: number[];
  /** CPU seconds of the server's main thread (HTTP server and platform: the engine and prompts have their own threads). */
  mainCpuSeconds: number;
  spans: Spans;
  /** The platform database's calls during the run: statements outside transactions, and transactions. */
  databaseCalls: number;
  /** Responses whose usage disagrees with the prompt tokens counted here. */
  promptMismatches: number;
  /** Responses that did not reuse exactly the shared prefix's whole KV blocks (the engine work would differ). */
  cachedMismatches: number;
}

const requestsPerSecond = (run: Run) => run.latencies.length / run.seconds;
/** The server's main-thread CPU per request in a run, ms. */
const cpuPerRequest = (run: Run) => (1000 * run.mainCpuSeconds) / run.latencies.length;
/** Targets of issue 36. */
const TARGET = { cpuMs: 0.5, costPercent: 2, addedP50Ms: 1, costLevel: 16 };
const p50 = (run: Run) => percentile(run.latencies, 0.5);
const p99 = (run: Run) => percentile(run.latencies, 0.99);
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** `engine` without prepareAhead: a prompt counted for admission on the HTTP thread and prepared again at submit. */
function withoutPrepareAhead(engine: WorkerEngine): ServingEngine {
  return {
    submit: (request) => engine.submit(request),
    abort: (id) => engine.abort(id),
    get queueDepth() {
      return engine.queueDepth;
    },
    stats: () => engine.stats(),
    countTokens: (request) => engine.countTokens(request),
    tokenize: (request) => engine.tokenize(request),
    detokenize: (request) => engine.detokenize(request),
    get unavailable() {
      return engine.unavailable;
    },
  };
}

/** The model's template and tokenizer on this thread. */
function promptModelOf(path: string): PromptModel {
  const source = openModelSource(path);
  return { tokenizer: tokenizerFromGguf(source.ggufMetadata!, path), chatTemplate: source.chatTemplate, vocabSize: source.config.vocab_size };
}

/** Starts a mode's server; `cleanups` gets what undoes it, in order. */
async function startMode(name: ModeName, registries: { plain: ModelRegistry; platform: ModelRegistry; httpCount: ModelRegistry }, databaseUrl: string | undefined, cleanups: Array<() => Promise<void>>): Promise<Mode> {
  // As loom serve: with the platform on, prompts are counted for admission on the HTTP thread (PromptCounter).
  const registry = name === "no-auth" ? registries.plain : name.endsWith("-http-count") ? registries.httpCount : registries.platform;
  const endpoints = createEndpoints(registry);
  const mode = { name, spans: emptySpans(), databaseCalls: 0 };
  if (name === "no-auth") {
    const server = await startServer({ registry, auth: new OpenAccess(), endpoints }, "127.0.0.1", 0);
    cleanups.push(async () => server.close());
    const key = `sk-gw-${"x".repeat(43)}`;
    return { ...mode, url: `http://127.0.0.1:${server.port}/v1/chat/completions`, headers: { authorization: `Bearer ${key}` }, key };
  }
  let platform: Platform;
  if (onPostgres(name)) {
    const schema = `loom_bench_${randomBytes(6).toString("hex")}`;
    cleanups.push(() => dropSchema(databaseUrl!, schema));
    platform = await openPlatform({ databaseUrl: databaseUrl!, schema });
  } else {
    const dataDir = temporaryDataDir();
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    platform = await openPlatform({ dataDir });
  }
  cleanups.push(() => platform.close());
  const organization = await platform.stores.organizations.create("platform-overhead bench", RAISED_LIMITS);
  const { key } = await platform.stores.keys.create(organization.id, "inference", "bench");
  const result: Mode = { ...mode, url: "", headers: { authorization: `Bearer ${key}` }, platform, key };
  countCalls(platform.database, () => {
    result.databaseCalls += 1;
  });
  const auth = new TimedAuthenticator(platform.authenticator, () => result.spans);
  const accountant = new TimedAccountant(platform.accountant, () => result.spans);
  const server = await startServer({ registry, auth, accountant, endpoints }, "127.0.0.1", 0, [platform.surface]);
  cleanups.push(async () => server.close());
  result.url = `http://127.0.0.1:${server.port}/v1/chat/completions`;
  return result;
}

/**
 * Sends `bodies` (the `conversations` in order, repeated) to a mode from `concurrency` loops, with the server's
 * main-thread CPU read around the run and the platform's spans collected; each response's usage is checked: its
 * prompt tokens, and `cached` of them reused.
 */
async function timedRun(client: LoadClient, mode: Mode, bodies: string[], conversations: Conversation[], cached: number, concurrency: number): Promise<Run> {
  mode.spans = emptySpans();
  mode.databaseCalls = 0;
  const cpuBefore = mainThreadOnCpuSeconds();
  const result = await client.run({ url: mode.url, format: "openai", headers: mode.headers, bodies, concurrency, stream: false });
  const mainCpuSeconds = mainThreadOnCpuSeconds() - cpuBefore;
  return {
    seconds: result.seconds,
    latencies: result.requests.map((r) => r.total * 1000),
    mainCpuSeconds,
    spans: mode.spans,
    databaseCalls: mode.databaseCalls,
    promptMismatches: result.requests.filter((r, i) => r.promptTokens !== conversations[i % conversations.length].promptTokens).length,
    cachedMismatches: result.requests.filter((r) => r.cachedTokens !== cached).length,
  };
}

/** Calls `count` on each of `database`'s statements outside a transaction and each transaction (its statements are one). */
function countCalls(database: Database, count: () => void): void {
  const methods = database as unknown as Record<"query" | "queryPrepared" | "transaction", (...args: unknown[]) => unknown>;
  for (const name of ["query", "queryPrepared", "transaction"] as const) {
    const original = methods[name].bind(database);
    methods[name] = (...args) => {
      count();
      return original(...args);
    };
  }
}

/** Tokens at the start of every conversation's rendered prompt that all of them share (what the prefix cache can reuse). */
function sharedPrefixTokens(promptModel: PromptModel, conversations: Conversation[]): number {
  const tokens = conversations.map((c) => preparePrompt(promptModel, { messages: [{ role: "system", content: SUPPORT_SYSTEM_PROMPT }, { role: "user", content: c.user }] }, undefined).tokens);
  let shared = 0;
  while (tokens.every((t) => shared < t.length && t[shared] === tokens[0][shared])) shared++;
  return shared;
}

/** Requests per run at each level: `--requests` (a list matching --concurrency), else the defaults. */
function requestCounts(levels: number[], text: string | undefined): number[] {
  const counts = text === undefined ? levels.map((n) => DEFAULT_REQUESTS[n] ?? Math.max(32, 2 * n)) : text.split(",").map(Number);
  if (counts.length !== levels.length) throw new RangeError(`--requests needs one count per --concurrency level (${levels.length}), got ${text}`);
  counts.forEach((count, i) => {
    if (!Number.isInteger(count) || count < levels[i]) throw new RangeError(`--requests: at least N requests per run at N=${levels[i]}, got ${count}`);
  });
  return counts;
}

/** Samples this thread's CPU until stop(), which gives the profile (the levels only: the set-up would swamp them). */
async function startCpuProfile(): Promise<{ stop: () => Promise<object> }> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 500 });
  await session.post("Profiler.start");
  return {
    stop: async () => {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      return profile;
    },
  };
}

const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");

/** "median (min to max)" of values. */
function spread(values: number[], digits: number, unit = ""): string {
  if (values.length === 0) return "n/a";
  return `${fixed(median(values), digits)}${unit} (${fixed(Math.min(...values), digits)} to ${fixed(Math.max(...values), digits)})`;
}

/** The spans of several runs together. */
function pooled(runs: Run[]): Spans {
  const spans = emptySpans();
  for (const run of runs) for (const field of Object.keys(spans) as Array<keyof Spans>) spans[field].push(...run.spans[field]);
  return spans;
}

/** The platform's parts of the request path, as the profile's script URLs name them. */
const PLATFORM_PARTS: CodePart[] = [
  { name: "authentication (key cache: SHA-256, lookup)", url: /server\/platform\/keys\// },
  { name: "prompt count (the prompt handed to the prompt thread; --no-auth hands it over at submit)", url: /server\/inference\/admission-request\.js$/ },
  { name: "admission and settlement (limit buckets, headers, usage record)", url: /server\/platform\/(accountant|pricing|platform)\.js$|server\/platform\/limits\// },
  { name: "usage writer (the batch, its JSON)", url: /server\/platform\/store\/usage-writer\.js$/ },
  { name: "PGlite (usage commits, key and organization reads: WebAssembly and its files)", url: /@electric-sql\/pglite|pglite-database\.js$/ },
  { name: "PostgreSQL driver (pg: protocol, sockets, result rows)", url: /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\/|postgres-database\.js$/ },
  { name: "the bench's timers (platform-pieces)", url: /bench\/platform-pieces\.js$/ },
];

const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** Where the server's main thread spent its CPU during each mode's runs, by part of the platform, per request. */
function printProfile(profile: CpuProfile, modes: Mode[], profiled: Map<ModeName, { requests: number; windows: Window[] }>, path: string): void {
  const byMode = modes.map((mode) => ({ mode, totals: cpuByPart(profile, PLATFORM_PARTS, profiled.get(mode.name)!.windows), requests: profiled.get(mode.name)!.requests }));
  console.log("");
  console.log(`The server's main thread, sampled every 0.5 ms during each mode's runs of the levels (${path}), in ms per request; each sample goes to`);
  console.log("the innermost platform part on its stack. Sampling costs CPU of its own: compare the parts, not the totals, with a run without --cpu-profile.");
  console.log("");
  console.log(`| part | ${byMode.map(({ mode }) => LABEL[mode.name]).join(" | ")} |`);
  console.log(`|---|${byMode.map(() => "---|").join("")}`);
  for (const name of [...PLATFORM_PARTS.map((part) => part.name), "other"]) {
    const label = name === "other" ? "everything else (HTTP, routes, JSON, engine messages, promises, GC)" : name;
    console.log(`| ${label} | ${byMode.map(({ totals, requests }) => fixed(totals.get(name)! / requests, 3)).join(" | ")} |`);
  }
  const busy = (totals: Map<string, number>) => [...totals].filter(([name]) => name !== "idle").reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`| total (not idle) | ${byMode.map(({ totals, requests }) => fixed(busy(totals) / requests, 3)).join(" | ")} |`);
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/platform-overhead.js [--threads 1] [--concurrency 1,4,16,64]
       [--requests 32,40,64,128] [--rounds 3] [--prompt 56-59] [--max-tokens 4]
       [--modes no-auth,pglite,postgres] [--database-url URL] [--cpu-profile FILE]`;
const cli: BenchCli = new BenchCli("platform-overhead", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    threads: { type: "string" }, concurrency: { type: "string" }, requests: { type: "string" }, rounds: { type: "string" }, prompt: { type: "string" },
    "max-tokens": { type: "string" }, modes: { type: "string" }, "database-url": { type: "string" }, "cpu-profile": { type: "string" },
  });
  const threads = cli.integer("threads", values.threads ?? 1);
  const levels = cli.integers("concurrency", values.concurrency ?? "1,4,16,64");
  const rounds = cli.integer("rounds", values.rounds ?? 3);
  const prompt = cli.check(() => parseRange(values.prompt ?? "56-59", "prompt"));
  const maxTokens = cli.integer("max-tokens", values["max-tokens"] ?? 4);
  const counts = cli.check(() => requestCounts(levels, values.requests));
  const requestedModes = cli.someOf("modes", values.modes ?? DEFAULT_MODES.join(","), ALL_MODES);
  if (!requestedModes.includes("no-auth")) cli.fail("--modes must include no-auth: the other modes are measured against it");
  const databaseUrl = values["database-url"] ?? TEST_POSTGRES_URL;
  const skipped: string[] = [];
  const modeNames = ALL_MODES.filter((mode) => requestedModes.includes(mode)).filter((mode) => {
    if (!onPostgres(mode) || databaseUrl !== undefined) return true;
    skipped.push(`${LABEL[mode]}: no PostgreSQL at 127.0.0.1:5432 (database test) answered; pass --database-url`);
    return false;
  });

  const path = await benchModelPath(PRESET, DTYPE);
  const promptModel = promptModelOf(path);
  const maxLevel = Math.max(...levels);
  const contextSize = Math.ceil((prompt.max + maxTokens + 1) / KV_BLOCK_SIZE) * KV_BLOCK_SIZE;
  const pool = buildConversations(path, 256, prompt, { min: maxTokens, max: maxTokens }, 15015, SUPPORT_SYSTEM_PROMPT);
  const shared = sharedPrefixTokens(promptModel, pool);
  const cachedPerRequest = Math.floor(shared / KV_BLOCK_SIZE) * KV_BLOCK_SIZE;
  const command = `node dist/bench/platform-overhead.js --threads ${threads} --concurrency ${levels.join(",")} --requests ${counts.join(",")} --rounds ${rounds} `
    + `--prompt ${prompt.min}-${prompt.max} --max-tokens ${maxTokens} --modes ${requestedModes.join(",")}${values["database-url"] ? " --database-url URL" : ""}`
    + `${values["cpu-profile"] ? " --cpu-profile FILE" : ""}`;
  const machine = printHeader(command, threads, [
    `model ${PRESET} ${DTYPE.toUpperCase()} random weights (${path}) on one engine thread that every mode's server shares (WorkerEngine, as loom serve), `
      + `maxSequences ${maxLevel}, context ${contextSize}, f32 KV for ${maxLevel + 1} contexts (nothing preempted), prefix caching on`,
    `workload: POST /v1/chat/completions, stream false, the ${SUPPORT_SYSTEM_PROMPT.split(" ").length}-word support system prompt + a user message of seeded words, `
      + `${prompt.min}-${prompt.max} prompt tokens, the first ${shared} shared (${cachedPerRequest} reused from the prefix cache, ${prompt.min - cachedPerRequest}-${prompt.max - cachedPerRequest} computed per request), `
      + `max_tokens ${maxTokens}, temperature 0; N client loops (node:http keep-alive) in a forked client process; requests per run ${levels.map((n, i) => `N=${n}: ${counts[i]}`).join(", ")}`,
    `modes: ${modeNames.map((m) => LABEL[m]).join(" | ")}; platform: a fresh organization, limits raised so nothing is refused, limits in memory, PGlite in a temp data dir`
      + `${modeNames.some(onPostgres) ? `, PostgreSQL ${databaseUrl!.replace(/\/\/[^@/]*@/, "//")} in a schema of its own (dropped after)` : ""}`,
    `per level: one untimed warm-up run per mode, then ${rounds} rounds of one run per mode, the order rotated each round; ratios and added p50 paired within a round, `
      + `median (min to max) over rounds`,
    `load average at the start (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`,
    ...skipped.map((reason) => `not run: ${reason}`),
  ]);

  const engine = await WorkerEngine.start(path, {
    load: { threads, contextSize, batchSize: 512, maxSequences: maxLevel, kvCache: { bytes: f32KvBytes(path, contextSize, maxLevel + 1), dtype: "f32" } },
  });
  const created = Math.floor(Date.now() / 1000);
  const slugs = defaultSlugs(engine.model);
  const registries = {
    plain: new ModelRegistry([{ model: engine.model, engine, slugs, created }]),
    platform: new ModelRegistry([{ model: engine.model, engine, slugs, created, promptCounter: PromptCounter.open(path) }]),
    // The same engine without prepareAhead: admission counts on the HTTP thread and the prompt thread prepares it again.
    httpCount: new ModelRegistry([{ model: engine.model, engine: withoutPrepareAhead(engine), slugs, created, promptCounter: PromptCounter.open(path) }]),
  };
  const poolBodies = pool.map((c) => openAiBody(slugs.openai[0], SUPPORT_SYSTEM_PROMPT, c.user, c.maxTokens, false));
  const bodiesFor = (count: number) => Array.from({ length: count }, (_, i) => poolBodies[i % pool.length]);
  const cleanups: Array<() => Promise<void>> = [];
  const client = processClient();
  const json: Record<string, unknown> = { bench: "platform-overhead", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, threads, node: process.version };
  const check = { responses: 0, promptMismatches: 0, cachedMismatches: 0 };
  const started = performance.now();
  const loadAtStart = loadavg().map((x) => x.toFixed(2)).join(" / ");
  try {
    const modes: Mode[] = [];
    for (const name of modeNames) modes.push(await startMode(name, registries, databaseUrl, cleanups));
    const baseline = modes[0];
    let profiler: Awaited<ReturnType<typeof startCpuProfile>> | undefined;
    /** Per mode while profiling: its requests, and when its runs ran (monotonic microseconds, the profile's clock). */
    const profiled = new Map<ModeName, { requests: number; windows: Window[] }>(modes.map((m) => [m.name, { requests: 0, windows: [] }]));
    const timed = async (mode: Mode, bodies: string[], concurrency: number, checked = true) => {
      const start = monotonicMicros();
      const run = await timedRun(client, mode, bodies, pool, cachedPerRequest, concurrency);
      if (profiler) {
        profiled.get(mode.name)!.requests += run.latencies.length;
        profiled.get(mode.name)!.windows.push({ start, end: monotonicMicros() });
      }
      if (checked) {
        check.responses += run.latencies.length;
        check.promptMismatches += run.promptMismatches;
        check.cachedMismatches += run.cachedMismatches;
      }
      return run;
    };
    // The shared prefix into the cache (the very first request computes it), and each mode's first requests.
    for (const mode of modes) await timed(mode, bodiesFor(8), 1, mode !== baseline);
    profiler = values["cpu-profile"] === undefined ? undefined : await startCpuProfile();

    const results = new Map<number, Map<ModeName, Run[]>>();
    for (const [index, concurrency] of levels.entries()) {
      const bodies = bodiesFor(counts[index]);
      for (const mode of modes) await timed(mode, bodies.slice(0, Math.max(concurrency, 16)), concurrency);
      const runs = new Map<ModeName, Run[]>(modes.map((m) => [m.name, []]));
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < modes.length; i++) {
          const mode = modes[(i + round) % modes.length];
          runs.get(mode.name)!.push(await timed(mode, bodies, concurrency));
        }
      }
      results.set(concurrency, runs);
    }
    const levelSeconds = (performance.now() - started) / 1000;
    const profile = profiler ? (await profiler.stop()) as CpuProfile : undefined;
    if (profile) writeFileSync(values["cpu-profile"]!, JSON.stringify(profile));

    console.log("");
    console.log("| N | requests | mode | req/s, median (min to max) | ratio to --no-auth | throughput cost | HTTP thread CPU (ms/request) | platform CPU: added to --no-auth's (ms/request) | latency p50 (ms) | p99 (ms) | added p50 vs --no-auth (ms) |");
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    const verdicts: string[] = [];
    const levelJson: unknown[] = [];
    for (const [index, concurrency] of levels.entries()) {
      const runs = results.get(concurrency)!;
      const base = runs.get(baseline.name)!;
      const entry: Record<string, unknown> = { concurrency, requests: counts[index] };
      for (const mode of modes) {
        const mine = runs.get(mode.name)!;
        const ratios = mine.map((run, r) => requestsPerSecond(run) / requestsPerSecond(base[r]));
        const cost = ratios.map((ratio) => 100 * (1 - ratio));
        const added = mine.map((run, r) => p50(run) - p50(base[r]));
        const addedCpu = mine.map((run, r) => cpuPerRequest(run) - cpuPerRequest(base[r]));
        const isBase = mode === baseline;
        console.log(`| ${concurrency} | ${counts[index]} | ${LABEL[mode.name]} | ${spread(mine.map(requestsPerSecond), 2)} | ${isBase ? "1" : spread(ratios, 3)} | ${isBase ? "-" : spread(cost, 1, "%")} | `
          + `${spread(mine.map(cpuPerRequest), 2)} | ${isBase ? "-" : spread(addedCpu, 2)} | ${spread(mine.map(p50), 1)} | ${spread(mine.map(p99), 1)} | ${isBase ? "-" : spread(added, 2)} |`);
        if (!isBase) {
          const [medianCost, medianAdded, medianCpu] = [median(cost), median(added), median(addedCpu)];
          const met = (ok: boolean) => (ok ? "met" : "MISSED");
          const costTarget = concurrency === TARGET.costLevel ? ` (${met(medianCost < TARGET.costPercent)}, target < ${TARGET.costPercent}% at N=${TARGET.costLevel})` : "";
          verdicts.push(`N=${concurrency}, ${LABEL[mode.name]}: platform CPU ${fixed(medianCpu, 2)} ms/request (${met(medianCpu < TARGET.cpuMs)}, target < ${TARGET.cpuMs} ms; rounds ${fixed(Math.min(...addedCpu), 2)} to ${fixed(Math.max(...addedCpu), 2)}), `
            + `throughput cost ${fixed(medianCost, 1)}%${costTarget} (rounds ${fixed(Math.min(...cost), 1)} to ${fixed(Math.max(...cost), 1)}%), `
            + `added p50 ${fixed(medianAdded, 2)} ms (${met(medianAdded < TARGET.addedP50Ms)}, target < ${TARGET.addedP50Ms} ms; rounds ${fixed(Math.min(...added), 2)} to ${fixed(Math.max(...added), 2)} ms)`);
        }
        entry[mode.name] = {
          cpuPerRequestMs: median(mine.map(cpuPerRequest)),
          ...(isBase ? {} : { addedCpuPerRequestMs: median(addedCpu) }),
          runs: mine.map((run) => ({ seconds: run.seconds, requestsPerSecond: requestsPerSecond(run), p50: p50(run), p99: p99(run), mainCpuSeconds: run.mainCpuSeconds })),
        };
      }
      levelJson.push(entry);
    }
    json.levels = levelJson;
    console.log("");
    console.log("req/s = requests / wall time of the run (ramp-up and drain of the N loops included, alike in every mode); ratio = a mode's req/s / --no-auth's in the same");
    console.log("round; throughput cost = 1 - ratio; latency = POST sent to the response's last byte, at the client (queueing included); p99 over one run's requests; added p50 =");
    console.log("p50 - --no-auth's p50 in the same round; HTTP thread CPU = time the server's main thread spent on a CPU (uWebSockets.js, adapters, the platform with");
    console.log("PGlite; the engine and prompts have their own threads; /proc schedstat) per request, median (min to max) over rounds; platform CPU = that less");
    console.log("--no-auth's in the same round.");
    console.log(`machine load during the levels: load average ${loadAtStart} at the start, ${loadavg().map((x) => x.toFixed(2)).join(" / ")} at their end (1/5/15 min)`);
    console.log(`checks: ${check.responses - check.promptMismatches} of ${check.responses} responses report the prompt tokens counted here; ${check.responses - check.cachedMismatches} report `
      + `${cachedPerRequest} cached (the same engine work in every run)`);
    for (const line of verdicts) console.log(`target: ${line}`);

    // Where the platform's time goes, per request, timed inside the server during the runs above (all rounds).
    console.log("");
    console.log("Inside the server, per request, all rounds of each level: median (p99) in ms; key reads: requests that waited for a read of their key (its cached");
    console.log("record expired; concurrent requests share one read), and their median wait.");
    console.log("");
    console.log("| N | mode | authentication, key cached | key reads | database calls per request | prompt count (wait for the prompt thread) | rest of admit (organization, limit reserve, headers) | settle (usage commit + limit correction) | platform total, mean per request | share of mean latency |");
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    const medianP99 = (values: number[]) => `${fixed(median(values), 3)} (${fixed(percentile(values, 0.99), 2)})`;
    for (const concurrency of levels) {
      for (const mode of modes.filter((m) => m.platform)) {
        const runs = results.get(concurrency)!.get(mode.name)!;
        const spans = pooled(runs);
        const requests = spans.settle.length;
        const total = (sum(spans.authenticationCached) + sum(spans.authenticationRead) + sum(spans.countTokens) + sum(spans.admitRest) + sum(spans.settle)) / requests;
        const meanLatency = sum(runs.flatMap((run) => run.latencies)) / sum(runs.map((run) => run.latencies.length));
        console.log(`| ${concurrency} | ${LABEL[mode.name]} | ${medianP99(spans.authenticationCached)} | ${spans.authenticationRead.length} of ${requests}, ${fixed(median(spans.authenticationRead), 2)} | `
          + `${fixed(sum(runs.map((run) => run.databaseCalls)) / sum(runs.map((run) => run.latencies.length)), 2)} | ${medianP99(spans.countTokens)} | ${medianP99(spans.admitRest)} | ${medianP99(spans.settle)} | ${fixed(total, 2)} | ${fixed((100 * total) / meanLatency, 1)}% |`);
        (levelJson[levels.indexOf(concurrency)] as Record<string, Record<string, unknown>>)[mode.name].spans = Object.fromEntries(
          Object.entries(spans).map(([field, list]) => [field, { calls: list.length, median: median(list), p99: percentile(list, 0.99) }]),
        );
      }
    }

    if (profile) printProfile(profile, modes, profiled, values["cpu-profile"]!);

    // Each piece alone, the engine thread and the database idle.
    const tokenizeHere = () => preparePrompt(promptModel, { messages: [{ role: "system", content: SUPPORT_SYSTEM_PROMPT }, { role: "user", content: pool[0].user }] }, undefined).tokens.length;
    const isolated: Record<string, PieceTiming[]> = {};
    for (const mode of modes.filter((m) => m.name === "pglite" || m.name === "postgres")) {
      const pieces = await isolatedPieces(mode.platform!, mode.key, engine, poolBodies[0], tokenizeHere);
      isolated[mode.name] = pieces;
      console.log("");
      console.log(`Each piece alone, ${LABEL[mode.name]} (idle engine thread and database; sequential calls):`);
      console.log("");
      console.log("| piece | where | median (ms) | p99 (ms) | paid |");
      console.log("|---|---|---|---|---|");
      for (const piece of pieces) console.log(`| ${piece.piece} | ${piece.where} | ${fixed(piece.median, 3)} | ${fixed(piece.p99, 3)} | ${piece.paid} |`);
    }
    json.isolated = isolated;
    const postgres = modes.find((m) => onPostgres(m.name));
    if (postgres) {
      const settings = await postgres.platform!.database.query<{ name: string; setting: string }>(
        "SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'synchronous_commit', 'fsync', 'wal_sync_method') ORDER BY name");
      console.log(`\nPostgreSQL: ${settings.map((s) => `${s.name} ${s.setting}`).join(", ")}`);
      json.postgres = Object.fromEntries(settings.map((s) => [s.name, s.setting]));
    }
    console.log(`\n${fixed(levelSeconds, 0)} s for the levels, ${fixed((performance.now() - started) / 1000 - levelSeconds, 0)} s for the pieces alone; `
      + `load average at the end (1/5/15 min): ${loadavg().map((x) => x.toFixed(2)).join(" / ")}`);
  } finally {
    client.close();
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(`cleanup: ${(error as Error).message}`));
    await engine.close();
  }
  console.log(JSON.stringify(json));
}

await main();
process.exit(0);
