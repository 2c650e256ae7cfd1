// Unit tests on small hand-made vocabularies: SentencePiece merges and byte fallback, byte-level BPE merges, special
// token splitting with strip flags, pre-tokenizer word splits, detokenization clean-ups, end-of-generation heuristics
// and errors. (Real vocabularies are checked against llama.cpp in llama-cpp-conformance.test.ts.)
import { describe, expect, it } from "vitest";
import { ModelFileError } from "../model/errors.js";
import { cleanUpSpaces } from "./detokenize.js";
import { TokenizerInputError } from "./errors.js";
import { tokenizerFromGguf } from "./gguf.js";
import { padVocabulary } from "./gguf-metadata.js";
import { WordSplitter, preTokenizerSpec } from "./pre-tokenizers.js";
import { Tokenizer } from "./tokenizer.js";
import { BYTE_TO_CHAR, byteLevelEncode } from "./unicode.js";
import { TokenAttribute, TokenType, type VocabularySpec } from "./vocabulary.js";

const HEX = (byte: number) => `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`;

/** <unk>, <s>, </s>, 256 byte tokens, then the given pieces with their scores. */
function spmVocabulary(pieces: Array<[string, number]>, options: Partial<VocabularySpec> = {}): VocabularySpec {
  const tokens = ["<unk>", "<s>", "</s>", ...Array.from({ length: 256 }, (_, b) => HEX(b)), ...pieces.map(([text]) => text)];
  const types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL, ...new Array(256).fill(TokenType.BYTE), ...pieces.map(() => TokenType.NORMAL)];
  const scores = [0, 0, 0, ...new Array(256).fill(0), ...pieces.map(([, score]) => score)];
  return { source: "test-spm", model: "llama", tokens, tokenTypes: types, scores, ...options };
}

/** All 256 byte characters, then merged tokens in rank order, then added tokens. */
function bpeVocabulary(merges: string[], added: Array<[string, number]> = [], options: Partial<VocabularySpec> = {}): VocabularySpec {
  const tokens = [...BYTE_TO_CHAR];
  for (const merge of merges) {
    const merged = merge.replace(" ", "");
    if (!tokens.includes(merged)) tokens.push(merged);
  }
  const types = tokens.map(() => TokenType.NORMAL as number);
  for (const [text, type] of added) {
    tokens.push(text);
    types.push(type);
  }
  return { source: "test-bpe", model: "gpt2", pre: "qwen2", tokens, tokenTypes: types, merges, ...options };
}

const id = (tokenizer: Tokenizer, text: string): number => {
  const found = tokenizer.tokenId(text);
  if (found === undefined) throw new Error(`no token ${text}`);
  return found;
};

describe("SentencePiece BPE", () => {
  const tokenizer = new Tokenizer(spmVocabulary([["▁", -1], ["a", -2], ["b", -3], ["ab", -4], ["▁a", -5], ["▁ab", -6], ["aa", -7]]));

  it("merges the highest-scoring pairs and puts a space before the text", () => {
    expect(tokenizer.encode("ab")).toEqual([id(tokenizer, "▁ab")]);
    // "ab" (-4) outscores "▁a" (-5), so each word becomes "▁" + "ab", then "▁ab".
    expect(tokenizer.encode("ab ab")).toEqual([id(tokenizer, "▁ab"), id(tokenizer, "▁ab")]);
  });

  it("breaks score ties towards the leftmost pair", () => {
    const tied = new Tokenizer(spmVocabulary([["a", -1], ["aa", -2]], { addSpacePrefix: false }));
    expect(tied.encode("aaa")).toEqual([id(tied, "aa"), id(tied, "a")]);
  });

  it("falls back to byte tokens for characters the vocabulary lacks", () => {
    expect(tokenizer.encode("é", {})).toEqual([id(tokenizer, "▁"), id(tokenizer, "<0xC3>"), id(tokenizer, "<0xA9>")]);
    expect(tokenizer.decode(tokenizer.encode("aé b"))).toBe("aé b");
  });

  it("adds BOS only when asked and splits control tokens only when parsing special tokens", () => {
    expect(tokenizer.encode("a", { addSpecial: true })).toEqual([1, id(tokenizer, "▁a")]);
    expect(tokenizer.encode("<s>a", { parseSpecial: true })).toEqual([1, id(tokenizer, "▁a")]);
    expect(tokenizer.encode("a<s>a", { parseSpecial: true })).toEqual([id(tokenizer, "▁a"), 1, id(tokenizer, "▁a")]);
    expect(tokenizer.encode("<s>a")).not.toContain(1);
  });

  it("renders pieces: byte tokens as bytes, U+2581 as a space, control tokens only when asked", () => {
    expect([...tokenizer.tokenBytes(id(tokenizer, "<0x0A>"))]).toEqual([10]);
    expect(new TextDecoder().decode(tokenizer.tokenBytes(id(tokenizer, "▁ab")))).toBe(" ab");
    expect(tokenizer.decode([1, id(tokenizer, "▁a")])).toBe("<s> a");
    expect(tokenizer.decode([1, id(tokenizer, "▁a")], { skipSpecial: true })).toBe(" a");
    expect(tokenizer.decode([id(tokenizer, "▁a")])).toBe("a");
    expect(tokenizer.isSpecial(1)).toBe(true);
    expect(tokenizer.isSpecial(id(tokenizer, "a"))).toBe(false);
  });

  it("uses the unknown token where even a byte token is missing, and refuses without one", () => {
    const spec = spmVocabulary([["a", -1]]);
    const noBytes: VocabularySpec = { ...spec, tokens: spec.tokens.map((t, i) => (i >= 3 && i < 259 ? `x${i}` : t)) };
    const withUnk = new Tokenizer(noBytes);
    expect(withUnk.encode("é", { parseSpecial: false })).toContain(0);
    const withoutUnk = new Tokenizer({ ...noBytes, specialIds: { unk: null } });
    expect(() => withoutUnk.encode("é")).toThrow(TokenizerInputError);
  });
});

describe("byte-level BPE", () => {
  const merges = ["a b", "Ġ ab", "ab c", "Ġab c", "Ġ Ġ"];
  const tokenizer = new Tokenizer(bpeVocabulary(merges, [["<|im_end|>", TokenType.CONTROL], ["<tool>", TokenType.USER_DEFINED]]));

  it("applies merges by rank within words", () => {
    expect(tokenizer.encode("abc abc")).toEqual([id(tokenizer, "abc"), id(tokenizer, "Ġabc")]);
    expect(tokenizer.encode("cab")).toEqual([id(tokenizer, "c"), id(tokenizer, "ab")]);
    expect(tokenizer.decode(tokenizer.encode("abc abc"))).toBe("abc abc");
  });

  it("emits a whole-word token without merging when the pre-tokenizer ignores merges", () => {
    const spec = bpeVocabulary(["a b"]);
    const plain = new Tokenizer(spec);
    const ignoring = new Tokenizer({ ...spec, tokens: [...spec.tokens, "bab"], ignoreMerges: true });
    expect(plain.encode("bab")).toEqual([id(plain, "b"), id(plain, "ab")]);
    expect(ignoring.encode("bab")).toEqual([id(ignoring, "bab")]);
  });

  it("splits user-defined tokens always and control tokens only when parsing special tokens", () => {
    const imEnd = id(tokenizer, "<|im_end|>");
    const tool = id(tokenizer, "<tool>");
    expect(tokenizer.encode("a<|im_end|>b<tool>", { parseSpecial: true })).toEqual([id(tokenizer, "a"), imEnd, id(tokenizer, "b"), tool]);
    const plain = tokenizer.encode("a<|im_end|>b<tool>");
    expect(plain).not.toContain(imEnd);
    expect(plain.at(-1)).toBe(tool);
  });

  it("honours lstrip and rstrip on added tokens", () => {
    const spec = bpeVocabulary([], [["<mask>", TokenType.CONTROL]]);
    const mask = spec.tokens.length - 1;
    const strip = new Tokenizer({ ...spec, strip: new Map([[mask, { lstrip: true, rstrip: true }]]) });
    expect(strip.encode("a \t<mask>\n b", { parseSpecial: true })).toEqual([id(strip, "a"), mask, id(strip, "b")]);
    expect(strip.tokenAttributes(mask) & TokenAttribute.LSTRIP).toBeTruthy();
  });

  it("maps byte-level characters back to bytes", () => {
    expect(new TextDecoder().decode(tokenizer.tokenBytes(id(tokenizer, "Ġabc")))).toBe(" abc");
    expect(byteLevelEncode("a b\n")).toBe("aĠbĊ");
  });
});

describe("pre-tokenizers", () => {
  const split = (pre: string, text: string) => new WordSplitter(preTokenizerSpec(pre, "test").regexes).split(text);

  it("split words as llama.cpp's hand-written Llama 3, Qwen 2 and GPT-2 splitters do", () => {
    expect(split("llama-bpe", "Hello 1234567 world's\n\n  x")).toEqual(["Hello", " ", "123", "456", "7", " world", "'s", "\n\n", " ", " x"]);
    expect(split("qwen2", "ab12 c")).toEqual(["ab", "1", "2", " c"]);
    expect(split("gpt-2", "  hello   world!!")).toEqual([" ", " hello", "  ", " world", "!!"]);
    expect(split("llama-bpe", "I'LL don'T")).toEqual(["I", "'LL", " don", "'T"]);
    expect(split("gpt-2", "I'LL")).toEqual(["I", "'", "LL"]);
  });

  it("split with regexes over collapsed text where llama.cpp has no hand-written splitter", () => {
    expect(split("smollm", "abc123 x")).toEqual(["abc", "1", "2", "3", " x"]);
    expect(split("default", "a,b 12345")).toEqual(["a", ",", "b", " ", "123", "45"]);
    expect(split("default", "١٢٣٤")).toEqual(["١٢٣٤"]);
  });

  it("rejects unknown pre-tokenizer names, naming the file", () => {
    expect(() => preTokenizerSpec("no-such-pre", "model.gguf")).toThrow(/model.gguf: pre-tokenizer 'no-such-pre'/);
  });
});

describe("detokenization clean-up (llama.cpp clean_spaces)", () => {
  const clean = (text: string) => new TextDecoder().decode(cleanUpSpaces(new TextEncoder().encode(text)));
  it("drops spaces before punctuation and some contractions, as llama.cpp does", () => {
    expect(clean("Hello , world . Really ? Yes !")).toBe("Hello, world. Really? Yes!");
    expect(clean("it 's we 're I 'm you 've")).toBe("it's we're I'm you've");
    expect(clean("don 't I 'd we 'll")).toBe("don 't I 'd we 'll");
    expect(clean("a ' b")).toBe("a'b");
    expect(clean("")).toBe("");
  });
});

describe("end-of-generation heuristics", () => {
  it("treat <|im_end|>, <|endoftext|> and EOS as end of generation and mark them as control tokens", () => {
    const tokenizer = new Tokenizer(bpeVocabulary(["a b"], [["<|im_end|>", TokenType.NORMAL], ["<|endoftext|>", TokenType.USER_DEFINED]], { specialIds: { eos: 97 } }));
    const imEnd = id(tokenizer, "<|im_end|>");
    const endOfText = id(tokenizer, "<|endoftext|>");
    expect([...tokenizer.endOfGenerationIds].sort((a, b) => a - b)).toEqual([97, imEnd, endOfText]);
    expect(tokenizer.isSpecial(imEnd)).toBe(true);
    expect(tokenizer.eotId).toBe(imEnd);
  });

  it("keep <|end|> as a message end, not a generation end, when <|return|> and <|call|> exist", () => {
    const texts: Array<[string, number]> = ["<|end|>", "<|return|>", "<|call|>"].map((t) => [t, TokenType.CONTROL]);
    const tokenizer = new Tokenizer(bpeVocabulary([], texts));
    expect(tokenizer.isEndOfGeneration(id(tokenizer, "<|end|>"))).toBe(false);
    expect(tokenizer.isEndOfGeneration(id(tokenizer, "<|return|>"))).toBe(true);
  });
});

describe("errors and metadata", () => {
  const tokenizer = new Tokenizer(bpeVocabulary([]));

  it("rejects ids outside the vocabulary, naming the source", () => {
    expect(() => tokenizer.decode([256])).toThrow(TokenizerInputError);
    expect(() => tokenizer.decode([-1])).toThrow(/test-bpe: token id -1 is outside the vocabulary \(0\.\.255\)/);
    expect(() => tokenizer.tokenBytes(1.5)).toThrow(TokenizerInputError);
  });

  it("rejects GGUF metadata without a usable tokenizer, naming the file", () => {
    expect(() => tokenizerFromGguf(new Map(), "m.gguf")).toThrow(ModelFileError);
    expect(() => tokenizerFromGguf(new Map(), "m.gguf")).toThrow(/m.gguf: no tokenizer/);
    const metadata = new Map<string, import("../model/gguf/format.js").GgufValue>([
      ["tokenizer.ggml.model", "bert"],
      ["tokenizer.ggml.tokens", ["a"]],
    ]);
    expect(() => tokenizerFromGguf(metadata, "m.gguf")).toThrow(/tokenizer model 'bert' is not supported/);
    metadata.set("tokenizer.ggml.model", "gpt2");
    expect(() => tokenizerFromGguf(metadata, "m.gguf")).toThrow(/needs merges/);
    metadata.set("tokenizer.ggml.merges", []);
    metadata.set("tokenizer.ggml.tokens", ["a", "a"]);
    // A repeated text is not an error: it maps to its last id, as llama.cpp's token_to_id does.
    expect(tokenizerFromGguf(metadata, "m.gguf").encode("a", { addSpecial: false })).toEqual([1]);
  });

  it("pads a vocabulary with reserved control tokens, skipping texts it already has", () => {
    const spec = bpeVocabulary([], [["<|reserved_special_token_0|>", TokenType.CONTROL]]);
    const padded = padVocabulary(spec, spec.tokens.length + 2);
    expect(padded.tokens.slice(-2)).toEqual(["<|reserved_special_token_1|>", "<|reserved_special_token_2|>"]);
    expect(Array.from(padded.tokenTypes!).slice(-2)).toEqual([TokenType.CONTROL, TokenType.CONTROL]);
    expect(() => padVocabulary(spec, 10)).toThrow(ModelFileError);
    const unused = padVocabulary(spec, spec.tokens.length + 1, "unused");
    expect(unused.tokens.at(-1)).toBe(`[PAD${spec.tokens.length}]`);
    expect(unused.tokenTypes![spec.tokens.length]).toBe(TokenType.UNUSED);
    expect(new Tokenizer(unused).decode([spec.tokens.length])).toBe("");
  });
});
