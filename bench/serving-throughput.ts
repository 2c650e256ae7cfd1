// Serving throughput under concurrency with a shared prompt prefix: loom's Engine (continuous batching, prefix cache)
// against llama.cpp (node-llama-cpp: one context with N sequences, batched across sequences), same GGUF file, same
// token ids, greedy, same thread count, run one after the other in this process.
// Run: npm run build && node dist/bench/serving-throughput.js [options] (USAGE below; --help prints it).
// --svg <file> also draws output tok/s against N as a line chart, loom and llama.cpp (bench/throughput-charts.ts),
// e.g. --svg docs/performance/charts/serving-throughput.svg.
//
// Workload: every request is one shared prefix (BOS + random ids) plus its own random suffix; each generates exactly
// `decode` tokens (end-of-generation ignored). N client loops each send one request at a time, so N requests are in
// flight; `--requests` (default max(2N, 8)) requests in all. Each side warms up once on unrelated tokens first.
// llama.cpp has no KV sharing across sequences; its client reuses each sequence's own previous KV up to the first
// differing token (what llama-server does per slot with cache_prompt), so from a sequence's second request on it
// skips the shared prefix too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Token } from "node-llama-cpp";
import { Engine } from "../engine/engine.js";
import { loadModel } from "../engine/load.js";
import { REPOSITORY_ROOT } from "../engine/testing/fixtures.js";
import { REFERENCE_CONTEXT_OPTIONS, referenceLlama } from "../engine/testing/llama-cpp.js";
import { BenchCli } from "./bench-args.js";
import { describeMachine } from "./machine.js";
import { type ModelWork, benchModelPath, matmulFlops, mean, modelWork, printHeader, randomTokens, seededRandom, f32KvBytes } from "./bench-models.js";
import { measureReadBandwidth } from "./memory-bandwidth.js";
import { type ServingThroughputRecord, servingThroughputChart } from "./throughput-charts.js";
import { writeChart } from "./svg-chart.js";

const PRESET = "smollm2-135m";
const DTYPE = "q8_0";

/** One concurrency level's outcome on one side. */
interface LevelResult {
  seconds: number;
  requests: number;
  promptTokens: number;
  /** Prompt tokens whose KV was reused rather than computed. */
  reusedTokens: number;
  generatedTokens: number;
  meanTtft: number;
  /** Every request's generated tokens, in request order (for the agreement check). */
  outputs: number[][];
  /** llama.cpp only: node-llama-cpp's batching strategy of this run. */
  batching?: PeerBatching;
}

/**
 * How node-llama-cpp fills a batch from the sequences' queued tokens: "maximumParallelism" splits it evenly over the
 * sequences (its default); "firstInFirstOut" fills it in arrival order (closer to llama-server, which fills the batch
 * slot by slot). Neither wins everywhere: at 64 sequences the even split feeds llama.cpp 8-token slices of 64
 * sequences and prefill slows several-fold; at 16 it is the faster one. The default runs both and keeps the faster.
 */
type PeerBatching = "maximumParallelism" | "firstInFirstOut";
const PEER_BATCHING: readonly PeerBatching[] = ["maximumParallelism", "firstInFirstOut"];

interface Workload {
  prompts: number[][];
  decode: number;
  contextSize: number;
  vocabSize: number;
}

function buildWorkload(work: ModelWork, prefix: number, suffix: number, decode: number, requests: number, seed: number): Workload {
  const random = seededRandom(seed);
  const shared = randomTokens(random, prefix, work.vocabSize);
  if (work.bosId !== undefined && shared.length > 0) shared[0] = work.bosId;
  const prompts = Array.from({ length: requests }, () => [...shared, ...randomTokens(random, suffix, work.vocabSize)]);
  return { prompts, decode, contextSize: prefix + suffix + decode + 16, vocabSize: work.vocabSize };
}

/** Runs `prompts` through `serve` from `concurrency` client loops; returns the wall time. */
async function closedLoop(concurrency: number, count: number, serve: (index: number, client: number) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async (_, client) => {
    while (next < count) await serve(next++, client);
  }));
  return (performance.now() - start) / 1000;
}

async function loomLevel(path: string, workload: Workload, concurrency: number, threads: number): Promise<LevelResult> {
  // Room for every in-flight request without any sharing, plus one spare context: no preemption.
  const bytes = f32KvBytes(path, workload.contextSize, concurrency + 1);
  const model = await loadModel(path, { threads, contextSize: workload.contextSize, batchSize: 512, maxSequences: concurrency, kvCache: { bytes, dtype: "f32" } });
  try {
    const engine = new Engine(model);
    try {
      const run = async (tokens: number[], maxTokens: number) => {
        for await (const event of engine.submit({ input: { tokens }, maxTokens, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
          if (event.type === "error") throw event.error;
          if (event.type === "finish") return event;
        }
        throw new Error("the request ended without a finish event");
      };
      await run(randomTokens(seededRandom(99), 64, workload.vocabSize), 4); // warm-up on unrelated tokens
      const outputs: number[][] = [];
      const ttft: number[] = [];
      let promptTokens = 0;
      let reusedTokens = 0;
      let generatedTokens = 0;
      const seconds = await closedLoop(concurrency, workload.prompts.length, async (index) => {
        const finish = await run(workload.prompts[index], workload.decode);
        outputs[index] = finish.tokens;
        ttft.push(finish.timings.timeToFirstToken);
        promptTokens += finish.usage.promptTokens;
        reusedTokens += finish.usage.reusedPrefixTokens + finish.usage.reusedSuffixTokens;
        generatedTokens += finish.usage.completionTokens;
      });
      return { seconds, requests: workload.prompts.length, promptTokens, reusedTokens, generatedTokens, meanTtft: mean(ttft), outputs };
    } finally {
      engine.close();
    }
  } finally {
    await model.dispose();
  }
}

async function llamaCppLevel(path: string, workload: Workload, concurrency: number, threads: number, batching: PeerBatching): Promise<LevelResult> {
  const llama = await referenceLlama();
  const model = await llama.loadModel({ modelPath: path });
  try {
    const context = await model.createContext({
      contextSize: workload.contextSize, sequences: concurrency, batchSize: 512, threads, batching: { itemPrioritizationStrategy: batching }, ...REFERENCE_CONTEXT_OPTIONS,
    });
    try {
      const sequences = Array.from({ length: concurrency }, () => context.getSequence());
      /** Greedy `count` tokens after `prompt` on `sequence`, keeping the sequence's KV up to the first differing token. */
      const run = async (sequence: (typeof sequences)[number], prompt: number[], count: number) => {
        const start = performance.now();
        let keep = Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, prompt.length - 1);
        if (keep < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
        keep = sequence.nextTokenIndex;
        const tokens: number[] = [];
        let first = 0;
        for await (const token of sequence.evaluate(prompt.slice(keep) as Token[], { temperature: 0, yieldEogToken: true })) {
          if (tokens.length === 0) first = performance.now();
          tokens.push(token as number);
          if (tokens.length >= count) break;
        }
        return { tokens, reused: keep, ttft: (first - start) / 1000 };
      };
      await run(sequences[0], randomTokens(seededRandom(99), 64, workload.vocabSize), 4); // warm-up on unrelated tokens
      await sequences[0].clearHistory();
      const outputs: number[][] = [];
      const ttft: number[] = [];
      let promptTokens = 0;
      let reusedTokens = 0;
      let generatedTokens = 0;
      const seconds = await closedLoop(concurrency, workload.prompts.length, async (index, client) => {
        const result = await run(sequences[client], workload.prompts[index], workload.decode);
        outputs[index] = result.tokens;
        ttft.push(result.ttft);
        promptTokens += workload.prompts[index].length;
        reusedTokens += result.reused;
        generatedTokens += result.tokens.length;
      });
      return { seconds, requests: workload.prompts.length, promptTokens, reusedTokens, generatedTokens, meanTtft: mean(ttft), outputs, batching };
    } finally {
      await context.dispose();
    }
  } finally {
    await model.dispose();
  }
}

function best(results: LevelResult[]): LevelResult {
  return results.reduce((a, b) => (b.seconds < a.seconds ? b : a));
}

/** Requests whose first generated token is the peer's (later tokens drift apart on near-ties: llama.cpp's Q8_0
 * matmuls quantize activations to 8 bits, loom's do not, and random weights give flat distributions). */
function firstTokenAgreement(a: number[][], b: number[][]): number {
  return a.filter((tokens, i) => tokens[0] === b[i]?.[0]).length;
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/serving-throughput.js [--threads 2] [--concurrency 1,4,16,64]
       [--prefix 256] [--suffix 32] [--decode 64] [--requests N] [--repeats 1]
       [--peer-batching both|maximumParallelism|firstInFirstOut] [--quick] [--svg <file.svg>]`;
const cli: BenchCli = new BenchCli("serving-throughput", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    threads: { type: "string" }, concurrency: { type: "string" }, prefix: { type: "string" }, suffix: { type: "string" },
    decode: { type: "string" }, requests: { type: "string" }, repeats: { type: "string" }, "peer-batching": { type: "string" }, quick: { type: "boolean" },
    svg: { type: "string" },
  });
  const quick = values.quick ?? false;
  const threads = cli.integer("threads", values.threads ?? 2);
  const levels = cli.integers("concurrency", values.concurrency ?? (quick ? "1,4" : "1,4,16,64"));
  const prefix = cli.integer("prefix", values.prefix ?? (quick ? 64 : 256), 0);
  const suffix = cli.integer("suffix", values.suffix ?? (quick ? 16 : 32));
  const decode = cli.integer("decode", values.decode ?? (quick ? 16 : 64));
  const repeats = cli.integer("repeats", values.repeats ?? 1);
  const peerBatching = cli.oneOf("peer-batching", values["peer-batching"] ?? "both", ["both", ...PEER_BATCHING]);
  const strategies = peerBatching === "both" ? PEER_BATCHING : [peerBatching];
  const path = await benchModelPath(PRESET, DTYPE);
  const work = modelWork(path);
  const bandwidth = await measureReadBandwidth(1 << 30, 5, threads);
  const nodeLlamaCpp = JSON.parse(readFileSync(join(REPOSITORY_ROOT, "node_modules", "node-llama-cpp", "package.json"), "utf8")) as { version: string };
  const llama = await referenceLlama();
  const command = `node dist/bench/serving-throughput.js --threads ${threads} --concurrency ${levels.join(",")} --prefix ${prefix} --suffix ${suffix} --decode ${decode}`
    + `${values.requests ? ` --requests ${values.requests}` : ""}${repeats > 1 ? ` --repeats ${repeats}` : ""}${peerBatching !== "both" ? ` --peer-batching ${peerBatching}` : ""}${quick ? " --quick" : ""}`;
  const cores = describeMachine();
  const machine = printHeader(command, threads, [
    `model ${PRESET} ${DTYPE.toUpperCase()} random weights (${path}), ${(work.bytesPerToken / 1e6).toFixed(0)} MB of weights per decode step; f32 KV on both sides`,
    `peer: llama.cpp through node-llama-cpp ${nodeLlamaCpp.version} (${llama.buildType} CPU binary, release tag ${llama.llamaCppRelease.release}), one context, N sequences, batch 512, per-sequence prefix reuse, batching ${strategies.join(" and ")}${strategies.length > 1 ? " (the faster kept)" : ""}`,
    `workload: ${prefix}-token shared prefix + ${suffix}-token unique suffix, ${decode} generated tokens each (greedy, EOG ignored), N requests in flight, ${values.requests ? `${values.requests}` : "max(2N, 8)"} requests${repeats > 1 ? `, best of ${repeats} by wall time` : ""}`,
    `read bandwidth ${(bandwidth / 1e9).toFixed(1)} GB/s (wasm streaming sum, ${threads} threads): one sequence's decode ceiling ${(bandwidth / work.bytesPerToken).toFixed(0)} tok/s; peak ${(cores.peakFlops / 1e9).toFixed(0)} GFLOP/s f32 on all ${cores.cores} cores`,
  ]);
  console.log("");
  console.log("| N | requests | output tok/s loom | llama.cpp | ratio | total tok/s loom | llama.cpp | ratio | mean TTFT loom (s) | llama.cpp (s) | ratio (< 1: loom faster) | prefix-hit tokens loom | llama.cpp | loom % peak FLOP/s | llama.cpp % peak FLOP/s | first token equal | llama.cpp batching |");
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  const json: ServingThroughputRecord["levels"] = [];
  for (const concurrency of levels) {
    const requests = Number(values.requests ?? Math.max(2 * concurrency, 8));
    const workload = buildWorkload(work, prefix, suffix, decode, requests, 1234 + concurrency);
    const loomRuns: LevelResult[] = [];
    const peerRuns: LevelResult[] = [];
    for (let r = 0; r < repeats; r++) {
      loomRuns.push(await loomLevel(path, workload, concurrency, threads));
      for (const strategy of strategies) peerRuns.push(await llamaCppLevel(path, workload, concurrency, threads, strategy));
    }
    const loom = best(loomRuns);
    const peer = best(peerRuns);
    const rates = (result: LevelResult) => ({
      outputTokensPerSecond: result.generatedTokens / result.seconds,
      totalTokensPerSecond: (result.promptTokens + result.generatedTokens) / result.seconds,
      meanTtft: result.meanTtft,
      flopsFraction: matmulFlops(work, result.promptTokens - result.reusedTokens, result.generatedTokens, result.requests) / result.seconds / machine.peakFlops,
    });
    const a = rates(loom);
    const b = rates(peer);
    const agreeing = firstTokenAgreement(loom.outputs, peer.outputs);
    const ratio = (x: number, y: number) => `${(x / y).toFixed(2)}x`;
    console.log(`| ${concurrency} | ${requests} | ${a.outputTokensPerSecond.toFixed(1)} | ${b.outputTokensPerSecond.toFixed(1)} | ${ratio(a.outputTokensPerSecond, b.outputTokensPerSecond)} | ${a.totalTokensPerSecond.toFixed(1)} | ${b.totalTokensPerSecond.toFixed(1)} | ${ratio(a.totalTokensPerSecond, b.totalTokensPerSecond)} | ${a.meanTtft.toFixed(3)} | ${b.meanTtft.toFixed(3)} | ${ratio(a.meanTtft, b.meanTtft)} | ${loom.reusedTokens} / ${loom.promptTokens} | ${peer.reusedTokens} / ${peer.promptTokens} | ${(100 * a.flopsFraction).toFixed(1)}% | ${(100 * b.flopsFraction).toFixed(1)}% | ${agreeing} / ${requests} | ${peer.batching} |`);
    const summarize = (result: LevelResult, r: ReturnType<typeof rates>) => ({
      seconds: result.seconds, promptTokens: result.promptTokens, reusedPromptTokens: result.reusedTokens, generatedTokens: result.generatedTokens,
      outputTokensPerSecond: r.outputTokensPerSecond, totalTokensPerSecond: r.totalTokensPerSecond, meanTtftSeconds: r.meanTtft, fractionOfPeakFlops: r.flopsFraction,
    });
    const otherPeerRuns = peerRuns.filter((run) => run !== peer).map((run) => ({ batching: run.batching, seconds: run.seconds, meanTtftSeconds: run.meanTtft }));
    json.push({ concurrency, requests, loom: summarize(loom, a), llamaCpp: { ...summarize(peer, b), batching: peer.batching }, otherLlamaCppRuns: otherPeerRuns, firstTokenAgreeing: agreeing });
  }
  console.log("");
  console.log("output tok/s = generated tokens / wall time; total tok/s = (prompt + generated tokens) / wall time, reused prompt tokens included;");
  console.log("TTFT = request sent to first token, queueing included; % peak FLOP/s counts matrix products of computed tokens only (reused prompt tokens and attention excluded)");
  console.log("against the f32 FMA peak; llama.cpp's Q8_0 path multiplies in int8 (AVX-512 VNNI), which that peak does not bound.");
  const record: ServingThroughputRecord = {
    bench: "serving-throughput", command, date: machine.date, cpu: machine.cpu, cores: machine.cores, threads, model: `${PRESET}-${DTYPE}`,
    prefix, suffix, decode, readBandwidthBytesPerSecond: bandwidth, peakFlops: machine.peakFlops, levels: json,
  };
  console.log(JSON.stringify(record));
  if (values.svg) writeChart(values.svg, servingThroughputChart(record));
}

await main();
process.exit(0);
