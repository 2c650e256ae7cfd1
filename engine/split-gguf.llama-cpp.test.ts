// A split GGUF (three parts in gguf-split's layout, written by scripts/split-gguf.ts) loads in loom as one model and
// gives the same greedy tokens as the unsplit file, and llama.cpp reads the same parts and agrees token for token.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { splitGguf } from "../scripts/split-gguf.js";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { generate } from "./generate.js";
import { type LoadedModel, loadModel } from "./load.js";
import { openLlamaCppReference } from "./testing/llama-cpp.js";

const work = mkdtempSync(join(tmpdir(), "loom-split-parity-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function greedy(model: LoadedModel, prompt: number[], count: number): Promise<number[]> {
  for await (const event of generate(model, prompt, { maxTokens: count, sampling: { temperature: 0 }, ignoreEndOfGeneration: true })) {
    if (event.type === "done") return event.tokens;
  }
  throw new Error("generation ended without a done event");
}

describe.skipIf(testModelSkipReason("tiny-llama") !== undefined)("a split GGUF against llama.cpp", () => {
  it("tiny-llama Q8_0 in 3 parts: loom's tokens equal the unsplit file's and llama.cpp's on the parts", async () => {
    const whole = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const [first] = splitGguf(whole, join(work, "tiny-llama-Q8_0"), 3);
    const options = { contextSize: 256, threads: 1, kvCache: { bytes: 8 * 1024 * 1024 } };
    const split = await loadModel(first, options);
    const single = await loadModel(whole, options);
    const reference = await openLlamaCppReference(first);
    try {
      const prompt = reference.tokenize("Once upon a time, in a quiet village,");
      expect(split.tokenizer.encode("Once upon a time, in a quiet village,", { addSpecial: true, parseSpecial: true })).toEqual(prompt);
      const tokens = await greedy(split, prompt, 24);
      expect(tokens).toHaveLength(24);
      expect(tokens).toEqual(await greedy(single, prompt, 24));
      expect(tokens).toEqual(await reference.greedy(prompt, 24));
    } finally {
      await reference.dispose();
      await split.dispose();
      await single.dispose();
    }
  }, 120_000);
});
