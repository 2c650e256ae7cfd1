// Gemma 3 (sliding windows), Qwen3-MoE (experts shared by a step's tokens) and Gemma 4 (both, with shared-KV layers
// and per-layer inputs) in the engine's batching: a batch mixing sequences at different positions (past the sliding
// window and not; routed to different experts) gives every sequence the logits it gets alone, and a prompt prefilled
// in chunks gives the logits of one prefill, bit for bit.
// (Greedy parity with llama.cpp is in parity.llama-cpp.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { type LoadedModel, loadModel } from "./load.js";
import { failIfMissing, skipOutsideCi, titled } from "./testing/fixtures.js";
import { TestSequences } from "./testing/sequence-kv.js";

for (const preset of ["tiny-gemma3", "tiny-qwen3moe", "tiny-gemma4"]) {
  const skip = testModelSkipReason(preset);

  describe.skipIf(skipOutsideCi(skip))(titled(`${preset} in batches and chunks`, skip), () => {
    let model: LoadedModel;
    beforeAll(async () => {
      failIfMissing(skip);
      model = await loadModel(await ensureTestModel(preset, "gguf", "q8_0"), { contextSize: 256, threads: 2 });
      if (preset === "tiny-qwen3moe") expect(model.config.num_experts).toBe(8);
      else expect(model.config.sliding_window).toBe(8);
    }, 120_000);
    afterAll(() => model?.dispose());

    const bytes = (values: Float32Array) => Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    const tokens = (text: string) => model.tokenizer.encode(text, { addSpecial: true, parseSpecial: true });

    /**
     * Runs `steps` of chunks on fresh block tables (one per sequence; Gemma's window layers' KV freed behind the
     * window after every step, as the engine does); returns a copy of each step's logits.
     */
    function run(sequences: number[][], steps: Array<Array<{ sequence: number; from: number; to: number; logits: boolean }>>): Float32Array[] {
      const kv = new TestSequences(model);
      for (const sequence of sequences) kv.add(sequence.length);
      try {
        return steps.map((step) => {
          const logits = Float32Array.from(model.runner.forward(step.map(({ sequence, from, to, logits }) => ({
            tokens: sequences[sequence].slice(from, to), startPosition: from, ...kv.tables(sequence), wantLogits: logits,
          }))));
          for (const { sequence, to } of step) kv.trim(sequence, to);
          return logits;
        });
      } finally {
        kv.releaseAll();
      }
    }

    it("gives each sequence of a mixed batch the logits it gets alone", () => {
      const long = tokens("A prompt long enough to run well past the sliding window of eight positions, twice over at least.");
      const short = tokens("Hi there");
      expect(long.length).toBeGreaterThan(16);
      const vocab = model.config.vocab_size;
      // Alone: the long prompt minus its last token, then that token as a decode step; the short prompt whole.
      const [, longAlone] = run([long], [[{ sequence: 0, from: 0, to: long.length - 1, logits: false }], [{ sequence: 0, from: long.length - 1, to: long.length, logits: true }]]);
      const [shortAlone] = run([short], [[{ sequence: 0, from: 0, to: short.length, logits: true }]]);
      // Together: the long sequence's decode step in the same forward pass as the short prompt's prefill.
      const [, together] = run([long, short], [
        [{ sequence: 0, from: 0, to: long.length - 1, logits: false }],
        [{ sequence: 0, from: long.length - 1, to: long.length, logits: true }, { sequence: 1, from: 0, to: short.length, logits: true }],
      ]);
      expect(together).toHaveLength(2 * vocab);
      expect(bytes(together.subarray(0, vocab)).equals(bytes(longAlone))).toBe(true);
      expect(bytes(together.subarray(vocab)).equals(bytes(shortAlone))).toBe(true);
    });

    it("prefills a prompt in chunks to the logits of one prefill", () => {
      const prompt = tokens("Chunks of seven tokens each cross the window's edge at different offsets in every chunk of this prompt.");
      const [whole] = run([prompt], [[{ sequence: 0, from: 0, to: prompt.length, logits: true }]]);
      const chunks: Array<Array<{ sequence: number; from: number; to: number; logits: boolean }>> = [];
      for (let from = 0; from < prompt.length; from += 7) chunks.push([{ sequence: 0, from, to: Math.min(prompt.length, from + 7), logits: from + 7 >= prompt.length }]);
      const chunked = run([prompt], chunks);
      expect(bytes(chunked[chunked.length - 1]).equals(bytes(whole))).toBe(true);
    });

    // A step's routed rows (tokens x experts per token) larger than the feed-forward buffers (batchSize rows) go
    // through the experts in several batches: the same logits as in one.
    it.skipIf(preset === "tiny-gemma3")("runs a step's experts in several batches to the logits of one", async () => {
      const small = await loadModel(model.path, { contextSize: 256, threads: 2, batchSize: 8 });
      try {
        const prompt = tokens("Eight tokens a step, each sent to several experts, overflow a batch of eight rows.");
        const step = (runner: LoadedModel["runner"], table: { blockTable: number[] }) => Float32Array.from(runner.forward([{ tokens: prompt.slice(0, 8), startPosition: 0, ...table, wantLogits: true }]));
        const kv = new TestSequences(model);
        kv.add(8);
        const one = step(model.runner, kv.tables(0));
        kv.releaseAll();
        const kvSmall = new TestSequences(small);
        kvSmall.add(8);
        const several = step(small.runner, kvSmall.tables(0));
        kvSmall.releaseAll();
        expect(bytes(several).equals(bytes(one))).toBe(true);
      } finally {
        await small.dispose();
      }
    });
  });
}
