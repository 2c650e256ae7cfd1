// Conformance against llama.cpp (node-llama-cpp, vocab-only): for real vocabularies written to GGUF with
// ggufTokenizerMetadata, loom's encode must equal llama.cpp's token for token, decode must equal its detokenize, and
// token attributes, end-of-generation tokens and BOS behaviour must agree.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "../model/gguf/reader.js";
import { gguf, writeGguf, type GgufTypedValue } from "../model/gguf/writer.js";
import { tokenizerFromGguf } from "./gguf.js";
import { ggufTokenizerMetadata } from "./gguf-metadata.js";
import { CORPUS, LONG_PROMPT, fuzzCorpus } from "./test-corpus.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import { skipResourceSimulation } from "../testing/llama-cpp.js";
import { gemma4TokenizerKeys, gemma4TokenizerSourceFiles } from "../../scripts/gemma4-tokenizer.js";
import type { Tokenizer } from "./tokenizer.js";
import { wellFormed } from "./unicode.js";
import { TokenAttribute, TokenType } from "./vocabulary.js";

/** The native model behind node-llama-cpp's LlamaModel, for the raw values its wrapper filters. */
interface NativeModel {
  getTokenAttributes(id: number): number;
  tokenBos(): number;
  tokenEos(): number;
  shouldPrependBosToken(): boolean;
}
const native = (model: LlamaModel): NativeModel => (model as unknown as { _model: NativeModel })._model;

let llama: Llama;
let directory: string;

beforeAll(async () => {
  skipResourceSimulation();
  // Fatal only: node-llama-cpp's memory estimate, where it is not skipped, tries a full load of these tensor-less files
  // and logs the failure.
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.fatal });
  directory = mkdtempSync(join(tmpdir(), "loom-tokenizer-"));
});

afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

interface Vocabulary {
  title: string;
  /** Tokenizer source for ggufTokenizerMetadata, or an existing GGUF file. */
  source: string;
  existingGguf?: boolean;
  pre?: string;
  /** Run the full checks (attributes of every token, decode, round trip); pre-tokenizer variants run encode only. */
  full: boolean;
  /** Changes to the metadata before writing (test-only vocabularies). */
  edit?: (entries: Array<[string, GgufTypedValue]>) => Array<[string, GgufTypedValue]>;
  /** The tokenizer metadata to write, where it is not read from `source` (the generator's own vocabularies). */
  metadata?: () => Array<[string, GgufTypedValue]>;
  /** Tokens hold U+2581 for spaces, so a literal U+2581 decodes as a space (no round trip). */
  spacesAsU2581?: boolean;
  /**
   * Decode applies llama.cpp's clean_spaces (" ," -> ","), so the round trip goes through the tokens' pieces, as
   * streamed output joins them, rather than decode.
   */
  cleansSpaces?: boolean;
}

/**
 * Llama 2's vocabulary dressed as Phi-3's: `general.name` "Phi-3" and the last token renamed "<|endoftext|>", so that
 * llama.cpp applies its Phi-3 rule (special tokens swallow the whitespace after them).
 */
function asPhi3(entries: Array<[string, GgufTypedValue]>): Array<[string, GgufTypedValue]> {
  return [
    ["general.name", gguf.string("Phi-3 mini (test)")],
    ...entries.map(([key, value]): [string, GgufTypedValue] => {
      if (key === "tokenizer.ggml.tokens" && value.type === "array" && value.itemType === "string") {
        return [key, gguf.strings([...value.value.slice(0, -1), "<|endoftext|>"])];
      }
      if (key === "tokenizer.ggml.token_type" && value.type === "array" && value.itemType === "i32") {
        const types = Int32Array.from(value.value);
        types[types.length - 1] = TokenType.CONTROL;
        return [key, gguf.i32s(types)];
      }
      return [key, value];
    }),
  ];
}

const VOCABULARIES: Vocabulary[] = [
  { title: "SmolLM2 byte-level BPE (gpt2, pre smollm)", source: FIXTURES.smollm2Directory, full: true },
  { title: "Qwen3 byte-level BPE (gpt2, pre qwen2)", source: FIXTURES.qwen3Directory, full: true },
  { title: "Llama 2 32k SentencePiece (llama)", source: FIXTURES.llama2Tokenizer, full: true },
  { title: "gpt-oss o200k_harmony byte-level BPE (gpt2, pre gpt-4o)", source: FIXTURES.gptOssDirectory, full: true },
  { title: "Mistral Nemo Tekken byte-level BPE (gpt2, pre tekken)", source: FIXTURES.mistralNemoDirectory, full: true },
  { title: "stories260K.gguf's own 512-token SentencePiece vocabulary", source: FIXTURES.stories260kGguf, existingGguf: true, full: true },
  { title: "Llama 2 vocabulary named as Phi-3 (strip rules by model name)", source: FIXTURES.llama2Tokenizer, full: true, edit: asPhi3 },
  {
    title: "the generator's Gemma 4 vocabulary (gemma4: BPE over SentencePiece-style text, Gemma 3's tokens and merges)",
    source: gemma4TokenizerSourceFiles()[0],
    metadata: () => gemma4TokenizerKeys(),
    full: true,
    spacesAsU2581: true,
    cleansSpaces: true,
  },
  // The pre-tokenizer does not depend on the vocabulary: SmolLM2's tokens under other pre-tokenizers exercise them.
  ...["default", "llama-bpe", "gpt-2", "starcoder", "stablelm2"].map((pre) => ({
    title: `SmolLM2 vocabulary under pre-tokenizer '${pre}'`,
    source: FIXTURES.smollm2Directory,
    pre,
    full: false,
  })),
];

/** Compares two id lists per text; returns readable mismatches (empty when all agree). */
function encodeMismatches(texts: readonly string[], ours: Tokenizer, model: LlamaModel, parseSpecial: boolean): string[] {
  const mismatches: string[] = [];
  for (const text of texts) {
    const expected = model.tokenize(text, parseSpecial);
    const actual = ours.encode(text, { parseSpecial });
    if (actual.length !== expected.length || actual.some((id, i) => id !== expected[i])) {
      mismatches.push(`${JSON.stringify(text).slice(0, 120)}: loom [${actual.join(",")}] llama.cpp [${expected.join(",")}]`);
    }
  }
  return mismatches;
}

for (const vocabulary of VOCABULARIES) {
  const reason = missingFixtureReason(vocabulary.source);
  describe.skipIf(skipOutsideCi(reason))(titled(vocabulary.title, reason), () => {
    let ours: Tokenizer;
    let model: LlamaModel;

    beforeAll(async () => {
      failIfMissing(reason);
      let path = vocabulary.source;
      if (!vocabulary.existingGguf) {
        path = join(directory, `${vocabulary.title.replace(/[^A-Za-z0-9]+/g, "-")}.gguf`);
        const entries = vocabulary.metadata ? vocabulary.metadata() : ggufTokenizerMetadata(vocabulary.source, { pre: vocabulary.pre });
        writeGguf(path, [["general.architecture", gguf.string("llama")], ...(vocabulary.edit ? vocabulary.edit(entries) : entries)], []);
      }
      ours = tokenizerFromGguf(readGgufHeader(path).metadata, path);
      model = await llama.loadModel({ modelPath: path, vocabOnly: true });
    });

    afterAll(async () => {
      await model?.dispose();
    });

    it("encodes the corpus exactly as llama.cpp, special-token parsing off and on", () => {
      expect(encodeMismatches(CORPUS, ours, model, false)).toEqual([]);
      expect(encodeMismatches(CORPUS, ours, model, true)).toEqual([]);
    });

    it("encodes random strings and a 10,000-character prompt exactly as llama.cpp", () => {
      const texts = [...fuzzCorpus(vocabulary.full ? 300 : 150), LONG_PROMPT];
      expect(encodeMismatches(texts, ours, model, false)).toEqual([]);
      expect(encodeMismatches(texts, ours, model, true)).toEqual([]);
    });

    it("decodes ids exactly as llama.cpp's detokenize, with and without special tokens", () => {
      const mismatches: string[] = [];
      for (const text of [...CORPUS, ...fuzzCorpus(vocabulary.full ? 100 : 30, 999)]) {
        const ids = model.tokenize(text, true);
        for (const special of [true, false]) {
          const expected = model.detokenize(ids, special);
          const actual = ours.decode(ids, { skipSpecial: !special });
          if (actual !== expected) mismatches.push(`[${ids.join(",")}] special=${special}: loom ${JSON.stringify(actual)} llama.cpp ${JSON.stringify(expected)}`);
        }
      }
      expect(mismatches).toEqual([]);
    });

    if (!vocabulary.full) return;

    it(`round-trips text through encode and ${vocabulary.cleansSpaces ? "the tokens' pieces" : "decode"}`, () => {
      const failures: string[] = [];
      for (const text of CORPUS) {
        // SentencePiece stores spaces as U+2581, so a literal U+2581 comes back as a space.
        if ((ours.kind === "spm" || vocabulary.spacesAsU2581) && text.includes("\u2581")) continue;
        const ids = ours.encode(text);
        let decoded: string;
        if (vocabulary.cleansSpaces) {
          const stream = ours.createStreamDecoder();
          decoded = ids.map((id) => stream.push(id)).join("") + stream.flush();
        } else {
          decoded = ours.decode(ids);
        }
        if (decoded !== wellFormed(text)) failures.push(`${JSON.stringify(text)} -> ${JSON.stringify(decoded)}`);
      }
      expect(failures).toEqual([]);
    });

    it("agrees with llama.cpp on every token's attributes and end-of-generation status", () => {
      expect(ours.vocabSize).toBe([...model.iterateAllTokens()].length);
      const attributeMismatches: string[] = [];
      const eogMismatches: string[] = [];
      for (let id = 0; id < ours.vocabSize; id++) {
        const expected = native(model).getTokenAttributes(id);
        if (ours.tokenAttributes(id) !== expected) attributeMismatches.push(`${id} ${JSON.stringify(ours.tokenText(id))}: loom ${ours.tokenAttributes(id)} llama.cpp ${expected}`);
        if (ours.isEndOfGeneration(id) !== model.isEogToken(id as Token)) eogMismatches.push(`${id} ${JSON.stringify(ours.tokenText(id))}`);
        if (attributeMismatches.length + eogMismatches.length > 20) break;
      }
      expect(attributeMismatches).toEqual([]);
      expect(eogMismatches).toEqual([]);
      expect(ours.endOfGenerationIds.size).toBeGreaterThan(0);
    });

    it("has llama.cpp's BOS, EOS and add-BOS behaviour", () => {
      // node-llama-cpp reports BOS/EOS only when they are control tokens (Qwen3's default BOS, id 11, is not).
      const control = (id: number | undefined) => (id !== undefined && ours.tokenAttributes(id) & TokenAttribute.CONTROL ? id : -1);
      expect(control(ours.bosId)).toBe(native(model).tokenBos());
      expect(control(ours.eosId)).toBe(native(model).tokenEos());
      expect(ours.addBos).toBe(native(model).shouldPrependBosToken());
      const text = "Hello world";
      const expected = [...(ours.addBos ? [ours.bosId!] : []), ...model.tokenize(text, false)];
      expect(ours.encode(text, { addSpecial: true })).toEqual(expected);
    });
  });
}
