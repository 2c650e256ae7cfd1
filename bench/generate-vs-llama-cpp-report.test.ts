import { describe, expect, it } from "vitest";
import { type CaseResult, type ReportContext, LOOM, speedCharts } from "./generate-vs-llama-cpp-report.js";
import type { BuildSpeeds } from "./llama-cpp-builds.js";
import { checkWellFormed, unescapeXml } from "./testing/well-formed-xml.js";

const work = { bytesPerToken: 143e6, layerParameters: 106e6, outputParameters: 28e6, vocabSize: 49152, bosId: 1 };
const context: ReportContext = { bandwidth: 32e9, peakFlops: 166e9, defaultChoice: "zen4", threads: 2 };

/** Rounds of [prefill, decode] tokens/s. */
function runs(...rounds: Array<[number, number]>): BuildSpeeds[] {
  return rounds.map(([prefill, decode]) => ({ prefillTokensPerSecond: prefill, decodeTokensPerSecond: decode, seconds: 2, cpuSeconds: 3.9 }));
}

/** Shaped as bench/generate-vs-llama-cpp.ts builds them: loom, the package as installed, and pinned builds. */
function result(name: string, entries: Record<string, BuildSpeeds[]>, failures: Record<string, string> = {}): CaseResult {
  const [preset, dtype] = name.split(":");
  return { name, preset, dtype, work, runs: new Map(Object.entries(entries)), failures: new Map(Object.entries(failures)), discarded: new Map() };
}

const bars = (svg: string) => [...svg.matchAll(/<rect class="bar"[^>]*><title>([^<]*)<\/title>/g)].map((m) => unescapeXml(m[1]));

describe("speedCharts", () => {
  const results = [
    result("smollm2-135m:f32", { [LOOM]: runs([317, 55], [310, 51], [320, 56]), default: runs([298, 34], [290, 33], [300, 35]), x64: runs([150, 20], [151, 21], [149, 22]), zen4: runs([299, 35], [297, 34], [301, 36]) }),
    result("smollm2-135m:q8_0", { [LOOM]: runs([268, 128], [260, 120], [270, 131]), default: runs([660, 67], [650, 66], [661, 68]), x64: runs([300, 70], [301, 71], [299, 69]), zen4: runs([655, 66], [654, 65], [670, 67]) }),
    result("qwen3-0.6b:q8_0", { [LOOM]: [], default: runs([181, 28], [180, 27], [183, 29]), x64: [], zen4: runs([182, 28], [181, 28], [180, 29]) }, { [LOOM]: "out of memory", x64: "crashed" }),
  ];

  it("draws decode and prefill with a bar per measured contender and its min-max spread", () => {
    const { decode, prefill } = speedCharts(results, context, "AMD EPYC, 2 threads; 2026-11-30");
    for (const svg of [decode, prefill]) expect(checkWellFormed(svg)[0]).toBe("svg");
    expect(decode).toContain("<title>Decode speed: loom and llama.cpp. AMD EPYC, 2 threads; 2026-11-30; bars: median over rounds, whiskers: min-max</title>");
    // loom, ggml's choice and (x64 being the faster decode build of smollm2 Q8_0) the fastest build; loom failed on qwen3.
    expect(bars(decode)).toEqual([
      "loom, smollm2-135m F32: 55 (51 to 56)",
      "llama.cpp, ggml's choice (zen4), smollm2-135m F32: 34 (33 to 35)",
      "llama.cpp, fastest CPU build, smollm2-135m F32: 35 (34 to 36) [zen4]",
      "loom, smollm2-135m Q8_0: 128 (120 to 131)",
      "llama.cpp, ggml's choice (zen4), smollm2-135m Q8_0: 67 (66 to 68)",
      "llama.cpp, fastest CPU build, smollm2-135m Q8_0: 70 (69 to 71) [x64]",
      "llama.cpp, ggml's choice (zen4), qwen3-0.6b Q8_0: 28 (27 to 29)",
      "llama.cpp, fastest CPU build, qwen3-0.6b Q8_0: 28 (27 to 29) [as installed: zen4]", // a tie: the first listed
    ]);
    expect(decode.match(/class="error-bar"/g)).toHaveLength(8);
    expect(unescapeXml(decode)).toContain("loom: smollm2-135m F32 55 (51 to 56); smollm2-135m Q8_0 128 (120 to 131); qwen3-0.6b Q8_0 no value.");
  });

  it("leaves the fastest-build bars out when ggml's choice is the fastest everywhere", () => {
    const { prefill } = speedCharts(results, context, "machine");
    // The installed package (ggml's choice, zen4) and zen4 pinned lead prefill in every case: the same build.
    expect(unescapeXml(prefill)).not.toContain("fastest CPU build");
    expect(bars(prefill)).toHaveLength(5);
    expect(bars(prefill)[1]).toBe("llama.cpp, ggml's choice (zen4), smollm2-135m F32: 298 (290 to 300)");
  });
});
