// Embedding inputs and the KV cache: a last-token-pooled input may take a cached prefix (KV computed for those very
// tokens), never a section relocated from after other text (the section cache's approximation), so its vector equals
// the one computed from scratch.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { Engine } from "../engine.js";
import { type LoadedModel, loadModel } from "../load.js";
import { deterministicTokens as tokens } from "../testing/seeded-random.js";

describe("embeddings beside the prefix and section caches (tiny-qwen3-embedding, last-token pooling)", () => {
  let model: LoadedModel;
  beforeAll(async () => {
    model = await loadModel(await ensureTestModel("tiny-qwen3-embedding", "gguf", "f32"), { contextSize: 256, threads: 1 });
  });
  afterAll(() => model?.dispose());

  it("reuses a cached prefix but not a relocated section: the vector equals the one computed from scratch", async () => {
    // A and C are several KV blocks long; C is far longer than the section threshold (8 tokens).
    const [a, b, c] = [tokens(1, 32), tokens(2, 32), tokens(3, 40)];
    const cached = new Engine(model);
    const scratch = new Engine(model, { cache: { prefixCaching: false } });
    try {
      await cached.embed({ inputs: [[...a, ...b, ...c]] });
      const before = cached.stats().tokens.computedPrompt;
      const [reused] = (await cached.embed({ inputs: [[...a, ...c]] })).embeddings;
      // The prefix A came from the cache (computed once), C was computed again after A.
      expect(cached.stats().tokens.computedPrompt - before).toBe(c.length);
      const [fresh] = (await scratch.embed({ inputs: [[...a, ...c]] })).embeddings;
      let largest = 0;
      for (let i = 0; i < fresh!.length; i++) largest = Math.max(largest, Math.abs(reused![i]! - fresh![i]!));
      expect(largest).toBeLessThan(1e-5);
    } finally {
      cached.close();
      scratch.close();
    }
  });
});
