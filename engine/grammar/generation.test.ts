// Constrained generation through the serving engine with random-weight models at temperature 1: every corpus schema,
// several seeds, on the Qwen3 tokenizer (151,936 ids) and the SmolLM2 one (49,152). Every output that finishes is a
// document ajv accepts, and most do; an output cut by maxTokens finishes with "length" and says its JSON is incomplete; the
// generator never dead-ends (a dead end would fail the request with an error event). Also: reasoning before the
// answer, with the thinking budget closing it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTestModel } from "../../scripts/test-models.js";
import { Engine } from "../engine.js";
import { type LoadedModel, loadModel } from "../load.js";
import type { EngineEvent, EngineRequest } from "../request.js";
import { SCHEMA_CORPUS } from "./testing/schema-corpus.js";
import { validatorFor } from "./testing/validator.js";

const LOAD = { contextSize: 512, threads: 2, maxSequences: 8, batchSize: 256, kvCache: { bytes: 32 * 1024 * 1024 } };

/** Runs one request to its end: the text, and the finish event (an error event fails the test). */
async function run(engine: Engine, request: EngineRequest): Promise<{ text: string; finish: Extract<EngineEvent, { type: "finish" }> }> {
  let text = "";
  for await (const event of engine.submit(request)) {
    if (event.type === "text") text += event.text;
    if (event.type === "error") throw event.error;
    if (event.type === "finish") return { text, finish: event };
  }
  throw new Error("no finish event");
}

/**
 * Runs every schema with every seed; afterwards at least `minimumComplete` outputs must have finished as documents
 * that validated (most schemas with an unbounded string cannot finish at random within 48 tokens: those are checked
 * as cut outputs only).
 */
function onModel(preset: "tiny-qwen3" | "tiny-llama", schemas: typeof SCHEMA_CORPUS, seeds: number[], minimumComplete: number) {
  describe(`${preset}: corpus schemas at temperature 1, seeds ${seeds.join(", ")}`, () => {
    let model: LoadedModel;
    let engine: Engine;
    const tally = { complete: 0, cut: 0 };

    beforeAll(async () => {
      model = await loadModel(await ensureTestModel(preset, "gguf", "q8_0"), LOAD);
      engine = new Engine(model);
    });
    afterAll(async () => {
      console.log(`${preset}: ${tally.complete} complete documents, ${tally.cut} cut at maxTokens`);
      await model?.dispose();
    });

    for (const entry of schemas) {
      it(entry.name, async () => {
        const validate = validatorFor(entry.schema).compile(entry.schema as object);
        const results = await Promise.all(seeds.map((seed) => run(engine, {
          input: { text: "Answer in JSON:" },
          maxTokens: 48,
          sampling: { temperature: 1, seed },
          constraint: { format: { type: "json_schema", schema: entry.schema } },
        })));
        for (const { text, finish } of results) {
          if (finish.reason === "stop") {
            tally.complete++;
            expect(finish.constraintComplete, text).toBe(true);
            expect(validate(JSON.parse(text)), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
          } else {
            tally.cut++;
            expect(finish.reason).toBe("length");
            expect(finish.constraintComplete, text).toBe(false);
            expect(finish.tokens.length).toBe(48);
          }
        }
      });
    }

    it(`finished and validated at least ${minimumComplete} documents of ${schemas.length * seeds.length} outputs`, () => {
      expect(tally.complete + tally.cut, "every output was checked").toBe(schemas.length * seeds.length);
      expect(tally.complete).toBeGreaterThanOrEqual(minimumComplete);
    });
  });
}

// Measured: 221 of 282 outputs finish on tiny-qwen3, 35 of 47 on tiny-llama.
onModel("tiny-qwen3", SCHEMA_CORPUS, [1, 2], 200);
onModel("tiny-llama", SCHEMA_CORPUS.filter((_, i) => i % 3 === 0), [3], 30);

describe("reasoning, then the constrained answer", () => {
  it("tiny-qwen3: free reasoning closed by the thinking budget, then a document of the schema", async () => {
    const model = await loadModel(await ensureTestModel("tiny-qwen3", "gguf", "q8_0"), LOAD);
    try {
      const engine = new Engine(model);
      const schema = { type: "object", properties: { answer: { enum: ["yes", "no"] } }, required: ["answer"], additionalProperties: false };
      const { text, finish } = await run(engine, {
        input: { messages: [{ role: "user", content: "Yes or no?" }], templateKwargs: { enable_thinking: true } },
        maxTokens: 64,
        sampling: { temperature: 1, seed: 5 },
        thinkingBudget: { tokens: 8 },
        constraint: { format: { type: "json_schema", schema }, thinking: { open: "<think>", close: "</think>" } },
      });
      expect(finish.reason, text).toBe("stop");
      expect(text.startsWith("<think>"), text).toBe(true);
      const close = text.indexOf("</think>");
      expect(close).toBeGreaterThan(0);
      expect(JSON.parse(text.slice(close + "</think>".length))).toEqual({ answer: expect.stringMatching(/^(yes|no)$/) });
    } finally {
      await model.dispose();
    }
  });
});
