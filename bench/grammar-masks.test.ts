// Smoke test of the grammar-mask bench's helpers (the bench itself needs a model run, so it is not run here):
// the default schemas exist, and a replay times one entry per token of a document the constraint accepts.
import { describe, expect, it } from "vitest";
import { CompiledConstraint } from "../engine/grammar/constraint.js";
import { SCHEMA_CORPUS } from "../engine/grammar/testing/schema-corpus.js";
import { openModelSource } from "../engine/model/source.js";
import { tokenizerFromGguf } from "../engine/tokenizer/gguf.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { ensureTestModel, testModelSkipReason } from "../scripts/test-models.js";
import { DEFAULT_SCHEMAS, JSON_MODE, emptyTimes, replayTimes, selectSchemas } from "./grammar-masks.js";

describe("grammar-masks bench", () => {
  it("resolves the default selection, all of the corpus, and rejects unknown names", () => {
    expect(selectSchemas(DEFAULT_SCHEMAS.join(",")).map((schema) => schema.name)).toEqual(DEFAULT_SCHEMAS);
    expect(selectSchemas("all")).toHaveLength(SCHEMA_CORPUS.length + 1);
    expect(selectSchemas(JSON_MODE)[0]!.format).toEqual({ type: "json_object" });
    expect(() => selectSchemas("no-such-schema")).toThrow(RangeError);
  });

  const tinyLlama = testModelSkipReason("tiny-llama");
  it.skipIf(skipOutsideCi(tinyLlama))(titled("replays a valid document, timing every call of every token", tinyLlama), async () => {
    failIfMissing(tinyLlama);
    const path = await ensureTestModel("tiny-llama", "gguf", "q8_0");
    const source = openModelSource(path);
    const tokenizer = tokenizerFromGguf(source.ggufMetadata!, path);
    const [schema] = selectSchemas("tool-get-weather");
    const compiled = new CompiledConstraint({ format: schema!.format }, tokenizer, source.config.vocab_size);
    const document = SCHEMA_CORPUS.find((entry) => entry.name === "tool-get-weather")!.valid[0];
    const tokens = tokenizer.encode(JSON.stringify(document), { addSpecial: false });
    const logits = new Float32Array(source.config.vocab_size);
    const times = emptyTimes();
    const started = performance.now();
    replayTimes(compiled, tokens, logits, new Float32Array(logits.length), times);
    const elapsed = performance.now() - started;
    for (const calls of [times.allowed, times.mask, times.accept]) expect(calls).toHaveLength(tokens.length);
    // The three calls of a token are disjoint spans inside the replay: together they fit in its wall time.
    const recorded = [...times.allowed, ...times.mask, ...times.accept].reduce((sum, ms) => sum + ms, 0);
    expect(recorded).toBeGreaterThan(0);
    expect(recorded).toBeLessThanOrEqual(elapsed);
  });
});
