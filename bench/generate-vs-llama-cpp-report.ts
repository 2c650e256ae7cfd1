// The tables bench/generate-vs-llama-cpp.ts prints: per case, loom and every llama.cpp build with median (min-max)
// speeds and fractions of the machine's limits, the fastest build marked; then loom against the fastest build and
// against ggml's own choice, case by case; and the same figures as two bar charts (speedCharts).
import type { ModelWork } from "./bench-models.js";
import { type BuildSpeeds, DEFAULT_BUILD } from "./llama-cpp-builds.js";
import { type Spread, formatRatio, formatSpread, pairedRatio, spread } from "./speed-spread.js";
import { type BarChartSpec, type ChartValue, barChart } from "./svg-chart.js";

/** The contender name of loom itself (llama.cpp contenders are build names). */
export const LOOM = "loom";

/** One model and weight type: every contender's speeds, one entry per round, and the contenders that failed. */
export interface CaseResult {
  /** `preset:dtype`. */
  name: string;
  preset: string;
  dtype: string;
  work: ModelWork;
  runs: Map<string, BuildSpeeds[]>;
  failures: Map<string, string>;
  /** Runs discarded and run again because other processes held the cores, per contender. */
  discarded: Map<string, number>;
}

/** The machine's limits and ggml's choice of build, measured once per run of the bench. */
export interface ReportContext {
  /** Read bandwidth in bytes/s. */
  bandwidth: number;
  /** Peak f32 FLOP/s of the threads used. */
  peakFlops: number;
  /** The CPU build ggml loads from the package as installed. */
  defaultChoice: string;
  /** Threads each engine runs on. */
  threads: number;
}

type Metric = "prefillTokensPerSecond" | "decodeTokensPerSecond";

function series(result: CaseResult, contender: string, metric: Metric): number[] {
  return (result.runs.get(contender) ?? []).map((speeds) => speeds[metric]);
}

function measured(result: CaseResult, contender: string): boolean {
  return !result.failures.has(contender) && (result.runs.get(contender)?.length ?? 0) > 0;
}

/** The llama.cpp contender with the highest median for `metric`. */
function fastest(result: CaseResult, metric: Metric): string | undefined {
  let best: { contender: string; median: number } | undefined;
  for (const contender of result.runs.keys()) {
    if (contender === LOOM || !measured(result, contender)) continue;
    const median = spread(series(result, contender, metric)).median;
    if (best === undefined || median > best.median) best = { contender, median };
  }
  return best?.contender;
}

/** The run standing for ggml's choice: the package as installed when it ran, else the same build pinned. */
function choiceContender(result: CaseResult, context: ReportContext): string | undefined {
  return [DEFAULT_BUILD, context.defaultChoice].find((contender) => measured(result, contender));
}

function label(contender: string, context: ReportContext): string {
  if (contender === LOOM) return "loom";
  if (contender === DEFAULT_BUILD) return `llama.cpp as installed (ggml's choice: ${context.defaultChoice})`;
  return `llama.cpp ${contender}${contender === context.defaultChoice ? " (ggml's choice)" : ""}`;
}

/** A llama.cpp contender in ratios and the summary: its build, the package as installed by ggml's choice. */
function shortLabel(contender: string, context: ReportContext): string {
  return contender === DEFAULT_BUILD ? `as installed: ${context.defaultChoice}` : contender;
}

function loomAgainst(result: CaseResult, contender: string | undefined, metric: Metric): Spread | undefined {
  if (contender === undefined || !measured(result, LOOM)) return undefined;
  return pairedRatio(series(result, LOOM, metric), series(result, contender, metric));
}

function discardedNote(count: number | undefined): string {
  return count ? ` (${count} run${count > 1 ? "s" : ""} discarded)` : "";
}

function percent(fraction: number, digits: number): string {
  return Number.isNaN(fraction) ? "-" : `${(100 * fraction).toFixed(digits)}%`;
}

/** Prints one case: a row per contender, the fastest llama.cpp build per metric in bold, then loom's ratios. */
export function printCaseTable(result: CaseResult, context: ReportContext): void {
  const { work } = result;
  console.log("");
  console.log(`### ${result.preset} ${result.dtype.toUpperCase()}: ${(work.bytesPerToken / 1e6).toFixed(0)} MB of weights read per decoded token, ${((2 * work.layerParameters) / 1e9).toFixed(2)} GFLOP per prompt token`);
  console.log("");
  console.log("| engine | prefill tok/s | % of peak f32 FLOP/s | decode tok/s | % of read bandwidth | CPU time / (threads x wall) |");
  console.log("|---|---|---|---|---|---|");
  const fastestPrefill = fastest(result, "prefillTokensPerSecond");
  const fastestDecode = fastest(result, "decodeTokensPerSecond");
  for (const contender of result.runs.keys()) {
    const failure = result.failures.get(contender);
    if (failure !== undefined) {
      console.log(`| ${label(contender, context)} | failed: ${failure.split("\n")[0].slice(0, 200)} | | | | |`);
      continue;
    }
    const prefill = spread(series(result, contender, "prefillTokensPerSecond"));
    const decode = spread(series(result, contender, "decodeTokensPerSecond"));
    const cpuShare = spread((result.runs.get(contender) ?? []).map((run) => run.cpuSeconds / (run.seconds * context.threads)));
    const bold = (text: string, isFastest: boolean) => (isFastest ? `**${text}**` : text);
    console.log(`| ${label(contender, context)} | ${bold(formatSpread(prefill), contender === fastestPrefill)} | ${percent((prefill.median * 2 * work.layerParameters) / context.peakFlops, 1)} | ${bold(formatSpread(decode), contender === fastestDecode)} | ${percent((decode.median * work.bytesPerToken) / context.bandwidth, 0)} | ${cpuShare.min === cpuShare.max ? percent(cpuShare.min, 0) : `${percent(cpuShare.min, 0)}-${percent(cpuShare.max, 0)}`}${discardedNote(result.discarded.get(contender))} |`);
  }
  if (!measured(result, LOOM)) return;
  const choice = choiceContender(result, context);
  const ratio = (contender: string | undefined, metric: Metric) => {
    const value = loomAgainst(result, contender, metric);
    return value === undefined ? "-" : `${formatRatio(value)} against ${shortLabel(contender!, context)}`;
  };
  console.log("");
  console.log(`loom / fastest llama.cpp build: prefill ${ratio(fastestPrefill, "prefillTokensPerSecond")}, decode ${ratio(fastestDecode, "decodeTokensPerSecond")}.`);
  console.log(`loom / ggml's choice: prefill ${ratio(choice, "prefillTokensPerSecond")}, decode ${ratio(choice, "decodeTokensPerSecond")}.`);
}

/** Prints loom against the fastest llama.cpp build and against ggml's choice, a row per case. */
export function printSummary(results: readonly CaseResult[], context: ReportContext): void {
  console.log("");
  console.log("### Summary: loom against the fastest llama.cpp build per case and metric");
  console.log("");
  console.log("| model | weights | prefill tok/s loom | fastest llama.cpp | loom / fastest | loom / ggml's choice | decode tok/s loom | fastest llama.cpp | loom / fastest | loom / ggml's choice |");
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const result of results) {
    const choice = choiceContender(result, context);
    const cells = (["prefillTokensPerSecond", "decodeTokensPerSecond"] as const).flatMap((metric) => {
      const best = fastest(result, metric);
      const loom = measured(result, LOOM) ? formatSpread(spread(series(result, LOOM, metric))) : "-";
      const bestCell = best === undefined ? "-" : `${formatSpread(spread(series(result, best, metric)))} (${shortLabel(best, context)})`;
      const against = (contender: string | undefined) => {
        const value = loomAgainst(result, contender, metric);
        return value === undefined ? "-" : formatRatio(value);
      };
      return [loom, bestCell, against(best), against(choice)];
    });
    console.log(`| ${result.preset} | ${result.dtype.toUpperCase()} | ${cells.join(" | ")} |`);
  }
}

/**
 * The decode and prefill figures as bar charts (SVG text): per case, loom, ggml's choice of llama.cpp build and the
 * fastest build of that case and metric (left out when it is ggml's choice in every case), each bar the median over
 * rounds with its min-max. `subtitle` names the machine and run.
 */
export function speedCharts(results: readonly CaseResult[], context: ReportContext, subtitle: string): { decode: string; prefill: string } {
  const chart = (metric: Metric, what: string): string => {
    const value = (result: CaseResult, contender: string | undefined, note?: string): ChartValue | undefined => {
      if (contender === undefined || !measured(result, contender)) return undefined;
      const { median, min, max } = spread(series(result, contender, metric));
      return { y: median, min, max, note };
    };
    const choices = results.map((result) => choiceContender(result, context));
    const fastestBuilds = results.map((result) => fastest(result, metric));
    const bars: BarChartSpec["series"][number][] = [
      { name: "loom", values: results.map((result) => value(result, LOOM)) },
      { name: `llama.cpp, ggml's choice (${context.defaultChoice})`, values: results.map((result, i) => value(result, choices[i])) },
    ];
    // The package as installed runs ggml's choice: the same build as that build pinned.
    const build = (contender: string | undefined) => (contender === DEFAULT_BUILD ? context.defaultChoice : contender);
    const fastestDiffers = fastestBuilds.some((fastestBuild, i) => fastestBuild !== undefined && build(fastestBuild) !== build(choices[i]));
    if (fastestDiffers) {
      bars.push({ name: "llama.cpp, fastest CPU build", values: results.map((result, i) => value(result, fastestBuilds[i], fastestBuilds[i] && shortLabel(fastestBuilds[i]!, context))) });
    }
    return barChart({
      title: `${what} speed: loom and llama.cpp`,
      subtitle: `${subtitle}; bars: median over rounds, whiskers: min-max`,
      yLabel: `${what.toLowerCase()} tokens/s`,
      xLabel: "model and weight type (random weights of the model's shape)",
      categories: results.map((result) => `${result.preset} ${result.dtype.toUpperCase()}`),
      series: bars,
    });
  };
  return { decode: chart("decodeTokensPerSecond", "Decode"), prefill: chart("prefillTokensPerSecond", "Prefill") };
}
