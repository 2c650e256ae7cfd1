// The HTTP layer's cost: the same streaming chat requests sent to loom's HTTP server through both wire formats
// (OpenAI chat completions, Anthropic messages and the OpenAI Responses API, stream: true) and submitted straight to
// the same Engine in
// process, at several concurrencies; time to first token, inter-token latency p50/p99 and output tokens/s on each
// path, and throughput over HTTP as a fraction of in-process throughput (the target: HTTP costs under 5%).
// Run: npm run build && node dist/bench/http-load.js [options] (USAGE below; --help prints it).
//
// Workload: every request is a conversation (messages input, rendered with the model's ChatML template): one system
// prompt shared by all requests plus a user message of seeded random words, sized so that each prompt is a length
// drawn from --prompt tokens after the template; max_tokens is drawn from --decode; temperature 0; end-of-generation
// is honoured (nothing ignored), so output tokens are counted from each response's usage, never assumed. N client
// loops each send one request at a time, so N requests are in flight; --requests (default max(2N, 16), with --quick
// max(2N, 8)) in all.
//
// The paths run one after the other on one loaded model per concurrency (primed once, untimed, with the first N
// requests at once), rotated each repeat so none always goes first, each on a fresh Engine after one untimed warm-up
// request through that path with the shared system prompt: every timed run starts with exactly the system prompt
// cached, however its requests' arrivals interleave, and nothing else carries from one run to the next.
// - in-process: each wire body is parsed by the OpenAI adapter and turned into an EngineRequest before the clock
//   starts (exactly what the server submits), then Engine.submit is iterated directly on this thread;
// - in-process, engine thread (the baseline the HTTP cost is measured against): the same requests submitted directly
//   to the engine on its own worker thread, set up exactly as the HTTP paths' (a fresh WorkerEngine primed with the
//   same other bodies), so that the only difference from HTTP is the HTTP layer;
// - HTTP: what `loom serve` runs: the engine on its own thread (WorkerEngine, the same model file loaded there, fresh
//   per run and primed like the in-process model with other bodies of the same lengths), startServer on 127.0.0.1
//   (uWebSockets.js, StaticKeys auth), node:http with a minimal SSE parser (bench/http-load-client.ts; no SDKs), one
//   keep-alive connection per client loop. Everything from the request bytes to the client's parsed delta is the HTTP
//   layer's cost: body read and JSON parse, adapter parse, the hop to the engine thread and back, SSE encoding, socket
//   writes, the client's parse.
// The client runs in a forked child process by default (--client process): its HTTP, stream and JSON work happen on
// its own event loop and heap. With only 2 cores the client's CPU still competes with the engine's two compute threads
// at the OS level, so its CPU seconds are reported beside each run; --client inline runs the same client inside the
// server process, for comparison.
//
// Peer: llama.cpp's own OpenAI-compatible server (llama-server) on the same GGUF, where a binary exists: --llama-server
// PATH, else a llama-server found under node_modules/node-llama-cpp (bins/, llama/), node_modules/@node-llama-cpp/*
// or on PATH. node-llama-cpp 3.22.1 ships llama.cpp as a Node addon only; when no binary is found the peer is
// reported as not run, with the reason.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism } from "node:os";
import { delimiter, join } from "node:path";
import { Engine, type ServingEngine } from "../engine/engine.js";
import { describeModel } from "../engine/host/messages.js";
import { WorkerEngine } from "../engine/host/worker-engine.js";
import { KV_BLOCK_SIZE, type LoadOptions, type LoadedModel, loadModel } from "../engine/load.js";
import type { EngineRequest } from "../engine/request.js";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createEndpoints } from "../server/adapters/endpoints.js";
import { parseResponsesRequest } from "../server/adapters/responses/parse.js";
import { openResponseStorage } from "../server/platform/store/response-storage.js";
import { StaticKeys } from "../server/http/auth.js";
import { startServer } from "../server/server.js";
import { ModelRegistry, defaultSlugs } from "../server/models.js";
import { toEngineRequest } from "../server/protocol/run.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, mean, percentile, printHeader, f32KvBytes } from "./bench-models.js";
import { SUPPORT_SYSTEM_PROMPT, anthropicBody, buildConversations, openAiBody, parseRange, responsesBody } from "./chat-workload.js";
import { type LoadClient, type RequestTiming, type StreamFormat, inlineClient, processClient } from "./http-load-client.js";
import { mainThreadCpuSeconds } from "./machine.js";

const PRESET = "smollm2-135m";
const DTYPE = "q8_0";
const KEY = "sk-bench-http-load";

/** Shared by every request (cached by each run's warm-up request). */
const SYSTEM_PROMPT = SUPPORT_SYSTEM_PROMPT;
/** The untimed warm-up's user message: with the shared system prompt, so every timed run starts with it cached. */
const WARMUP_USER = "Hello, is anyone there?";
type PathName = "in-process" | "in-process, engine thread" | "HTTP OpenAI" | "HTTP Anthropic" | "HTTP Responses" | "llama-server OpenAI";
/** Each wire format's HTTP path: its route, headers and name. */
const HTTP_PATHS: Record<StreamFormat, { route: string; headers: Record<string, string>; name: PathName }> = {
  openai: { route: "/v1/chat/completions", headers: { authorization: `Bearer ${KEY}` }, name: "HTTP OpenAI" },
  anthropic: { route: "/v1/messages", headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01" }, name: "HTTP Anthropic" },
  // Not stored (store: false): the adapter's cost, not the database's; its storage is never opened.
  responses: { route: "/v1/responses", headers: { authorization: `Bearer ${KEY}` }, name: "HTTP Responses" },
};
/** What the HTTP paths are compared with. */
const BASELINE: PathName = "in-process, engine thread";

/** One timed run of one path. */
interface PathResult {
  path: PathName;
  seconds: number;
  requests: RequestTiming[];
  /** CPU seconds of the server process (engine and HTTP server; the client too when inline) during the run. */
  serverCpuSeconds: number;
  /** CPU seconds of the client process; NaN when the client runs inline or there is none (in-process). */
  clientCpuSeconds: number;
  /**
   * CPU seconds of the server's main thread (HTTP path with the process client: the whole HTTP layer, since the
   * engine has its own thread); NaN elsewhere or off Linux.
   */
  httpBusySeconds: number;
}

/** A fresh in-process Engine and a registry serving it under the default slugs. */
function serve(model: LoadedModel) {
  const engine = new Engine(model);
  const info = describeModel(model);
  const registry = new ModelRegistry([{ model: info, engine, slugs: defaultSlugs(info), created: Math.floor(Date.now() / 1000) }]);
  return { engine, registry };
}

/**
 * Untimed, once per loaded model before any path runs: `bodies` all at once with max_tokens 2 on a throwaway Engine,
 * so the first timed path does not pay alone for first touches of the KV pool and scratch memory, or for compiling
 * the batched prefill and decode paths at this concurrency.
 */
async function primeModel(model: LoadedModel, bodies: string[]): Promise<void> {
  const { engine, registry } = serve(model);
  try {
    const [chat] = createEndpoints(registry);
    await Promise.all(bodies.map(async (body, i) => {
      const request = toEngineRequest(`prime-${i}`, chat.parse({ ...(JSON.parse(body) as object), max_tokens: 2 }));
      for await (const event of engine.submit(request)) if (event.type === "error") throw event.error;
    }));
  } finally {
    engine.close();
  }
}

let inProcessRuns = 0;

/** Engine.submit directly on this thread, on requests parsed from the OpenAI bodies before the clock starts. */
async function inProcessRun(model: LoadedModel, bodies: string[], warmup: string, concurrency: number): Promise<PathResult> {
  const { engine, registry } = serve(model);
  try {
    return await directRun("in-process", engine, registry, [], bodies, warmup, concurrency);
  } finally {
    engine.close();
  }
}

/**
 * The engine on its own worker thread exactly as the HTTP paths run it (a fresh WorkerEngine, primed with the same
 * other bodies), its submit() called directly: the baseline that differs from HTTP only by the HTTP layer.
 */
async function engineThreadRun(path: string, load: LoadOptions, bodies: string[], primeBodies: string[], warmup: string, concurrency: number): Promise<PathResult> {
  const engine = await WorkerEngine.start(path, { load });
  try {
    const registry = new ModelRegistry([{ model: engine.model, engine, slugs: defaultSlugs(engine.model), created: Math.floor(Date.now() / 1000) }]);
    return await directRun("in-process, engine thread", engine, registry, primed(primeBodies), bodies, warmup, concurrency);
  } finally {
    await engine.close();
  }
}

/**
 * Times `bodies` submitted straight to `engine` by `concurrency` loops, each parsed by the OpenAI adapter into an
 * EngineRequest before the clock starts (exactly what the server submits); `primeBodies` (all at once) and `warmup`
 * go first, untimed.
 */
async function directRun(path: PathName, engine: ServingEngine, registry: ModelRegistry, primeBodies: string[], bodies: string[], warmup: string, concurrency: number): Promise<PathResult> {
  const run = inProcessRuns++;
  const [chat] = createEndpoints(registry);
  const toRequest = (body: string, id: string) => toEngineRequest(id, chat.parse(JSON.parse(body)));
  const streamOne = async (request: EngineRequest): Promise<RequestTiming> => {
    const timing: RequestTiming = { ttft: Number.NaN, gaps: [], total: 0, outputTokens: -1, promptTokens: -1, cachedTokens: 0, deltas: 0, text: "" };
    const start = performance.now();
    let last = 0;
    for await (const event of engine.submit(request)) {
      if (event.type === "error") throw event.error;
      if (event.type === "text" && event.text !== "") {
        const now = performance.now();
        if (timing.deltas === 0) timing.ttft = (now - start) / 1000;
        else timing.gaps.push((now - last) / 1000);
        last = now;
        timing.deltas++;
        timing.text += event.text;
      } else if (event.type === "finish") {
        timing.outputTokens = event.usage.completionTokens;
        timing.promptTokens = event.usage.promptTokens;
        timing.cachedTokens = event.usage.reusedPrefixTokens + event.usage.reusedSuffixTokens;
      }
    }
    timing.total = (performance.now() - start) / 1000;
    return timing;
  };
  await Promise.all(primeBodies.map((body, i) => streamOne(toRequest(body, `prime-${run}-${i}`))));
  await streamOne(toRequest(warmup, `warmup-${run}`));
  const requests = bodies.map((body, i) => toRequest(body, `direct-${run}-${i}`));
  const timings: RequestTiming[] = new Array(requests.length);
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, async () => {
    while (next < requests.length) {
      const index = next++;
      timings[index] = await streamOne(requests[index]);
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { path, seconds, requests: timings, serverCpuSeconds: (used.user + used.system) / 1e6, clientCpuSeconds: Number.NaN, httpBusySeconds: Number.NaN };
}

/** Bodies with a token limit of 2 (priming: first touches and compiled paths, not output). */
function primed(bodies: string[]): string[] {
  return bodies.map((body) => {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    // The limit under the format's own name: the Responses API calls it max_output_tokens.
    return JSON.stringify({ ...parsed, ...("max_output_tokens" in parsed ? { max_output_tokens: 2 } : { max_tokens: 2 }) });
  });
}

/**
 * The same bodies through loom's HTTP server in one wire format, its engine on a worker thread as `loom serve` runs
 * it. `primeBodies` (other user messages of the same lengths, max_tokens 2) are sent first, untimed, N at once.
 */
async function httpRun(path: string, load: LoadOptions, format: StreamFormat, bodies: string[], primeBodies: string[], warmup: string, concurrency: number, client: LoadClient): Promise<PathResult> {
  const engine = await WorkerEngine.start(path, { load });
  const registry = new ModelRegistry([{ model: engine.model, engine, slugs: defaultSlugs(engine.model), created: Math.floor(Date.now() / 1000) }]);
  const dataDir = mkdtempSync(join(tmpdir(), "loom-bench-responses-"));
  const responses = openResponseStorage({ dataDir });
  const server = await startServer({ registry, auth: new StaticKeys([KEY]), endpoints: createEndpoints(registry, { responses: responses.storage }), responses: responses.storage }, "127.0.0.1", 0);
  try {
    const url = `http://127.0.0.1:${server.port}${HTTP_PATHS[format].route}`;
    const headers = HTTP_PATHS[format].headers;
    await client.run({ url, format, headers, bodies: primed(primeBodies), concurrency });
    await client.run({ url, format, headers, bodies: [warmup], concurrency: 1 });
    const cpu = process.cpuUsage();
    const mainBefore = mainThreadCpuSeconds();
    const result = await client.run({ url, format, headers, bodies, concurrency });
    const mainCpu = mainThreadCpuSeconds() - mainBefore;
    const used = process.cpuUsage(cpu);
    return {
      path: HTTP_PATHS[format].name, seconds: result.seconds, requests: result.requests,
      serverCpuSeconds: (used.user + used.system) / 1e6, clientCpuSeconds: result.cpuSeconds,
      httpBusySeconds: client.mode === "process" ? mainCpu : Number.NaN,
    };
  } finally {
    server.close();
    await responses.close();
    rmSync(dataDir, { recursive: true, force: true });
    await engine.close();
  }
}

/** Where a llama-server binary is, or why there is none. */
interface PeerLocation {
  path?: string;
  reason: string;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Files named llama-server under `dir`, `depth` levels down at most. */
function findNamed(dir: string, depth: number, found: string[] = []): string[] {
  if (!existsSync(dir) || depth < 0) return found;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) findNamed(full, depth - 1, found);
    else if (/^llama-server(\.exe)?$/.test(entry.name)) found.push(full);
  }
  return found;
}

function locateLlamaServer(explicit: string | undefined): PeerLocation {
  if (explicit !== undefined) return isExecutableFile(explicit) ? { path: explicit, reason: "given with --llama-server" } : { reason: `--llama-server ${explicit} is not an executable file` };
  const modules = join(REPOSITORY_ROOT, "node_modules");
  const dirs = [join(modules, "node-llama-cpp", "bins"), join(modules, "node-llama-cpp", "llama"), join(modules, "@node-llama-cpp")];
  const candidates = dirs.flatMap((dir) => findNamed(dir, 5));
  for (const dir of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) candidates.push(join(dir, "llama-server"));
  const path = candidates.find(isExecutableFile);
  if (path) return { path, reason: "found" };
  let version = "3.22.1";
  let addon = "";
  try {
    version = (JSON.parse(readFileSync(join(modules, "node-llama-cpp", "package.json"), "utf8")) as { version: string }).version;
    addon = findAddons(join(modules, "@node-llama-cpp")).join(", ");
  } catch {
    // The reason below still holds without these details.
  }
  return {
    reason: `node-llama-cpp ${version} ships llama.cpp as a Node addon only (${addon || "llama-addon.node"}); no llama-server binary under `
      + `node_modules/node-llama-cpp/{bins,llama}, node_modules/@node-llama-cpp or on PATH, so llama.cpp's OpenAI-compatible server `
      + `cannot be run here (build llama.cpp's llama-server and pass --llama-server PATH to add it)`,
  };
}

/** This platform's node-llama-cpp addon binaries (what the package ships instead of executables). */
function findAddons(dir: string, depth = 4, out: string[] = []): string[] {
  if (depth < 0 || !existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) findAddons(full, depth - 1, out);
    else if (entry.name === "llama-addon.node" && full.includes(`/${process.platform}-${process.arch}/bins/`)) out.push(full.slice(REPOSITORY_ROOT.length + 1));
  }
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * llama-server on the same file: N slots (continuous batching), the context split evenly over them, f32 KV as loom's,
 * the same thread count; the same OpenAI bodies from the same client. Throws with llama-server's output on failure.
 */
async function llamaServerRun(binary: string, modelPath: string, format: StreamFormat, bodies: string[], warmup: string, concurrency: number, contextSize: number, threads: number, client: LoadClient): Promise<PathResult> {
  const port = await freePort();
  const args = ["-m", modelPath, "--host", "127.0.0.1", "--port", String(port), "-t", String(threads), "-tb", String(threads),
    "-c", String(contextSize * concurrency), "-np", String(concurrency), "-b", "512", "-ctk", "f32", "-ctv", "f32",
    // One HTTP thread per client connection and a few spare: its default pool is sized by the cores and resets
    // connections beyond it.
    "--threads-http", String(concurrency + 4)];
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const keep = (chunk: Buffer) => { log = (log + chunk.toString()).slice(-4000); };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exited: number | null | undefined;
  child.on("exit", (code) => { exited = code; });
  try {
    const deadline = performance.now() + 120_000;
    for (;;) {
      if (exited !== undefined) throw new Error(`llama-server exited with code ${exited}: ${log.slice(-1000)}`);
      if (performance.now() > deadline) throw new Error(`llama-server did not become healthy in 120 s: ${log.slice(-1000)}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    const result = await (async () => {
      // A connection per request: llama-server's HTTP server closed reused keep-alive connections mid-run ("socket
      // hang up"); a loopback connect costs microseconds against its tens of milliseconds per token.
      await client.run({ url, format, headers: {}, bodies: [warmup], concurrency: 1, keepAlive: false });
      return client.run({ url, format, headers: {}, bodies, concurrency, keepAlive: false });
    })().catch((error: Error) => {
      throw new Error(`${error.message}; llama-server ${exited === undefined ? "running" : `exited with code ${exited}`}, its log ends: ${log.slice(-1500)}`);
    });
    return { path: "llama-server OpenAI", seconds: result.seconds, requests: result.requests, serverCpuSeconds: Number.NaN, clientCpuSeconds: result.cpuSeconds, httpBusySeconds: Number.NaN };
  } finally {
    child.kill("SIGTERM");
  }
}

/** Output tokens of a request from its usage; -1 (no usage in the stream) falls back to the text deltas. */
function outputTokens(timing: RequestTiming): number {
  return timing.outputTokens >= 0 ? timing.outputTokens : timing.deltas;
}

function summarize(result: PathResult) {
  const generated = result.requests.reduce((sum, r) => sum + outputTokens(r), 0);
  const ttfts = result.requests.map((r) => r.ttft).filter((t) => Number.isFinite(t));
  const gaps = result.requests.flatMap((r) => r.gaps);
  return {
    path: result.path,
    seconds: result.seconds,
    outputTokens: generated,
    outputTokensPerSecond: generated / result.seconds,
    ttftP50: percentile(ttfts, 0.5),
    ttftP99: percentile(ttfts, 0.99),
    ttftMean: mean(ttfts),
    itlP50: percentile(gaps, 0.5),
    itlP99: percentile(gaps, 0.99),
    itlCount: gaps.length,
    promptTokens: result.requests.reduce((sum, r) => sum + r.promptTokens, 0),
    cachedTokens: result.requests.reduce((sum, r) => sum + r.cachedTokens, 0),
    usageMissing: result.requests.filter((r) => r.outputTokens < 0).length,
    serverCpuSeconds: result.serverCpuSeconds,
    clientCpuSeconds: result.clientCpuSeconds,
    httpBusySeconds: result.httpBusySeconds,
    /** Main-thread CPU time per output token, in microseconds. */
    httpBusyMicrosecondsPerToken: (1e6 * result.httpBusySeconds) / generated,
  };
}

function best(results: PathResult[]): PathResult {
  return results.reduce((a, b) => (b.seconds < a.seconds ? b : a));
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/http-load.js [--threads 2] [--concurrency 1,4,16,64] [--requests N]
       [--prompt 64-128] [--decode 32-64] [--repeats 1] [--client process|inline] [--llama-server PATH] [--quick]
       [--formats openai,anthropic,responses]`;
const cli: BenchCli = new BenchCli("http-load", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    threads: { type: "string" }, concurrency: { type: "string" }, requests: { type: "string" }, prompt: { type: "string" }, decode: { type: "string" },
    repeats: { type: "string" }, client: { type: "string" }, "llama-server": { type: "string" }, quick: { type: "boolean" }, formats: { type: "string" },
  });
  const formats = cli.someOf("formats", values.formats ?? "openai,anthropic,responses", Object.keys(HTTP_PATHS) as StreamFormat[]);
  const quick = values.quick ?? false;
  const threads = cli.integer("threads", values.threads ?? 2);
  const levels = cli.integers("concurrency", values.concurrency ?? (quick ? "1,4" : "1,4,16,64"));
  const prompt = cli.check(() => parseRange(values.prompt ?? "64-128", "prompt"));
  const decode = cli.check(() => parseRange(values.decode ?? (quick ? "8-16" : "32-64"), "decode"));
  const repeats = cli.integer("repeats", values.repeats ?? 1);
  const clientMode = cli.oneOf("client", values.client ?? "process", ["process", "inline"]);
  const fixedRequests = values.requests === undefined ? undefined : cli.integer("requests", values.requests);
  const minRequests = quick ? 8 : 16;

  const path = await benchModelPath(PRESET, DTYPE);
  const peer = locateLlamaServer(values["llama-server"]);
  const command = `node dist/bench/http-load.js --threads ${threads} --concurrency ${levels.join(",")} --prompt ${prompt.min}-${prompt.max} --decode ${decode.min}-${decode.max}`
    + `${fixedRequests !== undefined ? ` --requests ${fixedRequests}` : ""}${repeats > 1 ? ` --repeats ${repeats}` : ""}${clientMode !== "process" ? ` --client ${clientMode}` : ""}`
    + `${values["llama-server"] ? ` --llama-server ${values["llama-server"]}` : ""}${quick ? " --quick" : ""}${values.formats ? ` --formats ${values.formats}` : ""}`;
  const machine = printHeader(command, threads, [
    `model ${PRESET} ${DTYPE.toUpperCase()} random weights (${path}), f32 KV, one load per concurrency (maxSequences N, KV for N+1 whole requests: no preemption)`,
    `workload: messages input through the ChatML template, a shared ${SYSTEM_PROMPT.split(" ").length}-word system prompt + a unique user message, ${prompt.min}-${prompt.max} prompt tokens, `
      + `max_tokens ${decode.min}-${decode.max}, temperature 0, EOG honoured (output tokens from usage); N client loops, ${fixedRequests ?? `max(2N, ${minRequests})`} requests`
      + `${repeats > 1 ? `; each path run ${repeats} times interleaved, fastest kept` : ""}`,
    `paths: in-process = Engine.submit on the adapter-parsed requests (on this thread, and on the engine's worker thread: the baseline); HTTP = the engine on a worker thread (as loom serve) behind startServer on 127.0.0.1 `
      + `(uWebSockets.js, StaticKeys auth), stream: true, node:http + SSE parser; each run on a fresh engine after one untimed warm-up request`,
    `client: ${clientMode === "process" ? "a forked child process (own event loop and heap; shares the cores with the engine's compute threads)" : "inline in the server process (shares its event loop)"}; `
      + `${availableParallelism()} cores for engine (${threads} compute threads: main + ${threads - 1} worker${threads === 2 ? "" : "s"}), HTTP server and client`,
    peer.path ? `peer: llama-server ${peer.path} (${peer.reason}), N slots of one per-request context each, f32 KV, ${threads} threads, same client and OpenAI bodies`
      : `peer: llama.cpp HTTP server not run: ${peer.reason}`,
  ]);

  const client = clientMode === "process" ? processClient() : inlineClient();
  console.log("");
  console.log("| N | requests | path | output tokens | output tok/s | vs in-process | HTTP cost | TTFT p50 (ms) | TTFT p99 (ms) | ITL p50 (ms) | ITL p99 (ms) | server CPU (s) | client CPU (s) | HTTP thread CPU (µs/token) | text = in-process |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  const json: unknown[] = [];
  const costs: Array<{ concurrency: number; path: PathName; cost: number }> = [];
  /** HTTP Responses against HTTP OpenAI (chat completions) on the same requests: the Responses adapter's own cost. */
  const adapterGaps: Array<{ concurrency: number; throughput: number; ttftMs: number }> = [];
  const promptStats: number[] = [];
  /** Requests (all paths, all levels) whose usage prompt tokens differ from the template count here. */
  let promptMismatches = 0;
  let promptChecked = 0;
  try {
    for (const concurrency of levels) {
      const requests = fixedRequests ?? Math.max(2 * concurrency, minRequests);
      const conversations = buildConversations(path, requests, prompt, decode, 4321 + concurrency, SYSTEM_PROMPT);
      promptStats.push(...conversations.map((c) => c.promptTokens));
      const longest = Math.max(...conversations.map((c) => c.promptTokens + c.maxTokens));
      const contextSize = Math.ceil((longest + 16) / KV_BLOCK_SIZE) * KV_BLOCK_SIZE;
      const bytes = f32KvBytes(path, contextSize, concurrency + 1);
      const load: LoadOptions = { threads, contextSize, batchSize: 512, maxSequences: concurrency, kvCache: { bytes, dtype: "f32" } };
      const model = await loadModel(path, load);
      try {
        const slugs = defaultSlugs(describeModel(model));
        const openaiBodies = conversations.map((c) => openAiBody(slugs.openai[0], SYSTEM_PROMPT, c.user, c.maxTokens));
        const anthropicBodies = conversations.map((c) => anthropicBody(slugs.anthropic[0], SYSTEM_PROMPT, c.user, c.maxTokens));
        const openaiWarmup = openAiBody(slugs.openai[0], SYSTEM_PROMPT, WARMUP_USER, 4);
        const anthropicWarmup = anthropicBody(slugs.anthropic[0], SYSTEM_PROMPT, WARMUP_USER, 4);
        const responsesBodies = conversations.map((c) => responsesBody(slugs.openai[0], SYSTEM_PROMPT, c.user, c.maxTokens));
        const responsesWarmup = responsesBody(slugs.openai[0], SYSTEM_PROMPT, WARMUP_USER, 4);
        checkSameEngineRequests(model, openaiBodies, anthropicBodies, responsesBodies);
        // The worker engines' priming: other user messages of the same lengths, so no timed prompt is cached by it.
        const others = buildConversations(path, concurrency, prompt, decode, 9876 + concurrency, SYSTEM_PROMPT);
        const openaiPrime = others.map((c) => openAiBody(slugs.openai[0], SYSTEM_PROMPT, c.user, c.maxTokens));
        const anthropicPrime = others.map((c) => anthropicBody(slugs.anthropic[0], SYSTEM_PROMPT, c.user, c.maxTokens));
        const responsesPrime = others.map((c) => responsesBody(slugs.openai[0], SYSTEM_PROMPT, c.user, c.maxTokens));
        const byFormat = {
          openai: { bodies: openaiBodies, prime: openaiPrime, warmup: openaiWarmup },
          anthropic: { bodies: anthropicBodies, prime: anthropicPrime, warmup: anthropicWarmup },
          responses: { bodies: responsesBodies, prime: responsesPrime, warmup: responsesWarmup },
        };

        const runs: Record<PathName, PathResult[]> = { "in-process": [], "in-process, engine thread": [], "HTTP OpenAI": [], "HTTP Anthropic": [], "HTTP Responses": [], "llama-server OpenAI": [] };
        let peerError: string | undefined;
        await primeModel(model, openaiBodies.slice(0, concurrency));
        const loomPaths: Array<() => Promise<PathResult>> = [
          () => inProcessRun(model, openaiBodies, openaiWarmup, concurrency),
          () => engineThreadRun(path, load, openaiBodies, openaiPrime, openaiWarmup, concurrency),
          ...formats.map((format) => () => httpRun(path, load, format, byFormat[format].bodies, byFormat[format].prime, byFormat[format].warmup, concurrency, client)),
        ];
        for (let r = 0; r < repeats; r++) {
          // Rotated each repeat, so no path always runs first (or last) on the loaded model.
          for (let i = 0; i < loomPaths.length; i++) {
            const result = await loomPaths[(i + r) % loomPaths.length]();
            runs[result.path].push(result);
          }
          if (peer.path && peerError === undefined) {
            try {
              runs["llama-server OpenAI"].push(await llamaServerRun(peer.path, path, "openai", openaiBodies, openaiWarmup, concurrency, contextSize, threads, client));
            } catch (error) {
              peerError = (error as Error).message;
            }
          }
        }
        // The baseline: the engine on its thread as `loom serve` runs it, called directly.
        const base = summarize(best(runs[BASELINE]));
        const baseRun = best(runs[BASELINE]);
        const level: Record<string, unknown> = { concurrency, requests, contextSize };
        for (const name of Object.keys(runs) as PathName[]) {
          if (runs[name].length === 0) continue;
          const run = best(runs[name]);
          const s = summarize(run);
          const ratio = s.outputTokensPerSecond / base.outputTokensPerSecond;
          const equal = run.requests.filter((t, i) => t.text === baseRun.requests[i].text).length;
          const isLoomHttp = name === "HTTP OpenAI" || name === "HTTP Anthropic" || name === "HTTP Responses";
          if (name !== "llama-server OpenAI") {
            promptChecked += run.requests.length;
            promptMismatches += run.requests.filter((t, i) => t.promptTokens !== conversations[i].promptTokens).length;
          }
          if (isLoomHttp) costs.push({ concurrency, path: name, cost: 1 - ratio });
          const ms = (x: number) => (Number.isFinite(x) ? (1000 * x).toFixed(1) : "n/a");
          const cpu = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
          console.log(`| ${concurrency} | ${requests} | ${name} | ${s.outputTokens}${s.usageMissing > 0 ? ` (${s.usageMissing} without usage)` : ""} | ${s.outputTokensPerSecond.toFixed(1)} | `
            + `${name === BASELINE ? "1.000" : ratio.toFixed(3)} | ${isLoomHttp ? `${(100 * (1 - ratio)).toFixed(1)}%` : "-"} | ${ms(s.ttftP50)} | ${ms(s.ttftP99)} | ${ms(s.itlP50)} | ${ms(s.itlP99)} | `
            + `${cpu(s.serverCpuSeconds)} | ${cpu(s.clientCpuSeconds)} | ${Number.isFinite(s.httpBusyMicrosecondsPerToken) ? s.httpBusyMicrosecondsPerToken.toFixed(0) : "-"} | `
            + `${name === BASELINE ? "-" : `${equal} / ${requests}`} |`);
          level[name] = { ...s, ratioToInProcess: ratio, textEqualToInProcess: equal, otherRuns: runs[name].filter((x) => x !== run).map((x) => x.seconds) };
        }
        if (runs["HTTP Responses"].length > 0 && runs["HTTP OpenAI"].length > 0) {
          const responses = summarize(best(runs["HTTP Responses"]));
          const chat = summarize(best(runs["HTTP OpenAI"]));
          adapterGaps.push({ concurrency, throughput: responses.outputTokensPerSecond / chat.outputTokensPerSecond - 1, ttftMs: 1000 * (responses.ttftP50 - chat.ttftP50) });
        }
        if (peerError !== undefined) {
          const cells = [String(concurrency), String(requests), "llama-server OpenAI", `failed: ${peerError.replace(/\|/g, "/").replace(/\s+/g, " ").slice(0, 300)}`, ...Array(11).fill("-")];
          console.log(`| ${cells.join(" | ")} |`);
          level.llamaServerError = peerError;
        }
        json.push(level);
      } finally {
        await model.dispose();
      }
    }
  } finally {
    client.close();
  }
  console.log("");
  console.log(`prompt tokens after the template: ${Math.min(...promptStats)}-${Math.max(...promptStats)}, mean ${mean(promptStats).toFixed(1)}; the usage of `
    + `${promptChecked - promptMismatches} of ${promptChecked} loom responses reports the same count; the shared system prompt is cached by each run's warm-up request`);
  console.log(`output tok/s = output tokens (from usage) / wall time of the run; vs in-process = output tok/s / the baseline's (${BASELINE}); HTTP cost = 1 - that;`);
  console.log("TTFT = request sent (POST written / submit) to the first non-empty text delta received, queueing included; ITL = gaps between successive text deltas");
  console.log("(one per decode step that produced text); server CPU = user + system seconds of this process (engine threads, HTTP server; the client too when inline),");
  console.log("client CPU = the load client's process; HTTP thread CPU = the server's main thread (everything but the engine, which has its own");
  console.log("thread; /proc, 10 ms ticks) per output token; text = in-process: requests whose streamed text equals the baseline run's.");
  for (const name of formats.map((format) => HTTP_PATHS[format].name)) {
    const mine = costs.filter((c) => c.path === name);
    const worst = mine.reduce((a, b) => (b.cost > a.cost ? b : a), mine[0]);
    console.log(`${name}: HTTP cost of output tok/s ${mine.map((c) => `N=${c.concurrency} ${(100 * c.cost).toFixed(1)}%`).join(", ")}; `
      + `target < 5%: ${mine.every((c) => c.cost < 0.05) ? "met at every N" : `missed at ${mine.filter((c) => c.cost >= 0.05).map((c) => `N=${c.concurrency}`).join(", ")}`} (worst N=${worst.concurrency})`);
  }
  if (adapterGaps.length > 0) {
    console.log(`Responses API against chat completions, same requests: output tok/s ${adapterGaps.map((g) => `N=${g.concurrency} ${g.throughput >= 0 ? "+" : ""}${(100 * g.throughput).toFixed(1)}%`).join(", ")}; `
      + `TTFT p50 ${adapterGaps.map((g) => `N=${g.concurrency} ${g.ttftMs >= 0 ? "+" : ""}${g.ttftMs.toFixed(1)} ms`).join(", ")}; `
      + `target within 2%: ${adapterGaps.every((g) => Math.abs(g.throughput) < 0.02) ? "met at every N" : `missed at ${adapterGaps.filter((g) => Math.abs(g.throughput) >= 0.02).map((g) => `N=${g.concurrency}`).join(", ")}`}`);
  }
  const faster = costs.filter((c) => c.cost < 0);
  if (faster.length > 0) {
    console.log(`HTTP ran faster than in-process at ${faster.map((c) => `N=${c.concurrency} (${c.path})`).join(", ")}: the same work cannot cost less over HTTP, so there `
      + `the run-to-run spread exceeds the HTTP layer's cost; compare on a quiet machine with --repeats 3 (fastest kept)`);
  }
  if (!peer.path) console.log(`llama.cpp HTTP peer: not run: ${peer.reason}`);
  console.log(JSON.stringify({
    bench: "http-load", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, threads, node: process.version, model: `${PRESET}-${DTYPE}`,
    client: clientMode, prompt, decode, repeats, promptTokens: { min: Math.min(...promptStats), max: Math.max(...promptStats), mean: mean(promptStats) },
    llamaServer: peer.path ? { path: peer.path } : { ran: false, reason: peer.reason }, levels: json, responsesAgainstChat: adapterGaps,
  }));
}

/** Every format must reach the engine as the same request (id aside), or the comparison is not like for like. */
function checkSameEngineRequests(model: LoadedModel, openaiBodies: string[], anthropicBodies: string[], responsesBodies: string[]): void {
  const { engine, registry } = serve(model);
  try {
    const [chat, messages] = createEndpoints(registry);
    for (let i = 0; i < openaiBodies.length; i++) {
      const a = JSON.stringify(toEngineRequest("x", chat.parse(JSON.parse(openaiBodies[i]))));
      const b = JSON.stringify(toEngineRequest("x", messages.parse(JSON.parse(anthropicBodies[i]))));
      const c = JSON.stringify(toEngineRequest("x", parseResponsesRequest(JSON.parse(responsesBodies[i]), registry)));
      if (a !== b || a !== c) throw new Error(`request ${i} reaches the engine differently through the formats:\n  openai:    ${a}\n  anthropic: ${b}\n  responses: ${c}`);
    }
  } finally {
    engine.close();
  }
}

await main();
process.exit(0);
