// The figures bench/vision-encode.ts reports: Gemma 3 27B's encoder work per image, and what it reads from
// llama-mtmd-cli's log (a real one, trimmed) and from GNU time's report.
import { describe, expect, it } from "vitest";
import { encoderWork, parseMtmdLog, parseTimeReport } from "./vision-encode-figures.js";

describe("encoderWork", () => {
  it("counts SigLIP so400m at 896 px: 5.46 TFLOP per image, 38% of it attention", () => {
    const work = encoderWork({ patchesPerSide: 64, patchSize: 14, hiddenSize: 1152, feedForwardSize: 4304, layers: 27, tokensPerImage: 256, outputSize: 5376 });
    expect(work.layerMatmuls).toBe(1_683_744_620_544);
    expect(work.attention).toBe(1_043_677_052_928);
    expect(work.patchAndProjection).toBe(4_096 * 588 * 1152 + 256 * 1152 * 5376);
    expect(work.total).toBe(2_731_781_652_480);
    expect(work.attention / work.total).toBeCloseTo(0.382, 3);
  });
});

const LOG = `0.01.753.826 I llama_context: flash_attn            = auto
0.02.927.382 I warmup: flash attention is enabled
0.02.932.136 I main: loading model: model.gguf
0.02.933.480 W WARN: This is an experimental CLI for testing multimodal capability.
0.02.933.510 W       For normal use cases, please use the standard llama-cli
0.04.307.212 I encoding mtmd batch, n_chunks = 1 (done = 1, total = 3)
0.04.531.643 I mtmd batch encoding done in 225 ms
0.04.531.925 I decoding image batch 1/2, n_tokens_batch = 16
0.04.536.557 I image decoded (batch 1/2) in 4 ms
0.04.537.557 I image decoded (batch 2/2) in 3 ms
1.04.620.687 I llama_perf_context_print:        load time =    1700.35 ms
1.04.620.712 I llama_perf_context_print: prompt eval time =    1597.35 ms /    31 tokens (   51.53 ms per token,    19.41 tokens per second)
1.04.620.775 I llama_perf_context_print:        eval time =      87.50 ms /     1 runs   (   87.50 ms per token,    11.43 tokens per second)
1.04.620.806 I llama_perf_context_print:       total time =    1717.36 ms /    32 tokens
`;

describe("parseMtmdLog", () => {
  it("reads the encode, the image's decode batches, the perf counters and the time to first token", () => {
    const run = parseMtmdLog(LOG);
    expect(run).toMatchObject({ encodeMs: 225, imageDecodeMs: 7, promptEvalMs: 1597.35, promptTokens: 31, evalMs: 87.5, flashAttention: "enabled" });
    // 1 min 4.620687 s - 2.933480 s (a minute past the start: the minutes field counts), less the token's eval
    expect(run.timeToFirstTokenMs).toBeCloseTo((64.620687 - 2.93348) * 1000 - 87.5, 6);
  });

  it("takes the older per-slice line and colour codes, and leaves out what is missing", () => {
    const run = parseMtmdLog("\x1b[34m0.00.100.000\x1b[0m W WARN: This is an experimental CLI\n0.00.200.000 I image slice encoded in 41 ms\n");
    expect(run.encodeMs).toBe(41);
    expect([run.imageDecodeMs, run.promptEvalMs, run.flashAttention, run.timeToFirstTokenMs]).toEqual([undefined, undefined, undefined, undefined]);
    expect(parseMtmdLog("0.00.010.000 I warmup: flash attention is disabled\n").flashAttention).toBe("disabled");
  });
});

describe("parseTimeReport", () => {
  it("reads peak RSS, CPU and wall time from /usr/bin/time -v", () => {
    const report = parseTimeReport(`llama output
\tCommand being timed: "llama-mtmd-cli -m x"
\tUser time (seconds): 101.52
\tSystem time (seconds): 2.25
\tPercent of CPU this job got: 195%
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:03.56
\tMaximum resident set size (kbytes): 2140616
`);
    expect(report.maxRssBytes).toBe(2_140_616 * 1024);
    expect(report.cpuSeconds).toBeCloseTo(103.77, 6);
    expect(report.wallSeconds).toBeCloseTo(63.56, 6);
    expect(parseTimeReport("nothing here")).toEqual({ maxRssBytes: undefined, cpuSeconds: undefined, wallSeconds: undefined });
  });
});
