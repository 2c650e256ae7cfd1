// The JSON records bench/serving-throughput.ts and bench/cluster-scaling.ts print as their last line, and those
// figures as line charts (SVG text) for their --svg flag: throughput against client concurrency, loom against
// llama.cpp; and aggregate throughput against the number of workers, against linear scaling from one worker.
import { lineChart } from "./svg-chart.js";

/** One side of one concurrency level in serving-throughput's record. */
export interface ServingSideSummary {
  seconds: number;
  promptTokens: number;
  reusedPromptTokens: number;
  generatedTokens: number;
  outputTokensPerSecond: number;
  totalTokensPerSecond: number;
  meanTtftSeconds: number;
  fractionOfPeakFlops: number;
}

/** The JSON line bench/serving-throughput.ts prints. */
export interface ServingThroughputRecord {
  bench: "serving-throughput";
  command: string;
  date: string;
  cpu: string;
  cores: number;
  threads: number;
  model: string;
  prefix: number;
  suffix: number;
  decode: number;
  readBandwidthBytesPerSecond: number;
  peakFlops: number;
  levels: Array<{
    concurrency: number;
    requests: number;
    loom: ServingSideSummary;
    /** The faster of the batching strategies run. */
    llamaCpp: ServingSideSummary & { batching?: string };
    otherLlamaCppRuns: Array<{ batching?: string; seconds: number; meanTtftSeconds: number }>;
    firstTokenAgreeing: number;
  }>;
}

/** The JSON line bench/cluster-scaling.ts prints. */
export interface ClusterScalingRecord {
  bench: "cluster-scaling";
  command: string;
  date: string;
  cpu: string;
  cores: number;
  threads: number;
  node: string;
  model: string;
  concurrencyPerWorker: number;
  requestsPerWorker: number;
  decode: number;
  prompt: { min: number; max: number };
  context: number;
  routing: string;
  tokenLimits: string;
  postgres: string;
  redis: string;
  usageRequestsRecorded: number;
  requestsSent: number;
  failures: string[];
  levels: Array<{
    workers: number;
    clients: number;
    seconds: number;
    requests: number;
    outputTokens: number;
    outputTokensPerSecond: number;
    perWorker: number[];
    workerCpuSeconds: number[];
    gatewayCpuSeconds: number;
    clientCpuSeconds: number;
    ttftP50Ms: number;
    itlP50Ms: number;
  }>;
}

/** Output tokens/s against the number of requests in flight, one line for loom and one for llama.cpp. */
export function servingThroughputChart(record: ServingThroughputRecord): string {
  const levels = [...record.levels].sort((a, b) => a.concurrency - b.concurrency);
  return lineChart({
    title: "Serving throughput: output tokens/s against concurrent requests",
    subtitle: `${record.model}, ${record.prefix}-token shared prefix + ${record.suffix} own, ${record.decode} generated each; ${record.cpu}, ${record.threads} threads; ${record.date}`,
    yLabel: "output tokens/s",
    xLabel: "requests in flight (closed-loop clients)",
    xScale: levels.length > 1 && levels.every((level) => level.concurrency > 0) ? "log2" : "linear",
    series: [
      { name: "loom (continuous batching, prefix cache)", points: levels.map((level) => ({ x: level.concurrency, y: level.loom.outputTokensPerSecond })) },
      {
        name: "llama.cpp (node-llama-cpp, N sequences, faster batching)",
        points: levels.map((level) => ({ x: level.concurrency, y: level.llamaCpp.outputTokensPerSecond, note: level.llamaCpp.batching })),
      },
    ],
  });
}

/**
 * Aggregate output tokens/s through one gateway against the number of workers, with the 1-worker figure times W
 * (dashed) as the linear scaling it would be if every worker had cores of its own.
 */
export function clusterScalingChart(record: ClusterScalingRecord): string {
  const levels = [...record.levels].sort((a, b) => a.workers - b.workers);
  const one = levels.find((level) => level.workers === 1);
  const series: Parameters<typeof lineChart>[0]["series"][number][] = [
    { name: "measured: gateway + W workers", points: levels.map((level) => ({ x: String(level.workers), y: level.outputTokensPerSecond })) },
  ];
  if (one !== undefined && levels.length > 1) {
    series.push({ name: "1 worker's figure x W (linear scaling)", dashed: true, points: levels.map((level) => ({ x: String(level.workers), y: one.outputTokensPerSecond * level.workers })) });
  }
  return lineChart({
    title: "Cluster scaling on one machine: aggregate output tokens/s",
    subtitle: `${record.model}, ${record.threads}-thread workers, ${record.concurrencyPerWorker} clients per worker; ${record.cores} cores shared by workers, gateway and client; ${record.cpu}; ${record.date}`,
    yLabel: "output tokens/s",
    xLabel: "workers (W)",
    xScale: "category",
    series,
  });
}
