// Every tiny random-weight preset loads in llama.cpp (node-llama-cpp's prebuilt CPU binary) and decodes greedily
// with the logit scale and top-1 margins weight-init.ts designs for.
import { type Llama, LlamaLogLevel, getLlama } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelDtype } from "./model-dtypes.js";
import { TINY_PRESET_NAMES, getPreset } from "./model-presets.js";
import { ensureTestModel, testModelSkipReason } from "./test-models.js";
import { LOGIT_STD } from "./weight-init.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { skipResourceSimulation } from "../engine/testing/llama-cpp.js";

const PROMPTS = ["Once upon a time", "def fibonacci(n):", "The capital of France is", "1, 2, 3, 4,"];
const STEPS = 10;
/** A top-1 margin below this is a near-tie that rounding differences between engines could flip. */
const CLEAR_MARGIN = 0.1;

const CASES: Array<[string, ModelDtype]> = [
  ...TINY_PRESET_NAMES.flatMap((preset): Array<[string, ModelDtype]> => [[preset, "f32"], [preset, "q8_0"]]),
  ["tiny-kquant", "q4_k_m"], ["tiny-kquant", "q5_k_m"], ["tiny-kquant", "q6_k"],
];

let llama: Llama;
beforeAll(async () => {
  skipResourceSimulation();
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
});
afterAll(async () => {
  await llama?.dispose();
});

/** Greedy decoding from each prompt; returns each step's top-1 margin, the chosen tokens and the first step's logit std. */
async function greedyMargins(modelPath: string): Promise<{ margins: number[]; tokens: number[]; logitStd: number; vocabulary: number }> {
  const model = await llama.loadModel({ modelPath });
  try {
    // NOTE: an explicit thread count: the default spin-waits on more threads than a loaded 2-core machine has.
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    const sequence = context.getSequence();
    const margins: number[] = [];
    const tokens: number[] = [];
    let logitStd = NaN;
    let vocabulary = 0;
    let first = true;
    for (const prompt of PROMPTS) {
      await sequence.clearHistory();
      const promptTokens = model.tokenize(prompt);
      expect(promptTokens.length).toBeGreaterThan(1);
      let pending = promptTokens.slice(0, -1);
      let last = promptTokens[promptTokens.length - 1];
      for (let step = 0; step < STEPS; step++) {
        const full = first; // the very first step returns every logit, the others only the top two
        first = false;
        const logitsOption = full ? true : { filter: { tokens: [], includeTop: 2 } };
        const results = await sequence.controlledEvaluate([...pending, [last, { generateNext: { logits: logitsOption } }]]);
        const logits = results[results.length - 1]!.next!.logits!;
        const values = [...logits.values()];
        expect(values.every(Number.isFinite)).toBe(true);
        if (full) {
          vocabulary = values.length;
          const mean = values.reduce((a, b) => a + b, 0) / values.length;
          logitStd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
        }
        const ranked = [...logits.entries()].sort((a, b) => b[1] - a[1]);
        margins.push(ranked[0][1] - ranked[1][1]);
        tokens.push(ranked[0][0]);
        pending = [];
        last = ranked[0][0];
      }
    }
    return { margins, tokens, logitStd, vocabulary };
  } finally {
    await model.dispose();
  }
}

describe.each(CASES)("%s %s in llama.cpp", (preset, dtype) => {
  const skip = testModelSkipReason(preset);
  it.skipIf(skipOutsideCi(skip))(titled("loads, and greedy steps have clear top-1 margins at the designed logit scale", skip), async () => {
    failIfMissing(skip);
    const path = await ensureTestModel(preset, "gguf", dtype);
    const { margins, tokens, logitStd, vocabulary } = await greedyMargins(path);
    expect(vocabulary).toBe(getPreset(preset).config.vocab_size);
    expect(logitStd).toBeGreaterThan(LOGIT_STD * 0.8);
    expect(logitStd).toBeLessThan(LOGIT_STD * 1.2);
    // Measured over 8 prompts x 24 steps: 3-8% of steps fall under 0.1 (median margin 1.2-1.7).
    const clear = margins.filter((m) => m > CLEAR_MARGIN).length / margins.length;
    expect(clear, `margins ${margins.map((m) => m.toFixed(2)).join(" ")}`).toBeGreaterThanOrEqual(0.75);
    // The output depends on the input: not one token everywhere.
    expect(new Set(tokens).size).toBeGreaterThanOrEqual(PROMPTS.length);
  });
});
