import { describe, expect, it } from "vitest";
import { type ClusterScalingRecord, type ServingThroughputRecord, clusterScalingChart, servingThroughputChart } from "./throughput-charts.js";
import { checkWellFormed, unescapeXml } from "./testing/well-formed-xml.js";

const side = (outputTokensPerSecond: number) => ({
  seconds: 10, promptTokens: 2304, reusedPromptTokens: 1792, generatedTokens: 512, outputTokensPerSecond, totalTokensPerSecond: outputTokensPerSecond * 5,
  meanTtftSeconds: 0.4, fractionOfPeakFlops: 0.2,
});

/** As bench/serving-throughput.ts prints it (its last line), with made-up figures. */
const serving: ServingThroughputRecord = {
  bench: "serving-throughput", command: "node dist/bench/serving-throughput.js --threads 2 --concurrency 1,4,16,64", date: "2026-11-30", cpu: "AMD EPYC", cores: 2,
  threads: 2, model: "smollm2-135m-q8_0", prefix: 256, suffix: 32, decode: 64, readBandwidthBytesPerSecond: 32e9, peakFlops: 166e9,
  levels: [1, 4, 16, 64].map((concurrency, i) => ({
    concurrency, requests: Math.max(2 * concurrency, 8), loom: side([90, 210, 380, 420][i]),
    llamaCpp: { ...side([60, 150, 200, 180][i]), batching: i === 3 ? "firstInFirstOut" : "maximumParallelism" },
    otherLlamaCppRuns: [{ batching: "firstInFirstOut", seconds: 12, meanTtftSeconds: 0.5 }], firstTokenAgreeing: concurrency,
  })),
};

const level = (workers: number, outputTokensPerSecond: number) => ({
  workers, clients: 4 * workers, seconds: 20, requests: 32 * workers, outputTokens: 20 * outputTokensPerSecond, outputTokensPerSecond, perWorker: Array(workers).fill(32),
  workerCpuSeconds: Array(workers).fill(15), gatewayCpuSeconds: 3, clientCpuSeconds: 1, ttftP50Ms: 120, itlP50Ms: 30,
});

/** As bench/cluster-scaling.ts prints it (its last line), with made-up figures. */
const cluster: ClusterScalingRecord = {
  bench: "cluster-scaling", command: "node dist/bench/cluster-scaling.js --workers 1,2,3", date: "2026-11-30", cpu: "AMD EPYC", cores: 2, threads: 1, node: "v20.20.2",
  model: "smollm2-135m-q8_0", concurrencyPerWorker: 4, requestsPerWorker: 32, decode: 64, prompt: { min: 32, max: 48 }, context: 128, routing: "default",
  tokenLimits: "on", postgres: "16.4", redis: "7.0.15", usageRequestsRecorded: 204, requestsSent: 204, failures: [],
  levels: [level(1, 100), level(2, 170), level(3, 175)],
};

const points = (svg: string) => [...svg.matchAll(/class="point"[^>]*><title>([^<]*)<\/title>/g)].map((m) => unescapeXml(m[1]));

describe("servingThroughputChart", () => {
  it("draws a line per server over the concurrency levels on a log2 axis", () => {
    const svg = servingThroughputChart(serving);
    checkWellFormed(svg);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(points(svg)).toHaveLength(8);
    expect(points(svg)[0]).toBe("loom (continuous batching, prefix cache), requests in flight (closed-loop clients) 1: 90");
    expect(points(svg)[7]).toBe("llama.cpp (node-llama-cpp, N sequences, faster batching), requests in flight (closed-loop clients) 64: 180 [firstInFirstOut]");
    for (const tick of ["1", "2", "4", "8", "16", "32", "64"]) expect(svg).toContain(`font-size="12">${tick}</text>`);
    expect(svg).toContain("smollm2-135m-q8_0, 256-token shared prefix + 32 own, 64 generated each; AMD EPYC, 2 threads; 2026-11-30");
  });

  it("draws a single level", () => {
    const svg = servingThroughputChart({ ...serving, levels: serving.levels.slice(0, 1) });
    checkWellFormed(svg);
    expect(points(svg)).toHaveLength(2);
  });
});

describe("clusterScalingChart", () => {
  it("draws the measured line and linear scaling from one worker, dashed", () => {
    const svg = clusterScalingChart(cluster);
    checkWellFormed(svg);
    expect(points(svg)).toEqual([
      "measured: gateway + W workers, workers (W) 1: 100",
      "measured: gateway + W workers, workers (W) 2: 170",
      "measured: gateway + W workers, workers (W) 3: 175",
      "1 worker's figure x W (linear scaling), workers (W) 1: 100",
      "1 worker's figure x W (linear scaling), workers (W) 2: 200",
      "1 worker's figure x W (linear scaling), workers (W) 3: 300",
    ]);
    expect(svg).toContain('stroke-dasharray="6 4"');
    expect(svg).toContain("2 cores shared by workers, gateway and client");
  });

  it("has no reference line without a 1-worker run", () => {
    const svg = clusterScalingChart({ ...cluster, levels: cluster.levels.slice(1) });
    checkWellFormed(svg);
    expect(points(svg)).toHaveLength(2);
    expect(svg).not.toContain("stroke-dasharray");
  });
});
