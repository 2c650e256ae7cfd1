// Prefill and decode speed of loom's WebAssembly backend against each CPU build of llama.cpp in node-llama-cpp's
// prebuilt package (each pinned in a fresh process: bench/llama-cpp-builds.ts), on the same GGUF files and thread
// count, in repeated interleaved rounds; every figure with its spread and as a fraction of the machine's limit.
// Run: npm run build && node dist/bench/generate-vs-llama-cpp.js [options] (USAGE below; --help prints it).
// --svg <prefix> also draws the summary as bar charts, <prefix>-decode.svg and <prefix>-prefill.svg (loom, ggml's
// choice and the fastest llama.cpp build per case, median with min-max), e.g. --svg docs/performance/charts/generate.
import { loadavg } from "node:os";
import { generate } from "../engine/generate.js";
import { type LoadedModel, loadModel } from "../engine/load.js";
import type { ModelDtype } from "../scripts/model-dtypes.js";
import { parseModelDtype } from "../scripts/model-dtypes.js";
import { getPreset } from "../scripts/model-presets.js";
import { BenchCli } from "./bench-args.js";
import { benchModelPath, modelWork, printHeader } from "./bench-models.js";
import { describeMachine } from "./machine.js";
import { type CaseResult, LOOM, printCaseTable, printSummary, speedCharts } from "./generate-vs-llama-cpp-report.js";
import { type BuildSpeeds, DEFAULT_BUILD, type PrebuiltPackage, availableBuilds, missingBuildsReason, prebuiltPackage, runBuild } from "./llama-cpp-builds.js";
import { waitForIdleCores } from "./idle-cores.js";
import { measureReadBandwidth } from "./memory-bandwidth.js";
import { writeChart } from "./svg-chart.js";

interface BenchCase {
  preset: string;
  dtype: ModelDtype;
  /** `preset:dtype`, as the flags name it. */
  name: string;
}

const DEFAULT_CASES = ["smollm2-135m:f32", "smollm2-135m:q8_0", "qwen3-0.6b:q8_0"];
const ALL_CASES = [...DEFAULT_CASES, "qwen3-0.6b:q4_k_m", "llama-3.2-1b:q8_0", "llama-3.2-1b:q4_k_m"];
/** Tokens of the unmeasured generation before each measured one (threads started, weights and code paged in). */
const WARMUP_TOKENS = 4;
/** The idle fraction of all cores, over one second, that a run waits for (the bench itself is idle meanwhile). */
const IDLE_THRESHOLD = 0.9;
/**
 * Runs of one contender in one round, at most, while each gets less than --min-cpu of its threads' time; the last
 * counts whatever it got. llama.cpp's spinning thread barrier makes a 2-thread run 10-20x slower while another
 * process holds one of two cores, so such a run measures the other process.
 */
const MAX_ATTEMPTS = 4;

function listFlag(text: string): string[] {
  return text.split(",").map((item) => item.trim()).filter((item) => item !== "");
}

function parseCases(text: string): BenchCase[] {
  const names = text === "default" ? DEFAULT_CASES : text === "all" ? ALL_CASES : listFlag(text);
  return names.map((name) => {
    const [preset, dtype, extra] = name.split(":");
    if (dtype === undefined || extra !== undefined) throw new RangeError(`a case is preset:dtype (e.g. qwen3-0.6b:q8_0), got "${name}"`);
    getPreset(preset); // throws naming the presets there are
    return { preset, dtype: parseModelDtype(dtype), name: `${preset}:${dtype}` };
  });
}

/** The llama.cpp builds to run: every CPU build pinned ("all"), the package as installed ("default"), or those named. */
function parseBuilds(text: string, available: readonly string[]): string[] {
  if (text === "all") return [...available];
  const names = listFlag(text);
  for (const name of names) {
    if (name !== DEFAULT_BUILD && !available.includes(name)) throw new RangeError(`no llama.cpp CPU build "${name}"; the package has ${available.join(", ")} (or "default", "all")`);
  }
  return names;
}

/** A prompt of exactly `count` ordinary tokens (ids in the middle of the vocabulary, after BOS). */
function syntheticPrompt(vocabulary: number, count: number, bos: number | undefined): number[] {
  const tokens = Array.from({ length: count }, (_, i) => 1000 + ((i * 7919) % Math.min(20000, vocabulary - 1000)));
  if (bos !== undefined) tokens[0] = bos;
  return tokens;
}

async function loomOnce(model: LoadedModel, prompt: number[], decode: number): Promise<BuildSpeeds> {
  const cpu = process.cpuUsage(); // the whole process, worker threads included
  for await (const event of generate(model, prompt, { maxTokens: decode, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
    if (event.type !== "done") continue;
    const { user, system } = process.cpuUsage(cpu);
    return {
      prefillTokensPerSecond: event.prefillTokensPerSecond,
      decodeTokensPerSecond: event.decodeTokensPerSecond,
      seconds: event.prefillSeconds + event.decodeSeconds,
      cpuSeconds: (user + system) / 1e6,
    };
  }
  throw new Error("generate() ended without a done event");
}

interface RunSettings {
  pkg: PrebuiltPackage | undefined;
  threads: number;
  promptLength: number;
  decode: number;
  repeats: number;
  /** Longest wait in seconds for idle cores before each run (0: do not wait). */
  waitIdle: number;
  /** The share of its threads' time below which a run is discarded and run again (0: keep every run). */
  minCpuShare: number;
}

/**
 * Every contender (loom and the llama.cpp builds) once per round. Rounds alternate the order, so drift on the shared
 * machine (another tenant starting, the clock changing) falls on all contenders alike rather than on the last ones.
 * A contender that fails is reported with its error and left out of later rounds.
 */
async function measureCase(benchCase: BenchCase, contenders: readonly string[], settings: RunSettings): Promise<CaseResult> {
  const { threads, promptLength, decode, repeats, pkg, waitIdle, minCpuShare } = settings;
  const path = await benchModelPath(benchCase.preset, benchCase.dtype);
  const work = modelWork(path);
  const prompt = syntheticPrompt(work.vocabSize, promptLength, work.bosId);
  const runs = new Map<string, BuildSpeeds[]>(contenders.map((contender) => [contender, []]));
  const failures = new Map<string, string>();
  const discarded = new Map<string, number>();
  const progress = (text: string) => process.stderr.write(`[${benchCase.name}] ${text}\n`);
  let model: LoadedModel | undefined;
  if (contenders.includes(LOOM)) {
    try {
      const start = performance.now();
      model = await loadModel(path, { threads, contextSize: prompt.length + decode + 16 });
      await loomOnce(model, prompt, WARMUP_TOKENS);
      progress(`loom loaded in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    } catch (error) {
      failures.set(LOOM, String((error as Error).message ?? error));
    }
  }
  try {
    for (let round = 0; round < repeats; round++) {
      for (const contender of round % 2 === 0 ? contenders : [...contenders].reverse()) {
        if (failures.has(contender)) continue;
        try {
          for (let attempt = 1; ; attempt++) {
            const { waitedSeconds, idle } = waitIdle > 0 ? await waitForIdleCores(IDLE_THRESHOLD, waitIdle) : { waitedSeconds: 0, idle: Number.NaN };
            const speeds = contender === LOOM
              ? await loomOnce(model!, prompt, decode)
              : (await runBuild(contender, { modelPath: path, prompt, decode, threads, warmupTokens: WARMUP_TOKENS }, pkg)).speeds!;
            const cpuShare = speeds.cpuSeconds / (speeds.seconds * threads);
            const kept = cpuShare >= minCpuShare || attempt === MAX_ATTEMPTS;
            progress(`round ${round + 1}/${repeats} ${contender}: prefill ${speeds.prefillTokensPerSecond.toFixed(1)}, decode ${speeds.decodeTokensPerSecond.toFixed(1)} tok/s, ${speeds.seconds.toFixed(1)} s, CPU ${(100 * cpuShare).toFixed(0)}% of ${threads} threads; cores ${(100 * idle).toFixed(0)}% idle before (waited ${waitedSeconds.toFixed(0)} s)${kept ? "" : "; discarded, runs again"}`);
            if (kept) {
              runs.get(contender)!.push(speeds);
              break;
            }
            discarded.set(contender, (discarded.get(contender) ?? 0) + 1);
          }
        } catch (error) {
          failures.set(contender, String((error as Error).message ?? error));
          progress(`${contender} failed: ${failures.get(contender)}`);
        }
      }
    }
  } finally {
    await model?.dispose();
  }
  return { name: benchCase.name, preset: benchCase.preset, dtype: benchCase.dtype, work, runs, failures, discarded };
}

/** The command line; --help prints it. */
const USAGE = `node dist/bench/generate-vs-llama-cpp.js [--threads 2] [--prompt 128] [--decode 128]
       [--repeats 3] [--builds all|default|<build,...>] [--cases default|all|<preset:dtype,...>]
       [--skip-loom all|<preset:dtype,...>] [--wait-idle 120] [--min-cpu 0.75] [--svg <file-prefix>]`;
const cli: BenchCli = new BenchCli("generate-vs-llama-cpp", USAGE);

async function main(): Promise<void> {
  const values = cli.parse({
    threads: { type: "string", default: "2" },
    prompt: { type: "string", default: "128" },
    decode: { type: "string", default: "128" },
    repeats: { type: "string", default: "3" },
    builds: { type: "string", default: "all" },
    cases: { type: "string", default: "default" },
    "skip-loom": { type: "string", default: "" },
    "wait-idle": { type: "string", default: "120" },
    "min-cpu": { type: "string", default: "0.75" },
    svg: { type: "string" },
  });
  const waitIdle = Number(values["wait-idle"]);
  if (!(waitIdle >= 0)) cli.fail(`--wait-idle must be a number of seconds, 0 or more; got ${values["wait-idle"]}`);
  const minCpuShare = Number(values["min-cpu"]);
  if (!(minCpuShare >= 0 && minCpuShare <= 1)) cli.fail(`--min-cpu must be a fraction from 0 to 1; got ${values["min-cpu"]}`);
  const threads = cli.integer("threads", values.threads);
  const promptLength = cli.integer("prompt", values.prompt);
  const decode = cli.integer("decode", values.decode, 2);
  const repeats = cli.integer("repeats", values.repeats);
  const cases = cli.check(() => parseCases(values.cases));
  const skipLoom = values["skip-loom"] === "all" ? new Set(cases.map((c) => c.name)) : new Set(cli.check(() => parseCases(values["skip-loom"] || "")).map((c) => c.name));
  const pkg = prebuiltPackage();
  const missing = missingBuildsReason(pkg);
  // Without pinnable builds (no prebuilt package for this platform, or not Linux) only the package as installed runs.
  const builds = missing === undefined ? cli.check(() => parseBuilds(values.builds, availableBuilds(pkg))) : [DEFAULT_BUILD];
  if (missing !== undefined) process.stderr.write(`running llama.cpp as installed only: ${missing}\n`);

  const command = `node dist/bench/generate-vs-llama-cpp.js --threads ${threads} --prompt ${promptLength} --decode ${decode} --repeats ${repeats} --builds ${values.builds} --cases ${values.cases}${values["skip-loom"] ? ` --skip-loom ${values["skip-loom"]}` : ""} --wait-idle ${waitIdle} --min-cpu ${minCpuShare}`;
  if (waitIdle > 0) await waitForIdleCores(IDLE_THRESHOLD, waitIdle);
  const bandwidth = await measureReadBandwidth(1 << 30, 5, threads);
  // ggml's own choice on this processor, from the package as installed.
  const defaultChoice = (await runBuild(DEFAULT_BUILD, undefined, pkg)).loaded;
  const { peakFlops, cores, megahertz } = describeMachine();
  const threadPeakFlops = (peakFlops * Math.min(threads, cores)) / cores;
  const machine = printHeader(command, threads, [
    `read bandwidth ${(bandwidth / 1e9).toFixed(1)} GB/s (WebAssembly streaming sum, ${threads} threads, best of 5); peak f32 ${(threadPeakFlops / 1e9).toFixed(0)} GFLOP/s (${Math.min(threads, cores)} cores x 2 FMA pipes x ${peakFlops / (cores * 2 * 2 * megahertz * 1e6)} lanes x 2 x ${megahertz} MHz)`,
    pkg === undefined
      ? `llama.cpp: node-llama-cpp's package as installed (${missing}), ggml's choice ${defaultChoice}`
      : `llama.cpp: ${pkg.name} ${pkg.version} (llama.cpp ${pkg.llamaCppRelease}) ships ${availableBuilds(pkg).length} CPU builds (${availableBuilds(pkg).join(", ")}); ggml's choice on this processor: ${defaultChoice}`,
    `load average ${loadavg().map((load) => load.toFixed(1)).join(", ")} (1, 5, 15 min) at the start; ${waitIdle > 0 ? `each run waits up to ${waitIdle} s for the cores to be ${100 * IDLE_THRESHOLD}% idle over a second` : "runs do not wait for idle cores"}; a run that got less than ${100 * minCpuShare}% of its threads' time is discarded and run again (${MAX_ATTEMPTS} tries at most, the last kept); the CPU column shows what the kept runs got`,
    `each llama.cpp run is a fresh process with one CPU build pinned (the library it mapped checked in /proc/self/maps); ${repeats} round${repeats > 1 ? "s" : ""}, every engine once per round, the order reversed every other round; each measured generation follows an unmeasured ${WARMUP_TOKENS}-token one`,
    `prefill: ${promptLength}-token prompt to the first token; decode: the ${decode - 1} tokens after it, greedy; figures are median (min-max) over rounds, ratios the ratio of medians (min-max of the rounds' pairs)`,
  ]);

  const context = { bandwidth, peakFlops: threadPeakFlops, defaultChoice, threads };
  const settings: RunSettings = { pkg, threads, promptLength, decode, repeats, waitIdle, minCpuShare };
  const results: CaseResult[] = [];
  for (const benchCase of cases) {
    const contenders = skipLoom.has(benchCase.name) ? builds : [LOOM, ...builds];
    const result = await measureCase(benchCase, contenders, settings);
    printCaseTable(result, context);
    results.push(result);
  }
  printSummary(results, context);
  if (values.svg) {
    const charts = speedCharts(results, context, `${machine.cpu}, ${threads} threads; ${promptLength}-token prompt, ${decode - 1} decoded tokens; ${repeats} round${repeats > 1 ? "s" : ""}; ${machine.date}`);
    writeChart(`${values.svg}-decode.svg`, charts.decode);
    writeChart(`${values.svg}-prefill.svg`, charts.prefill);
  }
}

await main();
process.exit(0);
