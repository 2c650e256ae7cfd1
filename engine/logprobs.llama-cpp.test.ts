// Log-probabilities against llama.cpp: the prompt logprobs (a scoring request's, as legacy completions' echo asks) and
// a greedy continuation's logprobs must equal the log-softmax of llama.cpp's own logits for the same file within 1e-3,
// on tiny Qwen3 (random weights, a 151,936-token vocabulary) and stories260K (trained).
import { describe, expect, it } from "vitest";
import { ensureTestModel } from "../scripts/test-models.js";
import { Engine } from "./engine.js";
import { loadModel } from "./load.js";
import type { EngineEvent, TokenLogprob } from "./request.js";
import { topTokens } from "./sample/logprobs.js";
import { referenceLogSoftmax } from "./testing/llama-cpp.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "./testing/fixtures.js";

const TOLERANCE = 1e-3;
const TOP = 5;

/**
 * Largest |ours - llama.cpp| over an entry's token and its top tokens (each by its id, and the j-th most likely value
 * against llama.cpp's j-th, so that a token missing from our list shows); `row` is llama.cpp's log-softmax there.
 */
function entryDiff(entry: TokenLogprob, row: Float64Array): number {
  let max = Math.abs(entry.logprob - row[entry.token]);
  const referenceTop = topTokens(row, entry.top.length);
  entry.top.forEach((alternative, j) => {
    max = Math.max(max, Math.abs(alternative.logprob - row[alternative.token]), Math.abs(alternative.logprob - row[referenceTop[j]]));
  });
  return max;
}

async function compareWithLlamaCpp(path: string, text: string, generate: number): Promise<{ prompt: number; generated: number }> {
  const model = await loadModel(path, { contextSize: 256, threads: 2, kvCache: { bytes: 16 * 1024 * 1024 } });
  try {
    const prompt = model.tokenizer.encode(text, { addSpecial: true, parseSpecial: true });
    const engine = new Engine(model);
    const events: EngineEvent[] = [];
    for await (const event of engine.submit({
      input: { tokens: prompt }, maxTokens: generate, sampling: { temperature: 0 }, ignoreEndOfGeneration: true,
      promptLogprobs: { top: TOP }, logprobs: { top: TOP },
    })) events.push(event);
    const promptEntries = (events.find((event) => event.type === "prompt_logprobs") as Extract<EngineEvent, { type: "prompt_logprobs" }>).logprobs;
    const finish = events.find((event) => event.type === "finish") as Extract<EngineEvent, { type: "finish" }>;
    expect(finish.tokens).toHaveLength(generate);
    const sequence = [...prompt, ...finish.tokens];
    const reference = await referenceLogSoftmax(path, sequence.slice(0, -1));
    let promptDiff = 0;
    promptEntries.forEach((entry, i) => {
      if (i === 0) return expect(entry).toBeNull();
      promptDiff = Math.max(promptDiff, entryDiff(entry!, reference[i - 1]));
    });
    let generatedDiff = 0;
    finish.logprobs!.forEach((entry, k) => {
      const row = reference[prompt.length - 1 + k];
      generatedDiff = Math.max(generatedDiff, entryDiff(entry, row));
      // Greedy took the token llama.cpp ranks first, unless the two are a near-tie there.
      let best = 0;
      for (let t = 1; t < row.length; t++) if (row[t] > row[best]) best = t;
      expect(row[best] - row[entry.token], `generated token ${k}`).toBeLessThan(0.02);
    });
    return { prompt: promptDiff, generated: generatedDiff };
  } finally {
    await model.dispose();
  }
}

describe("prompt and greedy logprobs against llama.cpp", () => {
  it("tiny-qwen3 f32: within 1e-3 of llama.cpp's log-softmax", async () => {
    const path = await ensureTestModel("tiny-qwen3", "gguf", "f32");
    const diff = await compareWithLlamaCpp(path, "The quick brown fox jumps over the lazy dog, and then it runs into the forest to find", 16);
    console.log(`tiny-qwen3 f32: max |logprob - llama.cpp| prompt ${diff.prompt.toExponential(2)}, generated ${diff.generated.toExponential(2)}`);
    expect(diff.prompt).toBeLessThan(TOLERANCE);
    expect(diff.generated).toBeLessThan(TOLERANCE);
  }, 120_000);

  const stories = FIXTURES.stories260kGguf;
  const reason = missingFixtureReason(stories);
  it.skipIf(skipOutsideCi(reason))(titled("stories260K: within 1e-3 of llama.cpp's log-softmax", reason), async () => {
    failIfMissing(reason);
    const diff = await compareWithLlamaCpp(stories, "Once upon a time, there was a little girl named Lily. She loved to play", 24);
    console.log(`stories260K: max |logprob - llama.cpp| prompt ${diff.prompt.toExponential(2)}, generated ${diff.generated.toExponential(2)}`);
    expect(diff.prompt).toBeLessThan(TOLERANCE);
    expect(diff.generated).toBeLessThan(TOLERANCE);
  }, 120_000);
});
